"""PostgreSQL, for teams: any number of ``foldline serve`` processes share one database."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from sqlalchemy import Connection, create_engine, text
from sqlalchemy.dialects.postgresql import insert as pg_insert

from .base import Store

CHANNEL = "foldline_changes"
log = logging.getLogger("foldline")


class PostgresStore(Store):
    def __init__(self, url: str) -> None:
        self.url = url
        self.engine = create_engine(url, pool_size=10, max_overflow=20, pool_pre_ping=True)

    @contextmanager
    def read(self) -> Iterator[Connection]:
        # One snapshot per read, so a page's messages and parts come from the same moment.
        with self.engine.connect().execution_options(isolation_level="REPEATABLE READ") as conn, conn.begin():
            yield conn

    def announce(self, conn: Connection, conversation_id: str) -> None:
        conn.execute(text("SELECT pg_notify(:channel, :id)"), {"channel": CHANNEL, "id": conversation_id})

    def listen(self, callback: Callable[[str], None]) -> Callable[[], None]:
        stop = threading.Event()
        url = self.engine.url.set(drivername="postgresql").render_as_string(hide_password=False)
        thread = threading.Thread(target=_listen, args=(url, callback, stop), daemon=True, name="foldline-listen")
        thread.start()
        return stop.set

    def lock_migrations(self, conn: Connection) -> None:
        conn.execute(text("SELECT pg_advisory_xact_lock(7438210)"))

    def dialect_insert(self, table: Any) -> Any:
        return pg_insert(table)


def _listen(url: str, callback: Callable[[str], None], stop: threading.Event) -> None:
    """LISTEN for other processes' writes until ``stop``; reconnect after a lost connection."""
    while not stop.is_set():
        try:
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute(f"LISTEN {CHANNEL}")
                while not stop.is_set():
                    for notice in conn.notifies(timeout=1.0):
                        callback(notice.payload)
        except psycopg.Error as exc:
            log.warning("lost the PostgreSQL notice connection (%s); polling until it is back", exc)
            stop.wait(2.0)
