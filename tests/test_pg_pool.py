"""PostgreSQL's pooled connections: one the server closed while it rested is replaced, unseen.

The pool checks a connection before use only when it rested past ``PING_IDLE`` (a check on
every use would cost a round trip per page). A server restart, or an administrator ending the
sessions, must then cost no reader an error.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import psycopg
import pytest
from conftest import PG_ADMIN, pg_database

from foldline.settings import Settings
from foldline.store import open_store, postgres
from foldline.transcripts import Transcripts


@pytest.fixture
def own_database() -> Iterator[str]:
    """A database of this test's own: ending its sessions touches no other test's pool."""
    with pg_database("foldline_pool") as url:
        yield url


def end_sessions(database: str) -> int:
    with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
        ended = admin.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
            " WHERE datname = %s AND pid <> pg_backend_pid()",
            (database,),
        ).fetchone()
    return int(ended[0]) if ended else 0


def said(text: str) -> dict[str, object]:
    return {"role": "user", "parts": [{"type": "text", "text": text}]}


def test_a_connection_closed_while_it_rested_is_replaced(own_database: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(postgres, "PING_IDLE", 0.2)
    with Transcripts(open_store(own_database), settings=Settings(db=own_database)) as t:
        alice = t.create_account("alice")
        workspace = t.create_workspace("team", [alice["id"]])
        agent = t.create_agent(alice["id"], workspace["id"], "an agent")["id"]
        t.put_message(alice["id"], agent, str(uuid.uuid4()), said("hi"))
        first = t.page_json(alice["id"], agent, cut=True, limit=50)

        assert end_sessions(own_database.rsplit("/", 1)[1]) >= 1  # the pool's connections, gone
        time.sleep(0.3)

        assert t.page_json(alice["id"], agent, cut=True, limit=50) == first
        t.put_message(alice["id"], agent, str(uuid.uuid4()), said("again"))
        assert len(t.messages(alice["id"], agent)["messages"]) == 2
