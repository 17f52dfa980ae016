"""PostgreSQL keeps a write's lookups on their indexes as one conversation grows, even where
autovacuum never comes round (writes once fell six-fold at 30,000 messages). The statements two
real writes run (a new message, a replaced one) are captured and explained at that size: none
may scan the messages or parts tables whole."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from conftest import PG_ADMIN
from core_helpers import new_id, user
from sqlalchemy import event

from foldline.service import Transcripts
from foldline.store import Store, open_store

GROWN = 30_000
TABLES = ("messages", "parts", "part_text", "conversations")


@pytest.fixture
def store() -> Iterator[Store]:
    name = f"foldline_plans_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
        store = open_store(f"{PG_ADMIN.rsplit('/', 1)[0]}/{name}")
        try:
            yield store
        finally:
            store.close()
            admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')


def grow(store: Store, conversation_id: str, owner: str) -> None:
    """The conversation given ``GROWN`` more messages of one part each, with autovacuum off."""
    with store.engine.begin() as conn:
        for table in TABLES:
            conn.exec_driver_sql(f"ALTER TABLE {table} SET (autovacuum_enabled = false)")
        rows = f"FROM generate_series(1, {GROWN}) AS n"
        conn.exec_driver_sql(
            "INSERT INTO messages (conversation_id, id, owner_id, position, seq, role, head, created_at, updated_at)"
            f" SELECT %(c)s, gen_random_uuid()::text, %(o)s, n + 1, n + 1, 'user', '{{}}', 'x', 'x' {rows}",
            {"c": conversation_id, "o": owner},
        )
        conn.exec_driver_sql(
            "INSERT INTO parts (conversation_id, message_id, idx, position, seq, body)"
            " SELECT conversation_id, id, 0, position, seq, '{\"type\": \"text\", \"text\": \"grown\"}'"
            " FROM messages WHERE conversation_id = %(c)s AND position > 1",
            {"c": conversation_id},
        )
        conn.exec_driver_sql(
            "UPDATE conversations SET seq = seq + %(n)s WHERE id = %(c)s", {"n": GROWN, "c": conversation_id}
        )


def captured(store: Store, write: Any) -> list[tuple[str, Any]]:
    """The statements ``write()`` runs against the database, with their parameters."""
    seen: list[tuple[str, Any]] = []

    def record(conn: Any, cursor: Any, statement: str, parameters: Any, context: Any, many: bool) -> None:
        if not many:
            seen.append((statement, parameters))

    event.listen(store.engine, "before_cursor_execute", record)
    try:
        write()
    finally:
        event.remove(store.engine, "before_cursor_execute", record)
    return seen


def test_a_write_to_a_grown_conversation_stays_on_its_indexes(store: Store) -> None:
    t = Transcripts(store)
    account = t.create_account("grower")
    workspace = t.create_workspace("grown", [account["id"]])
    agent = t.create_agent(account["id"], workspace["id"])["id"]
    first = new_id()
    t.put_message(account["id"], agent, first, user("the first", first))
    grow(store, agent, account["id"])
    later = new_id()
    statements = captured(store, lambda: t.put_message(account["id"], agent, later, user("one more", later)))
    statements += captured(store, lambda: t.put_message(account["id"], agent, first, user("replaced", first)))
    explained = 0
    with store.engine.connect() as conn:
        driver: Any = conn.connection.driver_connection
        for statement, parameters in statements:
            head = statement.lstrip().split(None, 1)[0].upper()
            if head not in ("SELECT", "UPDATE", "DELETE", "INSERT") or not any(t in statement for t in TABLES):
                continue
            plan = "\n".join(row[0] for row in driver.execute("EXPLAIN " + statement, parameters))
            explained += 1
            for table in ("messages", "parts"):
                assert f"Seq Scan on {table}" not in plan, f"{statement}\n{plan}"
        driver.rollback()
    assert explained >= 4  # the write's lookups were seen and explained
