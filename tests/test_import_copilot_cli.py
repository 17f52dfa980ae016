"""GitHub Copilot CLI: the real ``events.jsonl`` streams (Entire checkpoints named ``full.jsonl``, see SOURCES.md).

Counts are made here from the raw events, not by the importer's code.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from format_checks import (
    DATA,
    PIXEL,
    agents,
    check_growth,
    check_image_is_a_file_part,
    check_no_conversation,
    check_not_taken_for,
    check_odd_shapes,
    check_reimport_writes_nothing,
    counts,
    formats_of,
    imported,
    tool_parts,
    total_usage,
)

from foldline.service import Transcripts

COPILOT = DATA / "copilot-cli" / "EntityProcess__agentv"
LOGS = sorted(COPILOT.rglob("full.jsonl"))
LONG = COPILOT / "26" / "9e1b9e5502" / "0" / "full.jsonl"
Json = dict[str, Any]


def events(path: Path) -> list[Json]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def raw_counts(found: list[Json]) -> Json:
    calls = {r["toolCallId"] for e in found if e["type"] == "assistant.message" for r in e["data"]["toolRequests"]}
    calls |= {e["data"]["toolCallId"] for e in found if e["type"] == "tool.execution_start"}
    done = {e["data"]["toolCallId"] for e in found if e["type"] == "tool.execution_complete"}
    prompts = sum(e["type"] == "user.message" for e in found)
    return {"prompts": prompts, "calls": len(calls), "outputs": len(done & calls)}


def raw_usage(found: list[Json]) -> Json:
    shutdowns = [e["data"]["modelMetrics"] for e in found if e["type"] == "session.shutdown"]
    if not shutdowns:
        out = sum(e["data"].get("outputTokens", 0) for e in found if e["type"] == "assistant.message")
        return {"inputTokens": 0, "outputTokens": out, "cacheReadTokens": 0}
    usages = [m["usage"] for metrics in shutdowns for m in metrics.values()]
    return {
        "inputTokens": sum(u["inputTokens"] for u in usages),
        "outputTokens": sum(u["outputTokens"] for u in usages),
        "cacheReadTokens": sum(u["cacheReadTokens"] for u in usages),
    }


def stored(t: Transcripts, account: str, workspace: str) -> list[Json]:
    (agent,) = agents(t, account, workspace)
    return list(t.messages(account, agent["id"])["messages"])


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.parts[-4])
def test_counts_and_usage_match_the_raw_events(transcripts: Transcripts, path: Path) -> None:
    found = events(path)
    account, workspace, summary = imported(transcripts, [path])
    assert summary.skipped == [] and summary.agents == 1
    messages = stored(transcripts, account, workspace)
    assert counts(messages) == raw_counts(found)
    assert total_usage(messages) == raw_usage(found)
    start = next(e for e in found if e["type"] == "session.start")
    (agent,) = agents(transcripts, account, workspace)
    assert agent["created_at"] == start["timestamp"]
    assert messages[0]["metadata"]["version"] == start["data"]["copilotVersion"]
    typed = [e["data"]["content"] for e in found if e["type"] == "user.message"]
    assert [p["text"] for m in messages if m["role"] == "user" for p in m["parts"]] == typed


def test_outputs_and_the_failed_call_are_what_the_model_saw(transcripts: Transcripts) -> None:
    found = events(LONG)
    account, workspace, _ = imported(transcripts, [LONG])
    parts = {p["toolCallId"]: p for p in tool_parts(stored(transcripts, account, workspace))}
    for e in found:
        if e["type"] != "tool.execution_complete":
            continue
        part = parts[e["data"]["toolCallId"]]
        if e["data"]["success"]:
            assert (part["state"], part["output"]) == ("output-available", e["data"]["result"]["content"])
        else:
            assert (part["state"], part["errorText"]) == ("output-error", e["data"]["error"]["message"])
    reasoning = [e["data"]["reasoningText"] for e in found if e["type"] == "assistant.message"
                 and e["data"].get("reasoningText", "").strip()]  # fmt: skip
    shown = [p["text"] for m in stored(transcripts, account, workspace) for p in m["parts"] if p["type"] == "reasoning"]
    assert shown == reasoning
    assert "REDACTED/pHIq" not in orjson.dumps(shown).decode()  # the opaque reasoning is never shown


def test_every_real_file_is_copilot_cli_and_no_other_file_is() -> None:
    assert set(formats_of([COPILOT]).values()) == {"copilot-cli"} and len(formats_of([COPILOT])) == len(LOGS)
    check_not_taken_for("copilot-cli")


def test_importing_again_writes_nothing(transcripts: Transcripts) -> None:
    check_reimport_writes_nothing(transcripts, LOGS)


def test_a_grown_log_adds_only_what_is_new(transcripts: Transcripts, tmp_path: Path) -> None:
    lines = LONG.read_bytes().splitlines(keepends=True)
    stages = [b"".join(lines[:200]), b"".join(lines[:400]), b"".join(lines)]
    (tmp_path / "abc").mkdir()
    check_growth(transcripts, tmp_path / "abc" / "events.jsonl", stages)


def test_a_log_that_breaks_off_imports_what_is_readable(transcripts: Transcripts, tmp_path: Path) -> None:
    raw = LONG.read_bytes()
    torn = raw[: len(raw) // 2]
    log = tmp_path / "events.jsonl"
    log.write_bytes(torn)
    whole = [orjson.loads(line) for line in torn.splitlines()[:-1]]
    account, workspace, summary = imported(transcripts, [log])
    assert summary.skipped == []
    assert counts(stored(transcripts, account, workspace)) == raw_counts(whole)


def test_a_subagents_events_are_under_the_call_that_started_it(transcripts: Transcripts, tmp_path: Path) -> None:
    found = events(LONG)
    call = next(e for e in found if e["type"] == "assistant.message" and e["data"]["toolRequests"])
    call_id = call["data"]["toolRequests"][0]["toolCallId"]
    asked = [e for e in found if e["type"] == "assistant.message" and e["data"]["toolRequests"]][5:7]
    ids = {r["toolCallId"] for e in asked for r in e["data"]["toolRequests"]}
    child = [*asked, *(e for e in found if e["type"].startswith("tool.") and e["data"]["toolCallId"] in ids)]
    started = {"type": "subagent.started", "id": "s-1", "timestamp": call["timestamp"], "parentId": call["id"],
               "data": {"toolCallId": call_id, "agentName": "explore"}}  # fmt: skip
    moved = []
    for e in child:
        copy = orjson.loads(orjson.dumps(e))
        copy["agentId"], copy["id"] = "explore-1", "child-" + e["id"]
        moved.append(copy)
    rest = [e for e in found if e not in child]
    at = rest.index(call) + 1
    log = tmp_path / "events.jsonl"
    log.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in [*rest[:at], started, *moved, *rest[at:]]))
    account, workspace, summary = imported(transcripts, [log])
    assert summary.skipped == []
    (agent,) = agents(transcripts, account, workspace)
    assert transcripts.agent(account, agent["id"])["subagents"] == [call_id]
    sub = transcripts.messages(account, agent["id"], call=call_id)["messages"]
    assert counts(sub) == {**raw_counts(moved), "prompts": 0}
    assert counts(transcripts.messages(account, agent["id"])["messages"]) == raw_counts(rest)


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.parts[-4])
def test_fields_of_the_wrong_kind_never_stop_an_import(transcripts: Transcripts, path: Path, tmp_path: Path) -> None:
    check_odd_shapes(transcripts, path, tmp_path)


def test_an_attached_image_is_a_file_part_and_a_file_its_name(transcripts: Transcripts, tmp_path: Path) -> None:
    found = events(COPILOT / "db" / "325365b92c" / "1" / "full.jsonl")
    prompt = next(e for e in found if e["type"] == "user.message")
    prompt["data"]["attachments"] = [
        {"type": "blob", "data": PIXEL, "mimeType": "image/png", "displayName": "shot.png"},
        {"type": "file", "path": "/home/dev/notes.md", "displayName": "notes.md"},
    ]
    log = tmp_path / "events.jsonl"
    log.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in found))
    account, workspace, _ = imported(transcripts, [log])
    messages = stored(transcripts, account, workspace)
    check_image_is_a_file_part(messages)
    assert messages[0]["metadata"]["attachments"] == ["notes.md"]


def test_a_session_that_only_started_makes_no_agent(transcripts: Transcripts, tmp_path: Path) -> None:
    started = [e for e in events(LONG) if e["type"] in ("session.start", "session.model_change", "system.message")]
    log = tmp_path / "events.jsonl"
    log.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in started))
    check_no_conversation(transcripts, log)
