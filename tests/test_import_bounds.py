"""The bound on one line of a JSONL log (``FOLDLINE_IMPORT_MAX_LINE``): a longer line is skipped,
reported in the summary, and read in pieces (never whole in memory); the rest is imported.

The bound is configured small here (2 MiB), so the long lines are a few MiB, not gigabytes.
"""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import orjson
import pytest

from foldline.importers import import_paths
from foldline.importers.jsonl import PIECE, bounded, read_lines
from foldline.service import Transcripts
from foldline.settings import Settings
from foldline.store import open_store

DATA = Path(__file__).parent / "data" / "transcripts"
CLAUDE_FILE = DATA / "claude-code" / "jnarowski__agentcmd" / "full-session.jsonl"
BOUND = 2 * 2**20


def prompt_line(first: bytes, uuid: str, text: str) -> bytes:
    """A Claude Code prompt line of the session in ``first`` (its first line), holding ``text``."""
    line = orjson.loads(first)
    line.update(uuid=uuid, parentUuid=None, timestamp="2025-10-21T04:00:00.000Z")
    line["message"] = {"role": "user", "content": text}
    return orjson.dumps(line) + b"\n"


def prompts(t: Transcripts, account: str, workspace: str) -> list[str]:
    (agent,) = t.list_agents(account, workspace)["agents"]
    messages = t.messages(account, agent["id"])["messages"]
    return [p.get("text", "") for m in messages if m["role"] == "user" for p in m["parts"] if p["type"] == "text"]


def test_a_line_past_the_bound_is_skipped_and_reported_the_rest_imported(fresh_url: str, tmp_path: Path) -> None:
    raw = CLAUDE_FILE.read_bytes().splitlines(keepends=True)
    too_long = prompt_line(raw[0], "00000000-0000-4000-8000-00000000000a", "TOO-LONG " + "x" * (3 * 2**20))
    kept = prompt_line(raw[0], "00000000-0000-4000-8000-00000000000b", "KEPT-LONG " + "y" * (3 * 2**19))
    assert len(too_long) > BOUND > len(kept) > PIECE  # one skipped, one read twice (longer than a piece)
    log = tmp_path / CLAUDE_FILE.name
    log.write_bytes(b"".join([*raw, too_long, kept]))
    with Transcripts(open_store(fresh_url), settings=Settings(db=fresh_url, import_max_line=BOUND)) as t:
        account = t.create_account("bounded")["id"]
        workspace = t.create_workspace("bounded", [account])["id"]
        summary = import_paths(t, [log], account_id=account, workspace_id=workspace)
        assert summary.agents == 1
        ((path, reason),) = summary.skipped
        assert path == str(log.resolve())
        said = f"line {len(raw) + 1} is {len(too_long) - 1:,} bytes, longer than the bound of {BOUND:,}"
        assert reason.startswith(said)
        texts = prompts(t, account, workspace)
        assert any(text.startswith("KEPT-LONG yyy") for text in texts)
        assert not any("TOO-LONG" in text for text in texts)
        # the original prompts are all there
        assert sum(1 for text in texts if not text.startswith("KEPT-LONG")) == len(
            [line for line in map(orjson.loads, raw) if line["type"] == "user"
             and isinstance(line["message"]["content"], str)]  # fmt: skip
        )
        # imported again: up to date, and the long line is not read into anything
        again = import_paths(t, [log], account_id=account, workspace_id=workspace)
        assert again.messages == 0


def test_a_long_line_is_read_in_pieces(tmp_path: Path) -> None:
    """A 24 MiB line under a 1 MiB bound costs a few pieces of memory (the one read, the one before
    it, the reader's own), not the line."""
    log = tmp_path / "long.jsonl"
    with log.open("wb") as f:
        f.write(b'{"n": 1}\n')
        f.write(b'{"big": "' + b"z" * (24 * 2**20) + b'"}\n')
        f.write(b'{"n": 3}\n{"n": 4}')  # the last line has no line break
    tracemalloc.start()
    try:
        with bounded(2**20) as bound:
            found = list(read_lines(log))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert found == [{"n": 1}, {"n": 3}, {"n": 4}]
    assert [(long.number, long.size) for long in bound.long.values()] == [(2, 24 * 2**20 + 11)]
    assert peak < 4 * PIECE, f"reading the long line took {peak:,} bytes"  # a few pieces, not 24


def test_a_line_within_the_bound_is_read_whole(tmp_path: Path) -> None:
    log = tmp_path / "lines.jsonl"
    big = {"big": "q" * (5 * PIECE // 2)}
    log.write_bytes(b'{"n": 1}\r\n' + orjson.dumps(big) + b"\n" + b'{"n": 3}\n')
    with bounded(3 * PIECE) as bound:
        assert list(read_lines(log)) == [{"n": 1}, big, {"n": 3}]
    assert bound.long == {}


def test_the_bound_is_a_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings().import_max_line == 256 * 2**20
    monkeypatch.setenv("FOLDLINE_IMPORT_MAX_LINE", "1048576")
    assert Settings().import_max_line == 2**20
    monkeypatch.setenv("FOLDLINE_IMPORT_MAX_LINE", "0")
    with pytest.raises(ValueError, match="FOLDLINE_IMPORT_MAX_LINE"):
        Settings()
