"""SQLite: the embedded default. One file, WAL, one writer at a time (``BEGIN IMMEDIATE``).

``synchronous=FULL`` by default: in WAL mode every commit syncs the log, so a write the API
acknowledged survives a power loss. ``normal`` syncs only at checkpoints: faster, and still safe
against a crash of the process, but a power loss may drop the last acknowledged writes.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import watchfiles
from sqlalchemy import Connection, create_engine, event
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from .base import SOMETHING, Store

log = logging.getLogger("foldline")


class SQLiteStore(Store):
    def __init__(self, url: str, synchronous: str = "full") -> None:
        self.url = url
        self.engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})
        self._writer = threading.Lock()
        mode = "NORMAL" if synchronous.lower() == "normal" else "FULL"
        event.listen(self.engine, "connect", lambda conn, record: _on_connect(conn, mode))
        event.listen(self.engine, "begin", _on_begin)

    @contextmanager
    def write(self) -> Iterator[Connection]:
        # One writer per process at a time; BEGIN IMMEDIATE (and busy_timeout) between processes.
        with self._writer, self.engine.connect().execution_options(foldline_write=True) as conn, conn.begin():
            yield conn

    def dialect_insert(self, table: Any) -> Any:
        return sqlite_insert(table)

    def listen(self, callback: Callable[[str], None]) -> Callable[[], None]:
        """Say ``SOMETHING`` when another process writes to this file: SQLite has no notices, but
        every commit writes its write-ahead log, and the operating system tells who watches it."""
        database = self.engine.url.database
        if not database or database == ":memory:":
            return lambda: None
        stop = threading.Event()
        thread = threading.Thread(
            target=_watch_log, args=(Path(database), callback, stop), daemon=True, name="foldline-wal-watch"
        )
        thread.start()
        return stop.set


def _watch_log(database: Path, callback: Callable[[str], None], stop: threading.Event) -> None:
    names = {database.name, database.name + "-wal"}

    def ours(change: watchfiles.Change, path: str) -> bool:
        return Path(path).name in names

    try:
        watching = watchfiles.watch(
            database.parent, watch_filter=ours, stop_event=stop, debounce=10, step=10, recursive=False
        )
        for _ in watching:
            callback(SOMETHING)
    except Exception:  # without it, live follow still finds other processes' writes by polling
        log.warning("cannot watch %s for other processes' writes; polling instead", database, exc_info=True)


def _on_connect(dbapi_conn: Any, synchronous: str) -> None:
    # Let SQLAlchemy's "begin" event issue BEGIN itself, so writes can say IMMEDIATE.
    dbapi_conn.isolation_level = None
    cursor = dbapi_conn.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute(f"PRAGMA synchronous={synchronous}")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.close()


def _on_begin(conn: Connection) -> None:
    write = conn.get_execution_options().get("foldline_write", False)
    conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")
