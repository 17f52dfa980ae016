"""Go opencode: the real SQLite stores with their WAL, trimmed (see SOURCES.md).

Counts are made here from the raw rows (a copy of the db and its WAL opened with sqlite3), not by
the importer's code. The Crush tests (test_import_crush.py) check the same reading on Crush's stores.
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
from format_checks import (
    DATA,
    ENDED,
    agents,
    check_not_taken_for,
    check_reimport_writes_nothing,
    counts,
    everything,
    formats_of,
    imported,
    tool_parts,
    total_usage,
)
from store_checks import children, copy_store, parts_of, raw_counts, raw_rows, roots, snapshot

from foldline.importers import import_paths
from foldline.importers.detect import find_groups
from foldline.service import Transcripts

FLAG_RS = DATA / "opencode" / "navicore__flag-rs" / ".opencode" / "opencode.db"
NOORA = DATA / "opencode" / "tuist__Noora" / ".opencode" / "opencode.db"
STORES = [FLAG_RS, NOORA]


def stored_by_session(t: Transcripts, account: str, workspace: str) -> dict[str, list[dict]]:
    """Each agent's own messages, by the title it shows."""
    return {a["id"]: list(t.messages(account, a["id"])["messages"]) for a in agents(t, account, workspace)}


@pytest.mark.parametrize("db", STORES, ids=lambda p: p.parent.parent.name)
def test_every_session_matches_the_raw_rows(transcripts: Transcripts, db: Path, tmp_path: Path) -> None:
    sessions, messages = raw_rows(db, tmp_path)
    account, workspace, summary = imported(transcripts, [db])
    assert summary.skipped == [] and summary.agents == len(roots(sessions, messages))
    found = list(everything(transcripts, account, workspace).values())
    every = {m["session_id"] for m in messages}
    assert counts(found) == raw_counts(sessions, messages, every)
    assert all(m["metadata"]["source"] == "opencode" for m in found)
    used = [s for s in sessions.values() if s["id"] in every]
    assert total_usage(found)["inputTokens"] == sum(s["prompt_tokens"] for s in used)
    assert total_usage(found)["outputTokens"] == sum(s["completion_tokens"] for s in used)
    models = {m["model"] for m in messages if m["role"] == "assistant" and m["model"]}
    assert {m["metadata"].get("model") for m in found if m["role"] == "assistant"} <= models | {None}


def test_the_wal_is_read_and_never_checkpointed(transcripts: Transcripts, tmp_path: Path) -> None:
    db = copy_store(NOORA, tmp_path / "store")
    before = snapshot(db.parent)
    only_db = sqlite3.connect(f"file:{NOORA}?immutable=1", uri=True)  # the db alone, without its WAL
    assert only_db.execute("SELECT count(*) FROM sessions").fetchone() == (1,)
    only_db.close()
    account, workspace, summary = imported(transcripts, [db.parent])
    assert summary.agents == 4  # three of them exist only in the WAL
    assert snapshot(db.parent) == before  # the db and its WAL as the agent left them, nothing added


def test_a_subagent_is_the_conversation_under_the_call_that_ran_it(transcripts: Transcripts, tmp_path: Path) -> None:
    sessions, messages = raw_rows(FLAG_RS, tmp_path)
    (parent,) = [sid for sid in roots(sessions, messages) if children(sessions, sid)]
    kids = children(sessions, parent)
    assert len(kids) == 2
    account, workspace, _ = imported(transcripts, [FLAG_RS])
    (agent,) = [a for a in agents(transcripts, account, workspace) if transcripts.agent(account, a["id"])["subagents"]]
    assert set(transcripts.agent(account, agent["id"])["subagents"]) == kids
    calls = {p["toolCallId"] for p in tool_parts(transcripts.messages(account, agent["id"])["messages"])}
    assert kids <= calls  # each child's id is the id of the `agent` call in its parent
    for kid in kids:
        below = transcripts.messages(account, agent["id"], call=kid)["messages"]
        assert counts(below) == raw_counts(sessions, messages, {kid})
    assert agent["title"] == sessions[parent]["title"]


def test_a_call_cut_off_gets_the_unknown_outcome(transcripts: Transcripts, tmp_path: Path) -> None:
    sessions, messages = raw_rows(NOORA, tmp_path)
    cut = [c["id"] for c in parts_of(messages, "tool_call") if c["finished"] is False]
    assert cut
    account, workspace, _ = imported(transcripts, [NOORA])
    parts = {p["toolCallId"]: p for p in tool_parts(list(everything(transcripts, account, workspace).values()))}
    results = {r["tool_call_id"] for r in parts_of(messages, "tool_result")}
    for call in cut:
        if call not in results:
            assert parts[call]["state"] == "output-error" and ENDED in parts[call]["errorText"]
    assert not [p for p in parts.values() if p["state"] == "input-available"]


def test_times_are_told_by_their_unit(transcripts: Transcripts, tmp_path: Path) -> None:
    sessions, messages = raw_rows(FLAG_RS, tmp_path)
    first = min(m["created_at"] for m in messages)  # Unix seconds
    account, workspace, _ = imported(transcripts, [FLAG_RS])
    created = min(a["created_at"] for a in agents(transcripts, account, workspace))
    from datetime import UTC, datetime

    assert created == datetime.fromtimestamp(first, UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    _, noora = raw_rows(NOORA, tmp_path / "n")
    account, workspace, _ = imported(transcripts, [NOORA], "noora")
    assert min(a["created_at"] for a in agents(transcripts, account, workspace)) == min(
        m["created_at"] for m in noora
    ).replace("000Z", "Z")  # ISO text with microseconds, in the oldest schema


def test_every_store_is_opencode_and_no_other_file_is(tmp_path: Path) -> None:
    found = formats_of(STORES)
    assert {found[str(p.resolve())] for p in STORES} == {"opencode"}
    assert found[str(FLAG_RS.resolve()) + "-wal"] == "opencode"  # the WAL belongs to the store's sessions
    check_not_taken_for("opencode")
    other = tmp_path / "other.db"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE sessions (id TEXT, title TEXT)")
    conn.close()
    groups, skipped = find_groups([other])
    assert groups == [] and skipped == [(str(other.resolve()), "not a session log of a known agent")]


def test_importing_again_writes_nothing(transcripts: Transcripts) -> None:
    check_reimport_writes_nothing(transcripts, STORES)


def test_rows_the_agent_adds_while_it_runs_add_only_what_is_new(transcripts: Transcripts, tmp_path: Path) -> None:
    sessions, messages = raw_rows(FLAG_RS, tmp_path)
    db = copy_store(FLAG_RS, tmp_path / "live")
    agent = sqlite3.connect(db, isolation_level=None)  # the agent, running: it holds the store open
    agent.execute("PRAGMA wal_autocheckpoint = 0")
    (last,) = agent.execute(
        "SELECT id FROM messages WHERE role = 'assistant' AND parts LIKE '%\"type\":\"text\"%'"
        " ORDER BY created_at DESC, rowid DESC LIMIT 1"
    ).fetchone()
    row = agent.execute("SELECT * FROM messages WHERE id = ?", (last,)).fetchone()
    agent.execute("DELETE FROM messages WHERE id = ?", (last,))
    account, workspace, first = imported(transcripts, [db])
    before = everything(transcripts, account, workspace)
    agent.execute("INSERT INTO messages VALUES (" + ",".join("?" * len(row)) + ")", row)
    grown = import_paths(transcripts, [db], account_id=account, workspace_id=workspace)
    after = everything(transcripts, account, workspace)
    changed = [mid for mid, m in after.items() if before.get(mid) != m]
    assert grown.messages == len(changed) and 1 <= len(changed) <= 3  # the new row (and the usage's move)
    assert len(after) == len(before) + 1
    agent.close()
    assert first.agents == len(roots(sessions, messages))


def test_a_wal_that_breaks_off_imports_what_is_readable(transcripts: Transcripts, tmp_path: Path) -> None:
    db = copy_store(NOORA, tmp_path / "torn")
    wal = db.with_name(db.name + "-wal")
    wal.write_bytes(wal.read_bytes()[: wal.stat().st_size // 2])
    account, workspace, summary = imported(transcripts, [db])
    assert summary.skipped == [] and 1 <= summary.agents <= 4
    shutil.rmtree(tmp_path / "torn")
