"""When the database fails under a request: a full disk is 507, a database that cannot answer in
time is 503 with Retry-After, anything else is one whole 500; each with the error body, on a
connection that stays usable, and nothing acknowledged is lost. Real failures of the real
engines, over a real server: SQLite's page limit and a lock held by another connection;
PostgreSQL's own errors raised by a trigger, and a lock held by another session.
"""

from __future__ import annotations

import sqlite3
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import psycopg
import pytest
from servers import ServerThread
from sqlalchemy import event
from waits import eventually

from foldline.service import Transcripts
from foldline.settings import Settings

WAIT = 0.5  # the server's bound on every wait on the database, in seconds


@dataclass
class Served:
    url: str
    backend: str
    http: httpx.Client
    agent: str
    transcripts: Transcripts

    def put(self, text: str = "hello") -> httpx.Response:
        message_id = str(uuid.uuid4())
        body = {"id": message_id, "role": "user", "parts": [{"type": "text", "text": text}]}
        return self.http.put(f"/api/agents/{self.agent}/messages/{message_id}", json=body)

    def stored(self) -> int:
        return len(self.http.get(f"/api/agents/{self.agent}/messages").json()["messages"])


@pytest.fixture
def served(fresh_url: str) -> Iterator[Served]:
    settings = Settings(db=fresh_url, db_wait=WAIT, poll_seconds=0.2)
    with Transcripts.open(settings) as t, ServerThread(t) as server:
        alice = t.create_account("alice")
        workspace = t.create_workspace("team", [alice["id"]])
        agent = t.create_agent(alice["id"], workspace["id"], title="writes")["id"]
        headers = {"Authorization": f"Bearer {alice['token']}"}
        with httpx.Client(base_url=server.url, headers=headers, timeout=30) as http:
            backend = "sqlite" if not fresh_url.startswith("postgresql") else "postgres"
            yield Served(server.url, backend, http, agent, t)


def assert_error(response: httpx.Response, status: int, code: str) -> None:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    assert response.json()["error"]["code"] == code
    assert int(response.headers["content-length"]) == len(response.content)  # a whole response


@contextmanager
def pg_session(url: str) -> Iterator[psycopg.Connection[Any]]:
    with psycopg.connect(url, autocommit=True) as conn:
        yield conn


@contextmanager
def failing_inserts(served: Served, sqlite_sql: str, pg_errcode: str, pg_message: str) -> Iterator[None]:
    """Every new message insert fails the engine's own way, until the block ends."""
    url = served.transcripts.settings.db
    if served.backend == "sqlite":
        with sqlite3.connect(url) as conn:
            conn.execute(f"CREATE TRIGGER failing BEFORE INSERT ON messages BEGIN {sqlite_sql}; END")
        try:
            yield
        finally:
            with sqlite3.connect(url) as conn:
                conn.execute("DROP TRIGGER failing")
        return
    with pg_session(url) as conn:
        conn.execute(
            "CREATE FUNCTION failing() RETURNS trigger LANGUAGE plpgsql AS "
            f"$$ BEGIN RAISE EXCEPTION '{pg_message}' USING ERRCODE = '{pg_errcode}'; END $$"
        )
        conn.execute("CREATE TRIGGER failing BEFORE INSERT ON messages FOR EACH ROW EXECUTE FUNCTION failing()")
        try:
            yield
        finally:
            conn.execute("DROP TRIGGER failing ON messages")
            conn.execute("DROP FUNCTION failing()")


@contextmanager
def full_disk(served: Served) -> Iterator[None]:
    """SQLite: the file may not grow by a page (``max_page_count``: SQLITE_FULL, as a full disk
    gives); PostgreSQL: its own disk_full error, raised where a message is inserted."""
    if served.backend == "postgres":
        with failing_inserts(served, "", "53100", "could not extend file: No space left on device"):
            yield
        return
    engine = served.transcripts._store.engine  # the server's own connections, each told the limit
    limit = {"on": True}

    def at_most_as_now(dbapi_conn: Any, record: Any) -> None:
        if limit["on"]:
            pages = dbapi_conn.execute("PRAGMA page_count").fetchone()[0]
            dbapi_conn.execute(f"PRAGMA max_page_count = {pages}")

    event.listen(engine, "connect", at_most_as_now)
    engine.dispose()
    try:
        yield
    finally:
        limit["on"] = False
        event.remove(engine, "connect", at_most_as_now)
        engine.dispose()


def test_a_full_disk_is_507_and_nothing_is_lost(served: Served) -> None:
    assert served.put("before").is_success
    with full_disk(served):
        assert_error(served.put("while full " * 20_000), 507, "insufficient_storage")
        assert served.stored() == 1  # the same connection goes on, and the refused write left nothing
    assert served.put("after").is_success
    assert served.stored() == 2


def test_an_unexpected_failure_is_one_whole_500(served: Served) -> None:
    with failing_inserts(served, "SELECT RAISE(ABORT, 'boom')", "P0001", "boom"):
        response = served.put()
        assert_error(response, 500, "internal")
        assert "boom" not in response.text  # the cause is logged, not sent
    assert served.put().is_success  # the same client's connection, still usable


def test_a_database_that_cannot_answer_in_time_is_503_with_retry_after(served: Served) -> None:
    """Another connection holds the lock a write needs for longer than the server waits: the
    write is a 503 with Retry-After, not a hang; once the lock is let go, writes go on."""
    assert served.put("before").is_success
    url = served.transcripts.settings.db
    let_go = threading.Event()
    holding = threading.Event()

    def hold() -> None:
        if served.backend == "sqlite":
            conn = sqlite3.connect(url, isolation_level=None)
            conn.execute("BEGIN IMMEDIATE")
        else:
            conn = psycopg.connect(url)
            conn.execute("LOCK TABLE messages IN ACCESS EXCLUSIVE MODE")
        holding.set()
        let_go.wait(60)
        conn.rollback()
        conn.close()

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert holding.wait(10)
        response = served.put("while locked")
        assert_error(response, 503, "unavailable")
        assert int(response.headers["retry-after"]) > 0
    finally:
        let_go.set()
        holder.join(10)
    assert served.put("after").is_success  # recovered without a restart
    assert served.stored() == 2


def test_past_the_process_wide_bound_heavy_requests_are_503_and_small_ones_still_answer(
    fresh_url: str,
) -> None:
    """Two searches held in the database (another session holds the lock they need) fill a gate
    of two: a third account's search is 503 with Retry-After at once, not a wait for a pooled
    connection, and small requests (`/api/me`, a cut page) still answer."""
    if not fresh_url.startswith("postgresql"):
        pytest.skip("PostgreSQL holds a search on a lock; SQLite's readers are never blocked by one")
    settings = Settings(db=fresh_url, db_wait=60, max_heavy=2, poll_seconds=0.2)  # past the client's 30 s
    with Transcripts.open(settings) as t, ServerThread(t) as server:
        people = [t.create_account(f"p{n}") for n in range(3)]
        workspace = t.create_workspace("team", [p["id"] for p in people])
        agent = t.create_agent(people[0]["id"], workspace["id"], title="read")["id"]

        def get(who: int, path: str) -> httpx.Response:
            headers = {"Authorization": f"Bearer {people[who]['token']}"}
            return httpx.get(server.url + path, headers=headers, timeout=30)

        held: list[httpx.Response] = []
        with pg_session(fresh_url) as lock:
            lock.execute("BEGIN")
            lock.execute("LOCK TABLE part_text IN ACCESS EXCLUSIVE MODE")
            searchers = [
                threading.Thread(target=lambda n=n: held.append(get(n, "/api/search?q=needle"))) for n in (0, 1)
            ]
            for searcher in searchers:
                searcher.start()
            eventually(lambda: waiting_on_lock(fresh_url) == 2, 20, "both searches wait on the lock")
            refused = get(2, "/api/search?q=needle")
            assert_error(refused, 503, "unavailable")
            assert int(refused.headers["retry-after"]) > 0
            assert get(2, "/api/me").status_code == 200
            assert get(2, f"/api/agents/{agent}/messages?parts=cut").status_code == 200
            lock.execute("ROLLBACK")
        for searcher in searchers:
            searcher.join(30)
        assert [r.status_code for r in held] == [200, 200]  # the held ones were answered, not dropped
        assert get(2, "/api/search?q=needle").status_code == 200


def waiting_on_lock(url: str) -> int:
    with pg_session(url) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
        ).fetchone()
    return int(row[0]) if row else 0
