"""Cursor: the real agent transcript (see SOURCES.md). It has no ids, times or results.

Counts are made here from the raw file, not by the importer's code.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import orjson
import pytest
from format_checks import (
    DATA,
    agents,
    check_growth,
    check_not_taken_for,
    check_odd_shapes,
    check_reimport_writes_nothing,
    counts,
    formats_of,
    imported,
    tool_parts,
)

from foldline.service import Transcripts

CURSOR = DATA / "cursor" / "git-ai-project__git-ai"
LOG = CURSOR / "cursor-session-simple.jsonl"
ENDED = "the turn ended before this tool returned"
Json = dict[str, Any]


def lines(path: Path) -> list[Json]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def stored(t: Transcripts, account: str, workspace: str) -> list[Json]:
    (agent,) = agents(t, account, workspace)
    return list(t.messages(account, agent["id"])["messages"])


def test_messages_and_calls_match_the_raw_file(transcripts: Transcripts, tmp_path: Path) -> None:
    raw = lines(LOG)
    log = tmp_path / "0b7f3c1e-1a2b-4c5d-8e9f-0a1b2c3d4e5f.jsonl"
    log.write_bytes(LOG.read_bytes())
    old = time.time() - 3600
    os.utime(log, (old, old))  # a session that ended an hour ago
    account, workspace, summary = imported(transcripts, [log])
    assert summary.skipped == [] and summary.agents == 1
    messages = stored(transcripts, account, workspace)
    assert [m["role"] for m in messages] == [d["role"] for d in raw]
    blocks = [b for d in raw for b in d["message"]["content"]]
    calls = [b for b in blocks if b["type"] == "tool_use"]
    assert counts(messages) == {"prompts": 1, "calls": len(calls), "outputs": 0}
    parts = tool_parts(messages)
    assert [p["input"] for p in parts] == [c["input"] for c in calls]
    assert all(p["state"] == "output-error" and ENDED in p["errorText"] for p in parts)  # never "running"
    prompt = raw[0]["message"]["content"][0]["text"]
    assert messages[0]["parts"][0]["text"] == prompt.removeprefix("<user_query>\n").removesuffix("\n</user_query>")
    said = [b["text"] for d in raw[1:] for b in d["message"]["content"] if b["type"] == "text"]
    assert [p["text"] for m in messages[1:] for p in m["parts"] if p["type"] == "text"] == said
    (agent,) = agents(transcripts, account, workspace)
    assert agent["title"] == "Generate a file with all the HBO shows from the 90's in it"


def test_the_file_is_cursor_and_no_other_file_is() -> None:
    assert formats_of([CURSOR]) == {str(LOG.resolve()): "cursor"}
    check_not_taken_for("cursor")


def test_importing_again_writes_nothing(transcripts: Transcripts) -> None:
    check_reimport_writes_nothing(transcripts, [CURSOR])


def test_a_grown_transcript_adds_only_what_is_new(transcripts: Transcripts, tmp_path: Path) -> None:
    raw = LOG.read_bytes().splitlines(keepends=True)
    check_growth(transcripts, tmp_path / "0b7f3c1e.jsonl", [b"".join(raw[:5]), b"".join(raw)])


def test_a_transcript_that_breaks_off_imports_what_is_readable(transcripts: Transcripts, tmp_path: Path) -> None:
    raw = LOG.read_bytes()
    log = tmp_path / "0b7f3c1e.jsonl"
    log.write_bytes(raw[: len(raw) - 100])
    account, workspace, summary = imported(transcripts, [log])
    assert summary.skipped == []
    assert len(stored(transcripts, account, workspace)) == len(lines(LOG)) - 1


@pytest.mark.parametrize("path", [LOG], ids=lambda p: p.name)
def test_fields_of_the_wrong_kind_never_stop_an_import(transcripts: Transcripts, path: Path, tmp_path: Path) -> None:
    check_odd_shapes(transcripts, path, tmp_path)
