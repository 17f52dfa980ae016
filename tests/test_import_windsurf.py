"""Windsurf: the one real Cascade transcript (see SOURCES.md). Counts are made from the raw lines."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from format_checks import (
    DATA,
    check_growth,
    check_not_taken_for,
    check_odd_shapes,
    check_reimport_writes_nothing,
    counts,
    everything,
    formats_of,
    imported,
    tool_parts,
)

from foldline.service import Transcripts

LOG = DATA / "windsurf" / "git-ai-project__git-ai" / "windsurf-session-simple.jsonl"
Json = dict[str, Any]


def steps() -> list[Json]:
    return [json.loads(line) for line in LOG.read_text().splitlines() if line.strip()]


def test_the_transcript_matches_the_raw_steps(transcripts: Transcripts) -> None:
    found = steps()
    tools = [d for d in found if d["type"] not in ("user_input", "planner_response")]
    account, workspace, summary = imported(transcripts, [LOG])
    assert summary.skipped == [] and summary.agents == 1
    messages = list(everything(transcripts, account, workspace).values())
    prompts = sum(1 for d in found if d["type"] == "user_input")
    assert counts(messages) == {"prompts": prompts, "calls": len(tools), "outputs": len(tools)}
    parts = tool_parts(messages)
    assert [p.get("toolName", p["type"][5:]) for p in parts] == [d["type"] for d in tools]
    errors = [d for d in tools if d["status"] == "error" or d[d["type"]].get("user_rejected")]
    assert sum(1 for p in parts if p["state"] == "output-error") == len(errors)
    commands = [d["run_command"] for d in tools if d["type"] == "run_command"]
    shown = [p for p in parts if p.get("toolName", p["type"][5:]) == "run_command"]
    assert [p["toolMetadata"]["windsurf"]["exit_code"] for p in shown] == [c["exit_code"] for c in commands]
    said = [p["text"] for m in messages if m["role"] == "assistant" for p in m["parts"] if p["type"] == "text"]
    assert said == [d["planner_response"]["response"] for d in found if d["type"] == "planner_response"]


def test_the_transcript_is_windsurf_and_no_other_file_is() -> None:
    assert formats_of([LOG]) == {str(LOG.resolve()): "windsurf"}
    check_not_taken_for("windsurf")


def test_importing_again_writes_nothing(transcripts: Transcripts) -> None:
    check_reimport_writes_nothing(transcripts, [LOG])


def test_a_grown_transcript_adds_only_what_is_new(transcripts: Transcripts, tmp_path: Path) -> None:
    raw = LOG.read_bytes().splitlines(keepends=True)
    check_growth(transcripts, tmp_path / LOG.name, [b"".join(raw[:end]) for end in (5, 12, len(raw))])


def test_a_transcript_that_breaks_off_imports_what_is_readable(transcripts: Transcripts, tmp_path: Path) -> None:
    raw = LOG.read_bytes()
    log = tmp_path / LOG.name
    log.write_bytes(raw[: len(raw) // 2])
    account, workspace, summary = imported(transcripts, [log])
    assert summary.skipped == [] and counts(list(everything(transcripts, account, workspace).values()))["prompts"] >= 1


def test_fields_of_the_wrong_kind_never_stop_an_import(transcripts: Transcripts, tmp_path: Path) -> None:
    check_odd_shapes(transcripts, LOG, tmp_path)
