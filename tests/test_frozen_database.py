"""A PostgreSQL frozen outright (stopped: it answers nothing, and no timeout of its own fires)
makes a request a 503 with ``Retry-After`` within about ``FOLDLINE_DB_WAIT_SECONDS``, never a
hang, and the service is itself again once the server resumes, without a restart (issue 20).

The shared test server is never stopped: the store talks to it through a loopback forwarder
that can be told to stop forwarding, which the client cannot tell from a frozen server (the
connection stays open, what it sends is taken, nothing comes back).
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from urllib.parse import urlsplit, urlunsplit

import httpx
import pytest
from core_helpers import new_id, user
from servers import ServerThread

from foldline.service import Transcripts
from foldline.settings import Settings
from foldline.store import open_store


class Forwarder:
    """A loopback TCP forwarder to ``target``; :meth:`freeze` holds every byte either way."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self.listener.getsockname()[1]
        self.flowing = threading.Event()
        self.flowing.set()
        self.sockets: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def freeze(self) -> None:
        self.flowing.clear()

    def thaw(self) -> None:
        self.flowing.set()

    def close(self) -> None:
        self.thaw()
        self.listener.close()
        for sock in self.sockets:
            sock.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            server = socket.create_connection(self.target)
            self.sockets += [client, server]
            threading.Thread(target=self._pump, args=(client, server), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(1 << 16):
                self.flowing.wait()  # frozen: taken, never passed on
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass


@pytest.fixture
def forwarder(pg_url: str) -> Iterator[Forwarder]:
    parts = urlsplit(pg_url)
    proxy = Forwarder((parts.hostname or "127.0.0.1", parts.port or 5432))
    yield proxy
    proxy.close()


def through(url: str, port: int) -> str:
    parts = urlsplit(url)
    user_at = f"{parts.username}@" if parts.username else ""
    return urlunsplit(parts._replace(netloc=f"{user_at}127.0.0.1:{port}"))


def test_a_frozen_postgresql_is_a_503_and_the_service_recovers_when_it_resumes(
    pg_url: str, forwarder: Forwarder
) -> None:
    url = through(pg_url, forwarder.port)
    settings = Settings(db=url, db_wait=1.0, poll_seconds=0.2)
    store = open_store(url, wait=settings.db_wait)
    try:
        t = Transcripts(store, settings=settings)
        member = t.create_account("member")
        space = t.create_workspace("team", [member["id"]])["id"]
        agent = t.create_agent(member["id"], space, "written while frozen")["id"]
        late = t.create_account("late")  # its token not yet seen by the server: /api/me asks the database
        with ServerThread(t) as server:
            headers = {"Authorization": f"Bearer {member['token']}"}
            message = new_id()
            body = user("before", message)
            put = f"{server.url}/api/agents/{agent}/messages/{message}"
            assert httpx.put(put, json=body, headers=headers, timeout=30).status_code in (200, 201)
            page = f"{server.url}/api/agents/{agent}/messages"
            assert httpx.get(page, params={"parts": "cut"}, headers=headers, timeout=30).status_code == 200  # kept
            forwarder.freeze()
            try:
                cut = httpx.get(page, params={"parts": "cut"}, headers=headers, timeout=30)  # its check asks the db
                assert cut.status_code == 503 and cut.headers["Retry-After"], cut.text
                # Each would hang as long as the server stays frozen: the client's timeout is the bound.
                again = new_id()
                written = httpx.put(f"{server.url}/api/agents/{agent}/messages/{again}", json=user("frozen", again),
                                    headers=headers, timeout=30)  # fmt: skip
                assert written.status_code == 503 and written.headers["Retry-After"], written.text
                assert written.json()["error"]["code"] == "unavailable"
                me = httpx.get(f"{server.url}/api/me", headers={"Authorization": f"Bearer {late['token']}"}, timeout=30)
                assert me.status_code == 503 and me.headers["Retry-After"], me.text
            finally:
                forwarder.thaw()
            answers = []
            for _ in range(20):  # the next request tries again: no restart
                me = httpx.get(f"{server.url}/api/me", headers={"Authorization": f"Bearer {late['token']}"}, timeout=30)
                answers.append(me.status_code)
                if me.status_code == 200:
                    break
                time.sleep(0.5)
            assert answers[-1] == 200, answers
            again = new_id()
            written = httpx.put(f"{server.url}/api/agents/{agent}/messages/{again}", json=user("after", again),
                                headers=headers, timeout=30)  # fmt: skip
            assert written.status_code in (200, 201), written.text
    finally:
        store.close()
