"""Crush: the real SQLite stores, trimmed (see SOURCES.md); their upstream WAL was not kept, so
the WAL cases are made here by writing to a copy, as Crush does while it runs.

Counts are made here from the raw rows (a copy of the db and its WAL opened with sqlite3), not by
the importer's code.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from format_checks import (
    DATA,
    PIXEL,
    agents,
    check_image_is_a_file_part,
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
from foldline.service import Transcripts

WHISPER = DATA / "crush" / "Starmel__OpenSuperWhisper" / ".crush" / "crush.db"
DBOS = DATA / "crush" / "dbos-inc__dbos-transact-golang" / ".crush" / "crush.db"
STORES = [WHISPER, DBOS]


@pytest.mark.parametrize("db", STORES, ids=lambda p: p.parent.parent.name)
def test_every_session_matches_the_raw_rows(transcripts: Transcripts, db: Path, tmp_path: Path) -> None:
    sessions, messages = raw_rows(db, tmp_path)
    account, workspace, summary = imported(transcripts, [db])
    assert summary.skipped == [] and summary.agents == len(roots(sessions, messages))
    found = list(everything(transcripts, account, workspace).values())
    spoken = {m["session_id"] for m in messages}
    assert counts(found) == raw_counts(sessions, messages, spoken)
    used = [s for s in sessions.values() if s["id"] in spoken]
    assert total_usage(found)["inputTokens"] == sum(s["prompt_tokens"] for s in used)
    assert total_usage(found)["outputTokens"] == sum(s["completion_tokens"] for s in used)
    replies = [m for m in found if m["role"] == "assistant"]
    said = [m for m in messages if m["role"] == "assistant" and {p["type"] for p in m["parts"]} - {"finish"}]
    assert len(replies) == len(said)  # a row holding only its finish (a cancelled request) says nothing
    assert {m["metadata"]["model"] for m in replies} == {m["model"] for m in said}
    assert {m["metadata"]["provider"] for m in replies} == {m["provider"] for m in said}
    assert all(m["metadata"]["source"] == "crush" for m in found)


def test_errors_refusals_and_failed_turns_are_shown(transcripts: Transcripts, tmp_path: Path) -> None:
    _, messages = raw_rows(DBOS, tmp_path)
    failed = {r["tool_call_id"]: r["content"] for r in parts_of(messages, "tool_result") if r["is_error"]}
    errors = [f for f in parts_of(messages, "finish") if f["reason"] == "error"]
    assert failed and errors
    account, workspace, _ = imported(transcripts, [DBOS])
    found = list(everything(transcripts, account, workspace).values())
    parts = {p["toolCallId"]: p for p in tool_parts(found)}
    assert {c: parts[c]["errorText"] for c in failed} == failed
    notes = [m for m in found if m["role"] == "system" and m["metadata"].get("finishReason") == "error"]
    assert len(notes) == len(errors)
    assert all(m["parts"][0]["text"].startswith(e["message"]) for m, e in zip(notes, errors, strict=True))


def test_a_subagent_is_the_conversation_under_the_call_that_ran_it(transcripts: Transcripts, tmp_path: Path) -> None:
    sessions, messages = raw_rows(WHISPER, tmp_path)
    (parent,) = roots(sessions, messages)
    kids = children(sessions, parent) & {m["session_id"] for m in messages}
    account, workspace, _ = imported(transcripts, [WHISPER])
    (agent,) = agents(transcripts, account, workspace)
    assert set(transcripts.agent(account, agent["id"])["subagents"]) == kids and len(kids) == 2
    for kid in kids:
        below = transcripts.messages(account, agent["id"], call=kid)["messages"]
        assert counts(below) == raw_counts(sessions, messages, {kid})
    assert agent["title"] == sessions[parent]["title"]


def test_an_image_is_a_file_part(transcripts: Transcripts, tmp_path: Path) -> None:
    db = copy_store(DBOS, tmp_path / "image")
    conn = sqlite3.connect(db)
    first = "SELECT id, parts FROM messages WHERE role = 'user' ORDER BY created_at LIMIT 1"
    (mid, parts) = conn.execute(first).fetchone()
    image = '{"type":"binary","data":{"Path":"shot.png","MIMEType":"image/png","Data":"' + PIXEL + '"}}'
    conn.execute("UPDATE messages SET parts = ? WHERE id = ?", (parts[:-1] + "," + image + "]", mid))
    conn.commit()
    conn.close()
    account, workspace, _ = imported(transcripts, [db])
    found = list(everything(transcripts, account, workspace).values())
    for m in found:
        for p in m["parts"]:
            p.pop("filename", None)
    check_image_is_a_file_part(found)


def test_every_store_is_crush_and_no_other_file_is() -> None:
    found = formats_of(STORES)
    assert {found[str(p.resolve())] for p in STORES} == {"crush"}
    check_not_taken_for("crush")


def test_importing_again_writes_nothing(transcripts: Transcripts) -> None:
    check_reimport_writes_nothing(transcripts, STORES)


def test_rows_in_the_wal_of_a_running_crush_are_read_and_left_there(transcripts: Transcripts, tmp_path: Path) -> None:
    sessions, messages = raw_rows(DBOS, tmp_path)
    db = copy_store(DBOS, tmp_path / "live")
    crush = sqlite3.connect(db, isolation_level=None)  # Crush, running: WAL mode, holding the store open
    crush.execute("PRAGMA journal_mode = wal")
    crush.execute("PRAGMA wal_autocheckpoint = 0")
    rows = crush.execute("SELECT * FROM messages ORDER BY created_at DESC, rowid DESC LIMIT 6").fetchall()
    marks = ",".join("?" * len(rows))
    crush.execute(f"DELETE FROM messages WHERE id IN ({marks})", [r[0] for r in rows])
    crush.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # what came before is in the db; what follows only in the WAL
    account, workspace, first = imported(transcripts, [db])
    before = everything(transcripts, account, workspace)
    for row in reversed(rows):
        crush.execute(f"INSERT INTO messages VALUES ({','.join('?' * len(row))})", row)
    held = snapshot(db.parent)
    grown = import_paths(transcripts, [db], account_id=account, workspace_id=workspace)
    assert snapshot(db.parent) == held  # read, never checkpointed: the rows are still only in the WAL
    after = everything(transcripts, account, workspace)
    assert counts(list(after.values())) == raw_counts(sessions, messages, {m["session_id"] for m in messages})
    changed = [mid for mid, m in after.items() if before.get(mid) != m]
    assert grown.messages == len(changed) < len(after)
    crush.close()
    assert first.agents < len(roots(sessions, messages)) == len(agents(transcripts, account, workspace))


def test_a_store_cut_short_is_passed_over_with_its_reason(transcripts: Transcripts, tmp_path: Path) -> None:
    db = copy_store(WHISPER, tmp_path / "cut")
    db.write_bytes(db.read_bytes()[:4096])
    account, workspace, summary = imported(transcripts, [db])
    assert summary.agents == 0 and agents(transcripts, account, workspace) == []
    assert [path for path, _ in summary.skipped] == [str(db.resolve())]
