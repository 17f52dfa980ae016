"""Migrations run once, however many processes start on a fresh database at the same moment.

PostgreSQL serialises them with an advisory lock, SQLite with its write lock; each starter
has its own store (its own engine and connections), as separate ``foldline serve`` processes do.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from conftest import BACKENDS, PG_ADMIN
from sqlalchemy import select

from foldline.store import Store, open_store
from foldline.store.schema import MIGRATIONS, migrations_table

STARTERS = 6


@pytest.fixture(params=BACKENDS)
def fresh_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A database no store has opened yet."""
    if request.param == "sqlite":
        yield str(tmp_path / "fresh.db")
        return
    name = f"foldline_fresh_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(PG_ADMIN, autocommit=True, connect_timeout=5) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
        try:
            yield f"{PG_ADMIN.rsplit('/', 1)[0]}/{name}"
        finally:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


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
