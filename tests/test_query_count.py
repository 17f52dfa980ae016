"""A cut page read issues a fixed number of SQL statements, whatever the page holds."""

from __future__ import annotations

import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import orjson
from conftest import World
from core_helpers import BIG_OUTPUT, LONG_THOUGHT, assistant, bash, put, thought, user
from psycopg.pq import Trace
from sqlalchemy import Engine, event

from foldline.service import Transcripts
from foldline.store import Store, StoredPart


@contextmanager
def counted(store: Store) -> Iterator[list[str]]:
    """Every statement the database is sent in the block, as the driver sends it: a page read
    runs on the driver's own cursor, out of sight of SQLAlchemy's events. SQLite says each
    statement it runs; libpq's protocol trace shows each one PostgreSQL is asked to run."""
    statements: list[str] = []
    renew_pool(store.engine)  # fresh connections, each watched from the start
    with tempfile.TemporaryFile("w+") as log:

        def watch(dbapi_conn: Any, record: Any) -> None:
            if store.engine.dialect.name == "sqlite":
                dbapi_conn.set_trace_callback(statements.append)
            else:
                dbapi_conn.pgconn.trace(log.fileno())
                dbapi_conn.pgconn.set_trace_flags(Trace.SUPPRESS_TIMESTAMPS)

        event.listen(store.engine, "connect", watch)
        try:
            yield statements
        finally:
            event.remove(store.engine, "connect", watch)
            renew_pool(store.engine)
            log.seek(0)
            statements += [line for line in log if line.startswith("F\t") and sent_a_statement(line)]


def renew_pool(engine: Engine) -> None:
    """A fresh pool for ``engine``, and the old one's connections closed, those lent out (a
    stream's poll, say) as they come back: ``dispose()`` alone leaves those in a pool nobody
    holds, to be dropped still open whenever it is collected."""
    old = engine.pool
    engine.dispose()
    event.listen(old, "checkin", lambda dbapi_conn, record: record.invalidate())  # closed as it comes back
    old.dispose()  # and any that came back before that


def sent_a_statement(line: str) -> bool:
    """A line of libpq's trace of what the client sent that asks the server to run a statement."""
    return "\tExecute" in line or "\tQuery" in line


def fill(world: World, turns: int) -> None:
    for n in range(turns):
        put(world.alice, world.agent, user(f"turn {n}"))
        put(world.alice, world.agent, assistant([thought(LONG_THOUGHT), bash(BIG_OUTPUT[: 10_000 * (n % 3 + 1)])]))


def statements_for_page(transcripts: Transcripts, store: Store, world: World, limit: int) -> list[str]:
    with counted(store) as statements:
        page = transcripts.messages(world.alice_id, world.agent, cut=True, limit=limit)
    assert len(page["messages"]) == limit
    return statements


def test_pages_of_1_and_50_messages_cost_the_same_statements(
    world: World, transcripts: Transcripts, store: Store
) -> None:
    fill(world, 30)
    one = statements_for_page(transcripts, store, world, 1)
    fifty = statements_for_page(transcripts, store, world, 50)
    assert len(one) == len(fifty)
    data = [s for s in fifty if "parts" in s or "messages" in s or "Execute" in s]
    assert 1 <= len(data) <= 3  # the conversation, its messages, their parts (PostgreSQL: all at once)


def test_a_cut_page_is_built_from_the_stored_cut_alone(world: World, transcripts: Transcripts, store: Store) -> None:
    """Store a part whose whole body is not even JSON, beside a sound cut: the cut read never
    looks at the body (the part arrives cut), while the whole read drops the broken part."""
    conv = transcripts.conversation(world.alice_id, world.agent)
    message_id = str(uuid.uuid4())
    cut_body = orjson.dumps({"type": "tool-bash", "toolCallId": "c", "state": "output-available", "input": {}})
    ref = {"index": 0, "field": "output", "bytes": 5000, "head": "h" * 2048, "tail": "t" * 2048}
    stored = StoredPart(0, "bash", "this body is never read", cut_body.decode(), orjson.dumps(ref).decode())
    head = orjson.dumps({"id": message_id, "role": "assistant"}).decode()
    store.put_message(conv, message_id, "assistant", head, [stored])

    cut = transcripts.messages(world.alice_id, world.agent, cut=True)["messages"][-1]
    assert cut["parts"] == [orjson.loads(cut_body)]
    assert cut["cutParts"] == [ref]
    whole = transcripts.messages(world.alice_id, world.agent)["messages"][-1]
    assert whole["parts"] == [] and whole["skippedParts"] == [0]
