"""PostgreSQL's pooled connections: one the server closed while it rested is replaced, unseen.

The pool checks a connection before use only when it rested past ``PING_IDLE`` (a check on
every use would cost a round trip per page). A server restart, or an administrator ending the
sessions, must then cost no reader an error.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import httpx
import psycopg
import pytest
from conftest import PG_ADMIN, pg_database
from servers import ServerThread

from foldline.service import Transcripts
from foldline.settings import Settings
from foldline.store import open_store, postgres


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


def an_agent_said_hi(t: Transcripts) -> tuple[dict[str, str], str]:
    """An account (with its token) and its agent, holding one message."""
    alice = t.create_account("alice")
    workspace = t.create_workspace("team", [alice["id"]])
    agent: str = t.create_agent(alice["id"], workspace["id"], "an agent")["id"]
    t.put_message(alice["id"], agent, str(uuid.uuid4()), said("hi"))
    return alice, agent


def test_a_connection_closed_while_it_rested_is_replaced(own_database: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(postgres, "PING_IDLE", 0.2)
    with Transcripts(open_store(own_database), settings=Settings(db=own_database)) as t:
        alice, agent = an_agent_said_hi(t)
        first = t.page_json(alice["id"], agent, cut=True, limit=50)

        assert end_sessions(own_database.rsplit("/", 1)[1]) >= 1  # the pool's connections, gone
        time.sleep(0.3)

        assert t.page_json(alice["id"], agent, cut=True, limit=50) == first
        t.put_message(alice["id"], agent, str(uuid.uuid4()), said("again"))
        assert len(t.messages(alice["id"], agent)["messages"]) == 2


def test_a_served_page_survives_its_check_connection_being_ended(
    own_database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server checks kept pages on connections of its own: ended under it while they rested,
    a reader still gets the page, and the checks get a new connection."""
    monkeypatch.setattr(postgres, "PING_IDLE", 0.2)
    with Transcripts(open_store(own_database), settings=Settings(db=own_database)) as t:
        alice, agent = an_agent_said_hi(t)
        with ServerThread(t) as server:
            url = f"{server.url}/api/agents/{agent}/messages?parts=cut&limit=50"
            headers = {"Authorization": f"Bearer {alice['token']}"}
            first = httpx.get(url, headers=headers, timeout=20)
            assert first.status_code == 200 and httpx.get(url, headers=headers, timeout=20).content == first.content
            assert checkers(own_database) >= 1

            assert end_sessions(own_database.rsplit("/", 1)[1]) >= 1
            time.sleep(0.3)
            for _ in range(5):
                again = httpx.get(url, headers=headers, timeout=20)
                assert (again.status_code, again.content) == (200, first.content)
            deadline = time.monotonic() + 10
            while not checkers(own_database) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert checkers(own_database) >= 1


def checkers(url: str) -> int:
    """The server's connections for checking kept pages, as pg_stat_activity names them."""
    with psycopg.connect(url) as conn:
        found = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
            " AND application_name = 'foldline page checks'"
        ).fetchone()
    return int(found[0]) if found else 0
