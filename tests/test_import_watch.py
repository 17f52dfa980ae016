"""``follow`` (``serve --watch``, ``import --watch``) on formats that are rewritten, not appended to:
a SQLite store written by another connection (only its ``-wal`` changes), and JSON documents
saved whole in place. Each state the watcher reaches holds what a fresh import of the same
files stores, and a grown session writes only what changed.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from format_checks import DATA, check_watch_follows_rewrites, everything, imported, owner
from store_checks import copy_store

from foldline.importers import Summary
from foldline.importers.watch import follow
from foldline.service import Transcripts

DBOS = DATA / "crush" / "dbos-inc__dbos-transact-golang" / ".crush" / "crush.db"
FLAG_RS = DATA / "opencode" / "navicore__flag-rs" / ".opencode" / "opencode.db"
CONTINUE = DATA / "continue" / "git-ai-project__git-ai" / "continue-cli-session-simple.json"
VSCODE = DATA / "copilot-vscode" / "git-ai-project__git-ai" / "copilot_session_simple.json"
HELD_ROWS = 6  # the newest rows, written by the agent while the watch runs


def fresh_count(t: Transcripts, db: Path, into: Path) -> int:
    """The messages a fresh import of the store as it is now stores (from a copy of its files)."""
    _, _, summary = imported(t, [copy_store(db, into)], "fresh")
    return summary.messages


def poke_until(agent: sqlite3.Connection, check: Callable[[], bool], what: str) -> None:
    """Until ``check`` holds, the agent writes a row as it was (a WAL frame, no content changed)
    every half second: a change made before the watcher watched is made again. Bounded."""
    deadline = time.monotonic() + 30
    while not check():
        assert time.monotonic() < deadline, f"the watcher did not import {what}"
        agent.execute("UPDATE sessions SET title = title WHERE rowid = (SELECT min(rowid) FROM sessions)")
        until = time.monotonic() + 0.5
        while time.monotonic() < until and not check():
            time.sleep(0.05)


@pytest.mark.parametrize("source", [DBOS, FLAG_RS], ids=["crush", "opencode"])
def test_the_watch_follows_a_store_written_by_another_connection(
    transcripts: Transcripts, tmp_path: Path, source: Path
) -> None:
    project = tmp_path / "project"
    db = copy_store(source, project / source.parent.name)
    agent = sqlite3.connect(db, isolation_level=None)  # the agent, running: WAL mode, the store open
    agent.execute("PRAGMA journal_mode = wal")
    agent.execute("PRAGMA wal_autocheckpoint = 0")  # what it writes stays in the -wal
    rows = agent.execute(f"SELECT * FROM messages ORDER BY created_at DESC, rowid DESC LIMIT {HELD_ROWS}").fetchall()
    agent.execute(f"DELETE FROM messages WHERE id IN ({','.join('?' * len(rows))})", [r[0] for r in rows])
    agent.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    account, workspace = owner(transcripts, "watcher")
    told: list[Summary] = []
    stop = threading.Event()
    watcher = threading.Thread(target=follow, args=(transcripts, [str(project)], account, workspace, told.append, stop))
    watcher.start()
    try:
        want = fresh_count(transcripts, db, tmp_path / "fresh-before")
        # held once the import that stored them has also told its summary (it tells after it wrote)
        poke_until(agent, lambda: len(everything(transcripts, account, workspace)) == want
                   and sum(s.messages for s in told) >= want, "the store")  # fmt: skip
        before = {**everything(transcripts, account, workspace)}
        written = sum(s.messages for s in told)
        for row in reversed(rows):  # the agent goes on: new rows, in the -wal only
            agent.execute(f"INSERT INTO messages VALUES ({','.join('?' * len(row))})", row)
        assert db.with_name(db.name + "-wal").stat().st_size > 0
        want = fresh_count(transcripts, db, tmp_path / "fresh-after")
        poke_until(agent, lambda: len(everything(transcripts, account, workspace)) == want, "the new rows")
    finally:
        stop.set()
        watcher.join(10)
        agent.close()
    after = everything(transcripts, account, workspace)
    changed = [mid for mid, m in after.items() if before.get(mid) != m]
    grown = sum(s.messages for s in told) - written
    assert 0 < len(changed) <= grown < len(after)  # only what changed was written again


def test_the_watch_follows_a_continue_session_saved_in_place(transcripts: Transcripts, tmp_path: Path) -> None:
    session = json.loads(CONTINUE.read_text())
    stages = [json.dumps({**session, "history": session["history"][:end]}, indent=2).encode() for end in (2, 4)]
    (tmp_path / "sessions").mkdir()
    check_watch_follows_rewrites(transcripts, tmp_path / "sessions", CONTINUE.name, stages, Path.write_bytes)


def test_the_watch_follows_a_vscode_chat_saved_in_place(transcripts: Transcripts, tmp_path: Path) -> None:
    chat = json.loads(VSCODE.read_text())
    stages = [json.dumps({**chat, "requests": chat["requests"][:end]}, indent=2).encode() for end in (1, 3)]
    (tmp_path / "chatSessions").mkdir()
    name = f"{chat['sessionId']}.json"
    check_watch_follows_rewrites(transcripts, tmp_path / "chatSessions", name, stages, Path.write_bytes)


def test_the_watch_never_reads_its_own_store(tmp_path: Path) -> None:
    """Foldline's own SQLite file in a watched folder: its writes (to its -wal) are not read as
    an agent's store; a log copied there is imported, and nothing else was tried."""
    from foldline.settings import Settings
    from foldline.store import open_store

    folder = tmp_path / "project"
    folder.mkdir()
    db = str(folder / "foldline.db")
    with Transcripts(open_store(db), settings=Settings(db=db)) as t:
        account, workspace = owner(t, "self")
        told: list[Summary] = []
        stop = threading.Event()
        watcher = threading.Thread(target=follow, args=(t, [str(folder)], account, workspace, told.append, stop))
        watcher.start()
        try:
            deadline = time.monotonic() + 30
            while not agents_of(t, account, workspace):  # the store is written all along meanwhile
                assert time.monotonic() < deadline, "the watcher did not import the log"
                for _ in range(5):
                    t.create_agent(account, workspace, "written through the API")
                (folder / CONTINUE.name).write_bytes(CONTINUE.read_bytes())
                time.sleep(0.5)
        finally:
            stop.set()
            watcher.join(10)
    assert told and all(s.skipped == [] for s in told)


def agents_of(t: Transcripts, account: str, workspace: str) -> list[str]:
    return [a["id"] for a in t.list_agents(account, workspace)["agents"] if a["title"] != "written through the API"]


def test_the_watch_follows_folders_made_after_it_started(
    transcripts: Transcripts, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``serve --watch`` asks for the agents' folders again and again: a folder made after it
    started (a VS Code workspace opened since, an agent installed since) is imported whole, then
    followed like the others."""
    from foldline.importers import watch

    monkeypatch.setattr(watch, "RESCAN_SECONDS", 0.2)
    there, later = tmp_path / "there", tmp_path / "later" / "chatSessions"
    there.mkdir()
    account, workspace = owner(transcripts, "rescan")
    told: list[Summary] = []
    stop = threading.Event()

    def found() -> list[str]:
        return [str(p) for p in (there, later) if p.is_dir()]

    args = (transcripts, found(), account, workspace, told.append, stop, found)
    watcher = threading.Thread(target=follow, args=args)
    watcher.start()
    try:
        chat = json.loads(VSCODE.read_text())
        stages = [json.dumps({**chat, "requests": chat["requests"][:end]}, indent=2).encode() for end in (1, 3)]
        later.mkdir(parents=True)
        (later / f"{chat['sessionId']}.json").write_bytes(stages[0])
        wait_for(lambda: sum(s.messages for s in told) > 0, "the folder made after the start")
        first = sum(s.messages for s in told)
        (later / f"{chat['sessionId']}.json").write_bytes(stages[1])  # then followed: its growth too
        wait_for(lambda: sum(s.messages for s in told) > first, "a change in that folder")
    finally:
        stop.set()
        watcher.join(10)
    assert not watcher.is_alive()
    assert all(s.skipped == [] for s in told)


def wait_for(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + 30
    while not check():
        assert time.monotonic() < deadline, f"the watcher did not import {what}"
        time.sleep(0.05)
