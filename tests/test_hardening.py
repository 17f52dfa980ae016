"""Adversarial tests: what a stranger or a hostile member tried, each on both backends.

Bodies are bounded while read, slow clients are dropped, no secret reaches a log line, sign-in
and sign-out cannot be forced from another site, repeated log lines are held back, and SQLite
syncs each acknowledged write.
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Iterator
from dataclasses import replace

import httpx
import pytest
from core_helpers import new_id, put, user
from servers import ServerThread

from foldline import Client
from foldline.server import HoldRepeats, RedactSecrets
from foldline.service import Transcripts
from foldline.settings import Settings
from foldline.store import Store, open_store


@pytest.fixture
def guarded(store: Store, settings: Settings) -> Iterator[tuple[ServerThread, Transcripts]]:
    """A server whose deadlines on slow clients are one second."""
    t = Transcripts(store, settings=replace(settings, header_timeout=1.0, body_timeout=1.0))
    with ServerThread(t) as server:
        yield server, t


def connect(url: str) -> socket.socket:
    host, port = url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=10)
    return sock


def closed_by_server(sock: socket.socket) -> bool:
    """Whether the server closes the connection (within the socket's 10 s timeout)."""
    try:
        while True:
            data = sock.recv(65536)
            if not data:
                return True
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True
    finally:
        sock.close()


# -- bodies are bounded while they are read ---------------------------------------------------


def test_a_declared_huge_sign_in_form_is_refused_before_it_is_read(guarded: tuple[ServerThread, Transcripts]) -> None:
    server, _ = guarded
    sock = connect(server.url)
    sock.sendall(b"POST /signin HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                 b"Content-Length: 500000000\r\n\r\ntoken=")  # fmt: skip
    answer = sock.recv(65536)
    sock.close()
    assert answer.startswith(b"HTTP/1.1 413")


def send_chunked(url: str, head: bytes, first: bytes, total: int) -> bytes:
    """POST/PUT a chunked body of ``total`` bytes (after ``first``) and return the start of the answer."""
    sock = connect(url)
    try:
        sock.sendall(head + b"Transfer-Encoding: chunked\r\n\r\n" + b"%x\r\n%s\r\n" % (len(first), first))
        block = b"a" * 65536
        for _ in range(total // len(block)):
            sock.sendall(b"%x\r\n%s\r\n" % (len(block), block))
    except (BrokenPipeError, ConnectionResetError):
        pass  # the server answered and closed while we were still sending
    try:
        return sock.recv(65536)
    finally:
        sock.close()


def test_a_chunked_sign_in_form_is_cut_off_at_its_limit(guarded: tuple[ServerThread, Transcripts]) -> None:
    server, _ = guarded
    head = b"POST /signin HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n"
    assert send_chunked(server.url, head, b"token=", 1_000_000).startswith(b"HTTP/1.1 413")


def test_an_api_body_over_the_limit_is_refused_while_read(guarded: tuple[ServerThread, Transcripts]) -> None:
    server, t = guarded
    account = t.create_account("writer")
    workspace = t.create_workspace("w", [account["id"]])
    agent = t.create_agent(account["id"], workspace["id"])["id"]
    head = (f"PUT /api/agents/{agent}/messages/{new_id()} HTTP/1.1\r\nHost: x\r\n"
            f"Authorization: Bearer {account['token']}\r\nContent-Type: application/json\r\n").encode()
    first = b'{"role": "user", "parts": [{"type": "text", "text": "'
    assert send_chunked(server.url, head, first, t.settings.max_body + 1_000_000).startswith(b"HTTP/1.1 413")
    assert t.messages(account["id"], agent)["messages"] == []  # nothing stored


# -- slow clients are dropped; streams are not ------------------------------------------------


def test_slow_headers_are_dropped(guarded: tuple[ServerThread, Transcripts]) -> None:
    server, _ = guarded
    sock = connect(server.url)
    sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")  # and never the blank line
    assert closed_by_server(sock)


def test_a_silent_connection_is_dropped(guarded: tuple[ServerThread, Transcripts]) -> None:
    server, _ = guarded
    assert closed_by_server(connect(server.url))


def test_a_slow_body_is_dropped(guarded: tuple[ServerThread, Transcripts]) -> None:
    server, _ = guarded
    sock = connect(server.url)
    sock.sendall(b"POST /signin HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\ntoken=abc")
    assert closed_by_server(sock)


def test_a_live_stream_outlives_the_deadlines(guarded: tuple[ServerThread, Transcripts]) -> None:
    """The deadlines run only while the server waits on the client, never on a long response."""
    server, t = guarded
    account = t.create_account("follower")
    workspace = t.create_workspace("w", [account["id"]])
    agent = t.create_agent(account["id"], workspace["id"])["id"]
    headers = {"Authorization": f"Bearer {account['token']}"}
    seen: list[str] = []
    with httpx.stream("GET", f"{server.url}/api/agents/{agent}/events", headers=headers, timeout=20) as stream:
        lines = stream.iter_lines()
        assert next(lines).startswith("retry:")

        silent, slow_body = connect(server.url), connect(server.url)  # opened after the stream
        slow_body.sendall(b"POST /signin HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\ntoken=abc")
        # past both deadlines: the server has dropped a silent client and a slow body opened after the stream
        assert closed_by_server(silent) and closed_by_server(slow_body)
        with Client(server.url, account["token"]) as client:
            put(client, agent, user("still there?"))
        for line in lines:
            if line.startswith("data:"):
                seen.append(line)
                break
    assert seen and "still there?" in seen[0]


# -- no secret in a log line ------------------------------------------------------------------


def test_a_token_in_an_address_never_reaches_the_access_log(guarded: tuple[ServerThread, Transcripts]) -> None:
    server, t = guarded
    token = t.create_account("careless")["token"]
    lines: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(record.getMessage())

    access = logging.getLogger("uvicorn.access")
    keep, level = Keep(), access.level
    access.addHandler(keep)
    access.setLevel(logging.INFO)
    try:
        httpx.get(f"{server.url}/?token={token}", follow_redirects=False)
        httpx.get(f"{server.url}/agents/{new_id()}?x=1&token={token}&y=2", follow_redirects=False)
    finally:
        access.removeHandler(keep)
        access.setLevel(level)
    assert len(lines) == 2
    assert not [line for line in lines if token in line]
    assert all("token=[redacted]" in line for line in lines)


def test_the_access_log_keeps_a_search_s_words_and_a_share_s_token_out(
    guarded: tuple[ServerThread, Transcripts],
) -> None:
    server, t = guarded
    account = t.create_account("searcher")
    space = t.create_workspace("logged", [account["id"]])
    agent = t.create_agent(account["id"], space["id"], "logged")["id"]
    share = t.create_share(account["id"], agent)["token"]
    lines: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(record.getMessage())

    access = logging.getLogger("uvicorn.access")
    keep, level = Keep(), access.level
    access.addHandler(keep)
    access.setLevel(logging.INFO)
    auth = {"Authorization": f"Bearer {account['token']}"}
    try:
        httpx.get(f"{server.url}/api/search", params={"q": "hunter2 password", "limit": "5"}, headers=auth)
        httpx.get(f"{server.url}/api/shared/{share}/search", params={"q": "hunter2"})
        httpx.get(f"{server.url}/api/shared/{share}/agents/{agent}/messages", params={"parts": "cut"})
        httpx.get(f"{server.url}/s/{share}")
        httpx.get(f"{server.url}/api/agents/{agent}/messages", params={"parts": "cut"}, headers=auth)
    finally:
        access.removeHandler(keep)
        access.setLevel(level)
    assert len(lines) == 5
    assert not [line for line in lines if "hunter2" in line or share in line or account["token"] in line]
    assert '"GET /api/search?[redacted] HTTP/1.1" 200' in lines[0]
    assert '"GET /api/shared/[redacted]/search?[redacted] HTTP/1.1" 200' in lines[1]
    assert f'"GET /api/shared/[redacted]/agents/{agent}/messages?parts=cut HTTP/1.1" 200' in lines[2]
    assert '"GET /s/[redacted] HTTP/1.1" 200' in lines[3]
    assert f"/api/agents/{agent}/messages?parts=cut" in lines[4]  # other addresses are logged as they are


def test_redaction_covers_every_spelling_of_a_token_parameter() -> None:
    record = logging.LogRecord("x", logging.INFO, "", 0, "%s %s", ("/a?TOKEN=fl_1&b=2", "/?access_token=fl_2"), None)
    RedactSecrets().filter(record)
    assert "fl_1" not in record.getMessage() and "fl_2" not in record.getMessage()


def test_a_flood_of_one_log_line_is_held_back() -> None:
    logger = logging.getLogger("foldline.test.flood")
    lines: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(record.getMessage())

    keep = Keep()
    keep.addFilter(HoldRepeats(burst=5, window=60))
    logger.addHandler(keep)
    logger.propagate = False
    try:
        for n in range(1_000):
            logger.warning("bad request from %s", n)
        logger.warning("something else")
    finally:
        logger.removeHandler(keep)
    assert len(lines) == 6 and lines[-1] == "something else"


# -- SQLite syncs every acknowledged write ---------------------------------------------------


@pytest.mark.parametrize(("setting", "pragma"), [("full", 2), ("normal", 1)])
def test_sqlite_durability_is_the_documented_setting(tmp_path: object, setting: str, pragma: int) -> None:
    store = open_store(str(tmp_path) + "/durable.db", synchronous=setting)  # type: ignore[operator]
    try:
        with store.read() as conn:
            assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == pragma
    finally:
        store.close()


def test_the_default_is_full_durability() -> None:
    assert Settings().sqlite_synchronous == "full"
