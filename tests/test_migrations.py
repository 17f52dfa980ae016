"""Migrations run once, however many processes start on a fresh database at the same moment.

PostgreSQL serialises them with an advisory lock, SQLite with its write lock; each starter
has its own store (its own engine and connections), as separate ``foldline serve`` processes do.
"""

from __future__ import annotations

import threading
import uuid

import pytest
from sqlalchemy import select

import foldline.store.core as store_base
from foldline.service import Transcripts
from foldline.store import Store, open_store
from foldline.store.schema import MIGRATIONS, migrations_table

STARTERS = 6


def test_concurrent_starts_on_a_fresh_database_migrate_once(fresh_url: str) -> None:
    stores = [open_store(fresh_url, migrate=False) for _ in range(STARTERS)]
    start = threading.Barrier(STARTERS)
    applied: list[list[int]] = []
    problems: list[BaseException] = []

    def starter(store: Store) -> None:
        start.wait()
        try:
            applied.append(store.migrate())
        except BaseException as exc:  # told below, with the others
            problems.append(exc)

    threads = [threading.Thread(target=starter, args=(s,)) for s in stores]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    try:
        assert problems == []
        every = [version for version, _, _ in MIGRATIONS]
        assert sorted(applied) == [[]] * (STARTERS - 1) + [every], "exactly one starter migrated"
        with stores[0].read() as conn:
            assert sorted(conn.execute(select(migrations_table.c.version)).scalars()) == every
        assert stores[0].migrate() == []  # and a later start applies nothing
    finally:
        for s in stores:
            s.close()


def test_migration_7_counts_the_messages_already_stored(fresh_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A store from before the agents list's totals: each agent's count (its subagents' included)
    is made once by the migration, and kept by every write after it."""
    monkeypatch.setattr(store_base, "MIGRATIONS", [m for m in store_base.MIGRATIONS if m[0] != 7])
    store = open_store(fresh_url)
    try:
        agent, sub, other = (str(uuid.uuid4()) for _ in range(3))
        account, workspace = str(uuid.uuid4()), str(uuid.uuid4())
        stamp = "2026-01-01T00:00:00.000Z"
        with store.write() as conn:  # as a store before migration 7 held them: none of its columns
            q = "?" if store.engine.dialect.name == "sqlite" else "%s"
            conn.exec_driver_sql(f"INSERT INTO accounts (id, name, created_at) VALUES ({q}, 'old', {q})",
                                 (account, stamp))  # fmt: skip
            conn.exec_driver_sql(f"INSERT INTO workspaces (id, name, created_at) VALUES ({q}, 'old', {q})",
                                 (workspace, stamp))  # fmt: skip
            conn.exec_driver_sql(f"INSERT INTO members (workspace_id, account_id) VALUES ({q}, {q})",
                                 (workspace, account))  # fmt: skip
            for conv, parent, call in ((agent, None, None), (sub, agent, "c1"), (other, None, None)):
                conn.exec_driver_sql(
                    "INSERT INTO conversations (id, workspace_id, owner_id, parent_id, call_id, title, seq, created_at,"
                    f" updated_at) VALUES ({q}, {q}, {q}, {q}, {q}, 't', 0, {q}, {q})",
                    (conv, workspace, account, parent, call, stamp, stamp),
                )
            for n, conv in enumerate([agent, agent, sub, agent, sub]):
                conn.exec_driver_sql(
                    "INSERT INTO messages (conversation_id, id, owner_id, position, seq, role, head, created_at,"
                    f" updated_at) VALUES ({q}, {q}, {q}, {q}, {q}, 'user', '{{}}', {q}, {q})",
                    (conv, str(uuid.uuid4()), account, n + 1, n + 1, stamp, stamp),
                )
        monkeypatch.undo()
        assert store.migrate() == [7]
        t = Transcripts(store)
        listed = {a["id"]: a["messages"] for a in t.list_agents(account, workspace)["agents"]}
        assert listed == {agent: 5, other: 0}
        message = {"id": str(uuid.uuid4()), "role": "user", "parts": [{"type": "text", "text": "new"}]}
        t.put_message(account, agent, message["id"], message)
        assert t.agent(account, agent)["messages"] == 6
    finally:
        store.close()
