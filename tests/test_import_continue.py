"""Continue: the one real CLI session document (see SOURCES.md). Counts are made from the raw
document, not by the importer's code."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from format_checks import (
    DATA,
    agents,
    check_growth,
    check_no_conversation,
    check_not_taken_for,
    check_odd_shapes,
    check_reimport_writes_nothing,
    counts,
    everything,
    formats_of,
    imported,
    tool_parts,
    total_usage,
)

from foldline.service import Transcripts

SESSION = DATA / "continue" / "git-ai-project__git-ai" / "continue-cli-session-simple.json"
Json = dict[str, Any]


def doc() -> Json:
    found: Json = json.loads(SESSION.read_text())
    return found


def test_the_session_matches_the_raw_document(transcripts: Transcripts) -> None:
    d = doc()
    calls = [c for h in d["history"] for c in h["message"].get("toolCalls") or []]
    states = {s["toolCallId"]: s for h in d["history"] for s in h.get("toolCallStates") or []}
    account, workspace, summary = imported(transcripts, [SESSION])
    assert summary.skipped == [] and summary.agents == 1
    messages = list(everything(transcripts, account, workspace).values())
    prompts = [h for h in d["history"] if h["message"]["role"] == "user"]
    done = [c for c in calls if states.get(c["id"], {}).get("status") == "done"]
    assert counts(messages) == {"prompts": len(prompts), "calls": len(calls), "outputs": len(done)}
    for part in tool_parts(messages):
        assert part["output"] == "\n".join(o["content"] for o in states[part["toolCallId"]]["output"])
        call = next(c for c in calls if c["id"] == part["toolCallId"])
        assert part["input"] == json.loads(call["function"]["arguments"])
    usage = d["usage"]
    assert total_usage(messages) == {
        "inputTokens": usage["promptTokens"] + sum(usage["promptTokensDetails"].values()),
        "outputTokens": usage["completionTokens"],
        "cacheReadTokens": usage["promptTokensDetails"]["cachedTokens"],
    }
    (agent,) = agents(transcripts, account, workspace)
    assert agent["title"] == d["title"]


def test_the_session_is_continue_and_no_other_file_is() -> None:
    assert formats_of([SESSION]) == {str(SESSION.resolve()): "continue"}
    check_not_taken_for("continue")


def test_importing_again_writes_nothing(transcripts: Transcripts) -> None:
    check_reimport_writes_nothing(transcripts, [SESSION])


def test_a_rewritten_session_writes_only_what_changed(transcripts: Transcripts, tmp_path: Path) -> None:
    d = doc()
    stages = [json.dumps({**d, "history": d["history"][:end]}, indent=2).encode() for end in (1, 2, 4)]
    check_growth(transcripts, tmp_path / SESSION.name, stages)


def test_a_session_that_breaks_off_imports_what_is_readable(transcripts: Transcripts, tmp_path: Path) -> None:
    raw = json.dumps(doc(), indent=2)
    log = tmp_path / SESSION.name
    log.write_text(raw[: raw.index('"MultiEdit"')])
    account, workspace, summary = imported(transcripts, [log])
    assert summary.skipped == [] and counts(list(everything(transcripts, account, workspace).values()))["calls"] >= 1


def test_fields_of_the_wrong_kind_never_stop_an_import(transcripts: Transcripts, tmp_path: Path) -> None:
    check_odd_shapes(transcripts, SESSION, tmp_path)


def test_a_session_with_no_history_makes_no_agent(transcripts: Transcripts, tmp_path: Path) -> None:
    log = tmp_path / SESSION.name
    log.write_text(json.dumps({**doc(), "history": []}, indent=2))
    check_no_conversation(transcripts, log)
