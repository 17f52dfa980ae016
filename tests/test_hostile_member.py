"""A careless or hostile member, with an ordinary token and ordinary requests, cannot take the
service away from the other accounts (issue 20): each on both backends, over a real socket.

- A whole-part reader who stops reading pins no read snapshot and no pooled connection (the
  SQLite write-ahead log stays bounded while writes go on; PostgreSQL has no session idle in a
  transaction), and is dropped after the send deadline.
- A search holds its deadline whatever its words (``'a' * 256`` is one trigram, held by most
  chunks, each checked): partial, with a cursor that goes on.
- A page is bounded in bytes as well as in messages: it ends early with its ``next``, and the
  pages still chain through every message once; a page too big for the event loop (SQLite
  reads small pages there) is read in a thread, the same page.
"""

from __future__ import annotations

import os
import socket
import sqlite3
import sys
import time
from dataclasses import dataclass, replace

import httpx
import orjson
import psycopg
import pytest
from core_helpers import bash, caught_up, new_id, text, user
from servers import ServerThread

from foldline.pagereads import ON_LOOP_BYTES
from foldline.server import SWITCH_SECONDS
from foldline.service import Transcripts
from foldline.settings import Settings
from foldline.store import Store
from foldline.store.errors import PageTooBig

PART_MB = 30
LINE = "a line of build output, long enough to look like one, with a number: "


@dataclass
class Team:
    """Two members of one workspace: ``reader`` (the hostile one) and ``other``; ``agent`` holds
    one part of about 30 MB (message ``big``, part 0); ``scratch`` is an agent ``other`` writes to."""

    t: Transcripts
    reader: dict[str, str]
    other: dict[str, str]
    space: str
    agent: str
    big: str
    scratch: str
    size: int


def make_team(store: Store, settings: Settings) -> Team:
    t = Transcripts(store, settings=settings)
    reader, other = t.create_account("hostile"), t.create_account("other")
    space = t.create_workspace("team", [reader["id"], other["id"]])["id"]
    agent = t.create_agent(other["id"], space, "a big output")["id"]
    output = "".join(f"{LINE}{n}\n" for n in range(PART_MB * 1_000_000 // (len(LINE) + 7)))
    big = new_id()
    t.put_message(other["id"], agent, big, {"role": "assistant", "parts": [bash(output)]})
    scratch = t.create_agent(other["id"], space, "written meanwhile")["id"]
    size, chunks = t.part_stream(reader["id"], agent, big, "0")
    getattr(chunks, "close", lambda: None)()
    return Team(t, reader, other, space, agent, big, scratch, size)


@pytest.fixture(scope="module")
def team(store: Store, settings: Settings) -> Team:
    return make_team(store, replace(settings, redact=False))


def serve(team: Team, **changes: object) -> ServerThread:
    return ServerThread(Transcripts(team.t._store, settings=replace(team.t.settings, **changes)))  # type: ignore[arg-type]


def stalled_read(url: str, team: Team, token: str | None = None) -> socket.socket:
    """Ask for the big part whole (as ``token``, the reader's by default), take its status line,
    and read nothing more."""
    host, port = url.removeprefix("http://").split(":")
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # keep the kernel from taking it all
    sock.settimeout(10)
    sock.connect((host, int(port)))
    path = f"/api/agents/{team.agent}/messages/{team.big}/parts/0"
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token or team.reader['token']}\r\n"
                 "Accept-Encoding: identity\r\n\r\n".encode())  # fmt: skip
    assert sock.recv(12).startswith(b"HTTP/1.1 200")
    return sock


def write_meanwhile(team: Team, messages: int, kb: int) -> None:
    for n in range(messages):
        text = f"write {n} " + "x" * (kb * 1024)
        message = new_id()
        team.t.put_message(team.other["id"], team.scratch, message, user(text, message))


def wal_bytes(db: str) -> int:
    try:
        return os.path.getsize(db + "-wal")
    except FileNotFoundError:
        return 0


def empty_log(db: str) -> None:
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    assert wal_bytes(db) == 0


def idle_in_transaction(db: str) -> int:
    with psycopg.connect(db, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
            " AND state LIKE 'idle in transaction%' AND pid <> pg_backend_pid()"
        ).fetchone()
    assert row is not None
    return int(row[0])


def test_a_reader_who_stops_reading_pins_no_snapshot_nor_connection(team: Team, db_url: str) -> None:
    if not db_url.startswith("postgresql"):
        empty_log(db_url)  # the big part's own write left it some 60 MB long
    with serve(team, send_timeout=300.0) as server:
        stalled = [stalled_read(server.url, team) for _ in range(4)]  # the per-account cap of whole reads
        try:
            time.sleep(1.0)  # the server has sent what the socket takes, and waits on the client
            if db_url.startswith("postgresql"):
                assert idle_in_transaction(db_url) == 0
            write_meanwhile(team, messages=48, kb=256)  # some 12 MB of text, and as much again in its chunks
            if not db_url.startswith("postgresql"):
                # Without short reads, every frame written stays in the log behind the readers' snapshots.
                assert wal_bytes(db_url) < 12_000_000
            else:
                assert idle_in_transaction(db_url) == 0
            other = {"Authorization": f"Bearer {team.other['token']}"}
            assert httpx.get(f"{server.url}/api/me", headers=other, timeout=10).status_code == 200
            page = httpx.get(f"{server.url}/api/agents/{team.scratch}/messages", params={"parts": "cut", "limit": "5"},
                             headers=other, timeout=10)  # fmt: skip
            assert page.status_code == 200 and len(page.json()["messages"]) == 5
        finally:
            for sock in stalled:
                sock.close()


def received(sock: socket.socket) -> int:
    """Bytes the socket gets until the server ends the connection (or 10 s of silence)."""
    total = 0
    try:
        while data := sock.recv(1 << 16):
            total += len(data)
    except (TimeoutError, ConnectionResetError):
        pass
    finally:
        sock.close()
    return total


def test_a_reader_who_stops_reading_is_dropped_after_the_send_deadline(team: Team) -> None:
    with serve(team, send_timeout=1.0) as server:
        stalled = [stalled_read(server.url, team) for _ in range(4)]
        time.sleep(3.0)  # past the deadline: the server dropped them, and gave their slots back
        assert all(received(sock) < team.size for sock in stalled)
        headers = {"Authorization": f"Bearer {team.reader['token']}", "Accept-Encoding": "identity"}
        url = f"{server.url}/api/agents/{team.agent}/messages/{team.big}/parts/0"
        whole = httpx.get(url, headers=headers, timeout=60)
        assert whole.status_code == 200 and len(whole.content) == team.size


def test_readers_who_stop_reading_hold_none_of_the_process_wide_slots(team: Team) -> None:
    """As many stalled whole reads as the process runs heavy requests at once, from two
    accounts: the process-wide slot is held only while a part is read from the database, so a
    third account's whole read and search still get their answer, not a 503."""
    second = team.t.create_account("hostile too")
    team.t.add_member(team.space, second["id"])
    agent = team.t.create_agent(team.other["id"], team.space, "small")["id"]
    small = new_id()
    team.t.put_message(team.other["id"], agent, small, {"role": "assistant", "parts": [bash("a small output")]})
    with serve(team, max_heavy=4, max_whole_reads=2, send_timeout=300.0) as server:
        tokens = [team.reader["token"]] * 2 + [second["token"]] * 2
        stalled = [stalled_read(server.url, team, token) for token in tokens]
        try:
            time.sleep(1.0)  # each has been sent what its socket takes, and the server waits on it
            other = {"Authorization": f"Bearer {team.other['token']}", "Accept-Encoding": "identity"}
            whole = httpx.get(f"{server.url}/api/agents/{agent}/messages/{small}/parts/0", headers=other, timeout=30)
            assert whole.status_code == 200, whole.text
            assert orjson.loads(whole.content)["output"] == "a small output"
            found = httpx.get(f"{server.url}/api/search", params={"q": "small output"}, headers=other, timeout=30)
            assert found.status_code == 200, found.text
            big = f"{server.url}/api/agents/{team.agent}/messages/{team.big}/parts/0"
            whole = httpx.get(big, headers=other, timeout=60)  # read from the database while others stall
            assert whole.status_code == 200 and len(whole.content) == team.size
        finally:
            for sock in stalled:
                sock.close()


def test_a_part_written_again_while_sent_ends_the_sending_short(team: Team) -> None:
    """A reader slower than a writer gets no splice of two versions: the response ends short."""
    agent = team.t.create_agent(team.other["id"], team.space)["id"]
    message = new_id()
    first = "".join(f"{LINE}{n}\n" for n in range(200_000))
    team.t.put_message(team.other["id"], agent, message, {"role": "assistant", "parts": [bash(first)]})
    with serve(team) as server:
        headers = {"Authorization": f"Bearer {team.reader['token']}", "Accept-Encoding": "identity"}
        url = f"{server.url}/api/agents/{agent}/messages/{message}/parts/0"
        with httpx.stream("GET", url, headers=headers, timeout=30) as response:
            assert response.status_code == 200
            chunks = response.iter_raw(1 << 16)
            body, ended_short = bytearray(next(chunks)), False
            second = first.replace("build", "BUILD")
            team.t.put_message(team.other["id"], agent, message, {"role": "assistant", "parts": [bash(second)]})
            try:
                for chunk in chunks:
                    body += chunk
            except httpx.HTTPError:
                ended_short = True
        # SQLite's short reads see the part change and end the sending; PostgreSQL's spool sends
        # the version it found, whole. Never a splice of the two.
        assert ended_short or orjson.loads(bytes(body))["output"] == first



def test_a_search_for_a_word_most_chunks_nearly_hold_keeps_its_deadline(store: Store, settings: Settings) -> None:
    """SQLite's index finds every chunk holding ``aaa`` and each is checked for the whole word:
    stopped at the deadline, the search says ``partial`` and where to go on (it ran to its end,
    on 30,000 chunks, before)."""
    t = Transcripts(store, settings=replace(settings, redact=False, search_seconds=0.02))
    searcher = t.create_account("searcher")
    space = t.create_workspace("many chunks", [searcher["id"]])["id"]
    agent = t.create_agent(searcher["id"], space)["id"]
    for m in range(30):
        ids = [new_id() for _ in range(10)]
        t.put_messages(searcher["id"], agent, [
            (i, {"id": i, "role": "user", "parts": [text(f"aaab {m} {k} {j} " + "aa " * 20) for j in range(100)]})
            for k, i in enumerate(ids)
        ])  # fmt: skip
    caught_up(store)
    with ServerThread(t) as server:
        headers = {"Authorization": f"Bearer {searcher['token']}"}
        found = httpx.get(f"{server.url}/api/search", params={"q": "a" * 256, "workspace_id": space},
                          headers=headers, timeout=30)  # fmt: skip
        assert found.status_code == 200
        page = found.json()
        assert page["partial"] is True and page["hits"] == [] and page["next"]
        more = httpx.get(f"{server.url}/api/search", params={"q": "a" * 256, "workspace_id": space,
                         "cursor": page["next"]}, headers=headers, timeout=30)  # fmt: skip
        assert more.status_code == 200 and more.json()["next"] != page["next"]


def pages(url: str, token: str, agent: str, **params: str) -> list[dict[str, object]]:
    """Every page of a transcript, newest first, following ``next`` (at most 100 pages)."""
    out: list[dict[str, object]] = []
    before = None
    for _ in range(100):
        query = dict(params, **({"before": before} if before else {}))
        answer = httpx.get(f"{url}/api/agents/{agent}/messages", params=query,
                           headers={"Authorization": f"Bearer {token}"}, timeout=30)  # fmt: skip
        assert answer.status_code == 200
        page = answer.json()
        out.append(page)
        before = page["next"]
        if before is None:
            return out
    raise AssertionError("the pages did not end")


def test_a_page_ends_early_at_its_byte_bound_and_the_pages_chain(store: Store, settings: Settings) -> None:
    t = Transcripts(store, settings=replace(settings, redact=False, page_bytes=64 * 1024))
    owner = t.create_account("writer of big turns")
    space = t.create_workspace("big turns", [owner["id"]])["id"]
    agent = t.create_agent(owner["id"], space)["id"]
    written = []
    for n in range(30):  # some 20 KB each, sent whole even on a cut page (under the text bound)
        message = new_id()
        t.put_message(owner["id"], agent, message, {"role": "user", "parts": [text(f"{n} " + "y" * 10_000)] * 2})
        written.append(message)
    with ServerThread(t) as server:
        for params in ({"parts": "cut", "limit": "100"}, {"parts": "cut"}, {"parts": "whole", "limit": "100"}):
            chained = pages(server.url, owner["token"], agent, **params)
            assert len(chained) > 1, params  # 600 KB of messages, 64 KB a page
            for page in chained[:-1]:
                messages = page["messages"]
                assert isinstance(messages, list) and 1 <= len(messages) <= 4, params  # 64 KB and one message
            seen = [m["id"] for page in reversed(chained) for m in page["messages"]]  # type: ignore[attr-defined]
            assert seen == written, params
        # A whole read without a limit is an export: the whole transcript, in one answer.
        assert [len(p["messages"]) for p in pages(server.url, owner["token"], agent)] == [30]  # type: ignore[arg-type]


def test_a_page_too_big_for_the_event_loop_is_read_the_same_in_a_thread(store: Store, settings: Settings) -> None:
    t = Transcripts(store, settings=replace(settings, redact=False))
    owner = t.create_account("writer of long answers")
    space = t.create_workspace("long answers", [owner["id"]])["id"]
    agent = t.create_agent(owner["id"], space)["id"]
    for n in range(8):  # 8 messages of 250 KB: past what the loop reads itself, under the page's bound
        message = new_id()
        t.put_message(owner["id"], agent, message, {"role": "assistant", "parts": [text(f"{n} " + "z" * 50_000)] * 5})
    if store.local:  # SQLite would read it on the event loop: it stops as soon as it is past what it may read there
        with pytest.raises(PageTooBig):
            t.page_json(owner["id"], agent, cut=True, limit=15, most=ON_LOOP_BYTES)
    with ServerThread(t) as server:
        chained = pages(server.url, owner["token"], agent, parts="cut", limit="15")
    assert len(chained) == 1 and len(chained[0]["messages"]) == 8  # type: ignore[arg-type]
    expected = t.messages(owner["id"], agent, cut=True, limit=15)
    assert chained[0]["messages"] == expected["messages"]


def test_a_page_of_many_small_parts_is_read_in_a_thread_the_same(store: Store, settings: Settings) -> None:
    """Under a MiB of parts, but 2,000 rows of them: the event loop (SQLite) counts each part
    as at least ``ROW_COST`` bytes and gives the page up to a thread before it has read them
    all (it read every row on the loop, a stall of tens of ms, issue 20); the page is the same."""
    t = Transcripts(store, settings=replace(settings, redact=False, page_cache_mb=0))  # every page read
    owner = t.create_account("writer of many small parts")
    space = t.create_workspace("small parts", [owner["id"]])["id"]
    agent = t.create_agent(owner["id"], space)["id"]
    for n in range(2):
        message = new_id()
        parts = [text(f"{n}.{j} " + "w" * 100) for j in range(1_000)]
        t.put_message(owner["id"], agent, message, {"role": "assistant", "parts": parts})
    whole = t.page_json(owner["id"], agent, cut=True, limit=15)
    assert len(whole) < ON_LOOP_BYTES  # the bytes alone would keep it on the loop
    if store.local:
        with pytest.raises(PageTooBig):
            t.page_json(owner["id"], agent, cut=True, limit=15, most=ON_LOOP_BYTES)
    with ServerThread(t) as server:
        chained = pages(server.url, owner["token"], agent, parts="cut", limit="15")
    assert len(chained) == 1 and len(chained[0]["messages"]) == 2  # type: ignore[arg-type]
    assert chained[0]["messages"] == t.messages(owner["id"], agent, cut=True, limit=15)["messages"]

def test_a_serving_process_hands_the_interpreter_over_every_millisecond(store: Store, settings: Settings) -> None:
    """A thread doing long work in Python (a big page, a search's rows) kept the interpreter lock
    up to CPython's default 5 ms each time the event loop asked for it back: once a server has
    started, it changes hands every ``SWITCH_SECONDS``."""
    was = sys.getswitchinterval()
    sys.setswitchinterval(0.005)  # CPython's default: as a process that serves nothing yet has it
    try:
        with ServerThread(Transcripts(store, settings=settings)) as server:
            assert httpx.get(f"{server.url}/api/openapi.json", timeout=30).status_code == 200
            assert sys.getswitchinterval() == pytest.approx(SWITCH_SECONDS)
    finally:
        sys.setswitchinterval(was)
