"""The throwaway databases every benchmark runs on: a SQLite file in a temporary folder, and a
fresh PostgreSQL database made at ``FOLDLINE_BENCH_PG`` (default: the local server's ``postgres``
database, trust auth) and dropped afterwards."""

from __future__ import annotations

import os
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg

PG_ADMIN = os.environ.get("FOLDLINE_BENCH_PG", "postgresql://postgres@127.0.0.1:5432/postgres")


@contextmanager
def sqlite_url() -> Iterator[str]:
    with tempfile.TemporaryDirectory(prefix="foldline-bench-") as tmp:
        yield str(Path(tmp) / "bench.db")


@contextmanager
def postgres_url() -> Iterator[str]:
    name = f"foldline_bench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(PG_ADMIN, autocommit=True, connect_timeout=5) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
        try:
            yield f"{PG_ADMIN.rsplit('/', 1)[0]}/{name}"
        finally:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
