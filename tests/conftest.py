"""Fixtures: a real SQLite file and a real PostgreSQL database, the real app in process and over real HTTP.

PostgreSQL is found at ``FOLDLINE_TEST_PG`` (default ``postgresql://postgres@127.0.0.1:5432/test``);
each run makes a fresh database there and drops it afterwards.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import psycopg
import pytest
from servers import InProcess, ServerThread

from foldline import Client
from foldline.app import create_app
from foldline.service import Transcripts
from foldline.settings import Settings
from foldline.store import Store, open_store

PG_ADMIN = os.environ.get("FOLDLINE_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")
BACKENDS = ["sqlite", "postgres"]
IN_PROCESS_URL = "http://foldline.test"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """What drives Chromium (tests/browser) is slow too: ``-m "not slow"`` leaves it out with the rest."""
    for item in items:
        if item.path.parent.name == "browser" or item.get_closest_marker("browser"):
            item.add_marker(pytest.mark.slow)


@contextmanager
def pg_database(prefix: str) -> Iterator[str]:
    """A PostgreSQL database of its own, made at ``PG_ADMIN``'s server and dropped after."""
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    try:
        admin = psycopg.connect(PG_ADMIN, autocommit=True, connect_timeout=5)
    except psycopg.OperationalError as exc:
        pytest.fail(f"PostgreSQL is needed at {PG_ADMIN} (set FOLDLINE_TEST_PG): {exc}")
    with admin:
        admin.execute(f'CREATE DATABASE "{name}"')
        try:
            yield f"{PG_ADMIN.rsplit('/', 1)[0]}/{name}"
        finally:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="session")
def pg_url() -> Iterator[str]:
    with pg_database("foldline_test") as url:
        yield url


def make_url(backend: str, tmp: Path, request: pytest.FixtureRequest) -> str:
    if backend == "sqlite":
        return str(tmp / "foldline.db")
    url: str = request.getfixturevalue("pg_url")
    return url


@pytest.fixture(scope="session", params=BACKENDS)
def db_url(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> str:
    return make_url(request.param, tmp_path_factory.mktemp(request.param), request)


@pytest.fixture(params=BACKENDS)
def fresh_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A database of each backend that no store has opened yet (for migrations from the start)."""
    if request.param == "sqlite":
        yield str(tmp_path / "fresh.db")
        return
    with pg_database("foldline_fresh") as url:
        yield url


@pytest.fixture(scope="session")
def settings(db_url: str) -> Settings:
    return Settings(db=db_url, max_body=8 * 1024 * 1024, poll_seconds=0.2)


@pytest.fixture(scope="session")
def store(db_url: str) -> Iterator[Store]:
    s = open_store(db_url)
    yield s
    s.close()


@pytest.fixture(scope="session")
def transcripts(store: Store, settings: Settings) -> Transcripts:
    return Transcripts(store, settings=settings)


@pytest.fixture(scope="session")
def server(transcripts: Transcripts) -> Iterator[ServerThread]:
    with ServerThread(transcripts) as running:
        yield running


@pytest.fixture(scope="session")
def in_process(transcripts: Transcripts) -> Iterator[InProcess]:
    """The app in this process, no socket: what most API tests talk to."""
    transport = InProcess(create_app(transcripts))
    yield transport
    transport.stop()


@dataclass
class World:
    """Two accounts: ``alice`` owns a workspace and an agent in it; ``bob`` is in neither.

    ``alice`` and ``bob`` talk to the app in this process; ``url`` is a real server on the same
    database, for what needs a socket (event streams, raw HTTP, a second client).
    """

    url: str
    alice: Client
    bob: Client
    alice_id: str
    bob_id: str
    alice_token: str
    bob_token: str
    workspace: str
    agent: str
    http: httpx.Client
    transport: InProcess

    def client(self, token: str) -> Client:
        """Another account's client, in process too."""
        return Client(IN_PROCESS_URL, token, transport=self.transport)


@pytest.fixture
def world(server: ServerThread, in_process: InProcess, transcripts: Transcripts) -> Iterator[World]:
    alice = transcripts.create_account("alice")
    bob = transcripts.create_account("bob")
    workspace = transcripts.create_workspace("team", [alice["id"]])
    with (
        Client(IN_PROCESS_URL, alice["token"], transport=in_process) as a,
        Client(IN_PROCESS_URL, bob["token"], transport=in_process) as b,
        httpx.Client(base_url=IN_PROCESS_URL, transport=in_process) as http,
    ):
        agent = a.create_agent(workspace["id"], title="fix the build")
        ids = (alice["id"], bob["id"], alice["token"], bob["token"], workspace["id"], agent["id"])
        yield World(server.url, a, b, *ids, http, in_process)
