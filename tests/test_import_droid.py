"""Factory Droid: the real session and its settings file (see SOURCES.md). Counts are made from
the raw lines, the model and tokens from the settings file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from format_checks import (
    DATA,
    agents,
    check_growth,
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

DROID = DATA / "droid" / "git-ai-project__git-ai"
SESSION = DROID / "droid-session.jsonl"
SETTINGS = DROID / "droid-session.settings.json"
Json = dict[str, Any]


def blocks(kind: str) -> list[Json]:
    found = [json.loads(line) for line in SESSION.read_text().splitlines()]
    return [b for d in found if d["type"] == "message" for b in d["message"]["content"] if b["type"] == kind]


def test_the_session_matches_the_raw_file(transcripts: Transcripts) -> None:
    found = [json.loads(line) for line in SESSION.read_text().splitlines()]
    prompts = [d for d in found if d["type"] == "message" and d["message"]["role"] == "user"
               and any(b["type"] == "text" for b in d["message"]["content"])]  # fmt: skip
    calls = {b["id"] for b in blocks("tool_use")}
    results = {b["tool_use_id"]: b["content"] for b in blocks("tool_result")}
    account, workspace, summary = imported(transcripts, [SESSION])
    assert summary.skipped == [] and summary.agents == 1
    messages = list(everything(transcripts, account, workspace).values())
    assert counts(messages) == {"prompts": len(prompts), "calls": len(calls), "outputs": len(calls & set(results))}
    assert {p["toolCallId"]: p["output"] for p in tool_parts(messages)} == results
    settings = json.loads(SETTINGS.read_text())
    assert {m["metadata"]["model"] for m in messages if m["role"] == "assistant"} == {settings["model"]}
    tokens = settings["tokenUsage"]
    assert total_usage(messages) == {
        "inputTokens": tokens["inputTokens"] + tokens["cacheReadTokens"] + tokens["cacheCreationTokens"],
        "outputTokens": tokens["outputTokens"], "cacheReadTokens": tokens["cacheReadTokens"],
    }  # fmt: skip
    (agent,) = agents(transcripts, account, workspace)
    assert agent["title"] == found[0]["title"]


def test_the_log_and_its_settings_are_one_droid_session_and_no_other_file_is(tmp_path: Path) -> None:
    assert formats_of([DROID]) == {str(SESSION.resolve()): "droid", str(SETTINGS.resolve()): "droid"}
    assert formats_of([SETTINGS]) == formats_of([DROID])
    check_not_taken_for("droid")


def test_importing_again_writes_nothing(transcripts: Transcripts) -> None:
    check_reimport_writes_nothing(transcripts, [DROID])


def test_a_grown_session_adds_only_what_is_new(transcripts: Transcripts, tmp_path: Path) -> None:
    raw = SESSION.read_bytes().splitlines(keepends=True)
    stages = [b"".join(raw[:end]) for end in (3, 6, 9, len(raw))]
    check_growth(transcripts, tmp_path / SESSION.name, stages)


def test_a_session_that_breaks_off_imports_what_is_readable(transcripts: Transcripts, tmp_path: Path) -> None:
    log = tmp_path / SESSION.name
    raw = SESSION.read_bytes()
    log.write_bytes(raw[: raw.index(b'"id":"fb0e4cfc') + 30])
    shutil.copyfile(SETTINGS, tmp_path / SETTINGS.name)
    account, workspace, summary = imported(transcripts, [log])
    assert summary.skipped == [] and counts(list(everything(transcripts, account, workspace).values()))["calls"] == 2


def test_fields_of_the_wrong_kind_never_stop_an_import(transcripts: Transcripts, tmp_path: Path) -> None:
    check_odd_shapes(transcripts, SESSION, tmp_path)
