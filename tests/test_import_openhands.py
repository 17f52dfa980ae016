"""OpenHands: the real trajectories and evaluation output (see SOURCES.md); the event stream
(one event a file) is made here from a trajectory, as OpenHands's file store keeps it.

Counts are made here from the raw events, not by the importer's code.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from format_checks import (
    DATA,
    PIXEL,
    agents,
    check_image_is_a_file_part,
    check_not_taken_for,
    check_odd_shapes,
    check_reimport_writes_nothing,
    counts,
    everything,
    formats_of,
    imported,
    tool_parts,
)

from foldline.importers import import_paths
from foldline.service import Transcripts

OPENHANDS = DATA / "openhands" / "All-Hands-AI__OpenHands"
GUI = OPENHANDS / "trajs" / "basic_gui_mode.json"
CHAT = OPENHANDS / "trajs" / "basic_interactions.json"
EVAL = OPENHANDS / "output.jsonl"
Json = dict[str, Any]


def raw_counts(events: list[Json]) -> Json:
    calls = {e["id"] for e in events if e.get("source") == "agent" and "action" in e and e.get("tool_call_metadata")}
    answered = {e.get("cause") for e in events if "observation" in e}
    prompts = [e for e in events if e.get("source") == "user" and e.get("action") == "message"]
    return {"prompts": len(prompts), "calls": len(calls), "outputs": len(calls & answered)}


def responses(events: list[Json]) -> dict[str, Json]:
    """Each model response once, by id (OpenHands repeats it on every action and observation)."""
    found = {}
    for e in events:
        response = (e.get("tool_call_metadata") or {}).get("model_response")
        if response and "action" in e:
            found[response["id"]] = response
    return found


def stored(t: Transcripts, account: str, workspace: str) -> list[Json]:
    return list(everything(t, account, workspace).values())


def event_stream(events: list[Json], folder: Path) -> Path:
    """The events as OpenHands's file store keeps them: ``sessions/<sid>/events/<id>.json``."""
    where = folder / "sessions" / "3c2d1e0f9a8b" / "events"
    where.mkdir(parents=True)
    for e in events:
        (where / f"{e['id']}.json").write_text(json.dumps(e))
    return where


@pytest.mark.parametrize("log", [GUI, CHAT], ids=lambda p: p.name)
def test_a_trajectory_matches_the_raw_events(transcripts: Transcripts, log: Path) -> None:
    events = json.loads(log.read_text())
    account, workspace, summary = imported(transcripts, [log])
    assert summary.skipped == [] and summary.agents == 1
    messages = stored(transcripts, account, workspace)
    assert counts(messages) == raw_counts(events)
    replies = [m for m in messages if m["role"] == "assistant"]
    made = responses(events)
    assert sum(m["metadata"].get("usage", {}).get("outputTokens", 0) for m in replies) == sum(
        r["usage"]["completion_tokens"] for r in made.values()
    )
    assert {m["metadata"].get("model") for m in replies if "usage" in m["metadata"]} == {
        r["model"] for r in made.values()
    } or not made
    thoughts = [e["args"]["thought"] for e in events if (e.get("args") or {}).get("thought")]
    texts = [p["text"] for m in replies for p in m["parts"] if p["type"] == "text"]
    assert all(t in texts for t in thoughts)
    assert agents(transcripts, account, workspace)[0]["created_at"] == events[0]["timestamp"][:23] + "Z"


def test_outputs_and_exit_codes_come_from_the_observation_of_each_action(transcripts: Transcripts) -> None:
    events = json.loads(GUI.read_text())
    account, workspace, _ = imported(transcripts, [GUI])
    parts = {p["toolCallId"]: p for p in tool_parts(stored(transcripts, account, workspace))}
    by_id = {e["id"]: e for e in events}
    for e in events:
        if "observation" in e and e.get("cause") in by_id and by_id[e["cause"]].get("tool_call_metadata"):
            part = parts[by_id[e["cause"]]["tool_call_metadata"]["tool_call_id"]]
            assert part["output"] == e["content"]
            code = ((e.get("extras") or {}).get("metadata") or {}).get("exit_code")
            assert part.get("toolMetadata", {}).get("openhands", {}).get("exit_code") == code


def test_each_evaluation_run_is_a_session(transcripts: Transcripts) -> None:
    runs = [json.loads(line) for line in EVAL.read_text().splitlines()]
    account, workspace, summary = imported(transcripts, [EVAL])
    assert summary.skipped == [] and summary.agents == len(runs)
    for agent in agents(transcripts, account, workspace):
        messages = list(transcripts.messages(account, agent["id"])["messages"])
        (run,) = [r for r in runs if messages[1]["parts"][0]["text"] == r["instruction"]]
        assert counts(messages) == raw_counts(run["history"])
        assert messages[0]["role"] == "system"  # the system prompt
        errors = [m for m in messages if m["metadata"].get("lineType") == "error"]
        assert [p["text"] for m in errors for p in m["parts"]][-1:] == ([run["error"]] if run["error"] else [])


def test_an_event_stream_reads_as_its_trajectory_and_grows(transcripts: Transcripts, tmp_path: Path) -> None:
    events = json.loads(GUI.read_text())
    folder = event_stream(events[:9], tmp_path / "store")
    account, workspace, first = imported(transcripts, [tmp_path / "store"])
    assert first.agents == 1
    for e in events[9:]:
        (folder / f"{e['id']}.json").write_text(json.dumps(e))
    grown = import_paths(transcripts, [tmp_path / "store"], account_id=account, workspace_id=workspace)
    messages = stored(transcripts, account, workspace)
    assert counts(messages) == raw_counts(events)
    assert 0 < grown.messages < len(messages) + 1
    (agent,) = agents(transcripts, account, workspace)
    assert agent["created_at"] == events[0]["timestamp"][:23] + "Z"


def test_every_log_is_openhands_and_no_other_file_is(tmp_path: Path) -> None:
    found = formats_of([GUI, CHAT, EVAL])
    assert set(found.values()) == {"openhands"} and len(found) == 3
    folder = event_stream(json.loads(GUI.read_text()), tmp_path)
    found = formats_of([folder])
    assert set(found.values()) == {"openhands"} and len(found) == len(list(folder.iterdir()))
    check_not_taken_for("openhands")


def test_importing_again_writes_nothing(transcripts: Transcripts) -> None:
    check_reimport_writes_nothing(transcripts, [OPENHANDS])


def test_a_trajectory_that_breaks_off_imports_what_is_readable(transcripts: Transcripts, tmp_path: Path) -> None:
    events = json.loads(GUI.read_text())
    raw = json.dumps(events, indent=2)
    log = tmp_path / GUI.name
    log.write_text(raw[: raw.index('"id": 13,')])
    account, workspace, summary = imported(transcripts, [log])
    assert summary.skipped == [] and summary.agents == 1
    assert counts(stored(transcripts, account, workspace))["calls"] == raw_counts(events[:13])["calls"]


@pytest.mark.parametrize("path", [GUI, EVAL], ids=lambda p: p.name)
def test_fields_of_the_wrong_kind_never_stop_an_import(transcripts: Transcripts, path: Path, tmp_path: Path) -> None:
    check_odd_shapes(transcripts, path, tmp_path)


def test_an_attached_image_is_a_file_part(transcripts: Transcripts, tmp_path: Path) -> None:
    events = json.loads(CHAT.read_text())
    events[0]["args"]["image_urls"] = [f"data:image/png;base64,{PIXEL}"]
    log = tmp_path / CHAT.name
    log.write_text(json.dumps(events))
    account, workspace, _ = imported(transcripts, [log])
    check_image_is_a_file_part(stored(transcripts, account, workspace))
