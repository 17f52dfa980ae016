"""PostgreSQL, for teams: any number of ``foldline serve`` processes share one database."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import psycopg
from sqlalchemy import ColumnElement, Connection, FromClause, create_engine, select, text
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.exc import DBAPIError

from .base import Store
from .schema import part_text
from .terms import like_pattern

NEED_PG_TRGM = (
    "search needs the PostgreSQL extension pg_trgm, and this database role may not create it; "
    "run `CREATE EXTENSION pg_trgm;` in this database as a superuser (or the database owner), then start again"
)

CHANNEL = "foldline_changes"
RECENT_BUDGET = 128  # newest chunks a search reads straight before it asks the trigram index
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

    def after_migrating(self) -> None:
        # Statistics from the start, so the planner keeps the writes' lookups on their indexes
        # even where autovacuum is off or has not come round yet.
        with self.write() as conn:
            conn.exec_driver_sql("ANALYZE")

    def lock_migrations(self, conn: Connection) -> None:
        conn.execute(text("SELECT pg_advisory_xact_lock(7438210)"))

    def dialect_insert(self, table: Any) -> Any:
        return pg_insert(table)

    def prepare_text_index(self, conn: Connection) -> None:
        try:
            with conn.begin_nested():
                conn.exec_driver_sql("CREATE EXTENSION IF NOT EXISTS pg_trgm")
        except DBAPIError as exc:
            if isinstance(exc.orig, psycopg.errors.InsufficientPrivilege):
                raise RuntimeError(NEED_PG_TRGM) from None
            raise

    def finish_text_index(self, conn: Connection) -> None:
        # Built once the existing parts are in (faster than growing it row by row); kept by
        # PostgreSQL itself from then on, in each write's transaction.
        conn.exec_driver_sql("CREATE INDEX part_text_trgm ON part_text USING gin (text gin_trgm_ops)")

    def text_match(self, terms: Sequence[str]) -> tuple[FromClause, ColumnElement[Any], list[ColumnElement[Any]]]:
        # ILIKE with %, _ and \ escaped; the GIN index serves terms of 3 code points or more.
        return part_text, part_text.c.id, [part_text.c.text.ilike(like_pattern(t), escape="\\") for t in terms]

    def matching_ids(
        self, conn: Connection, terms: Sequence[str], visible: Any, upto: int | None, limit: int
    ) -> list[int] | None:
        """Two paths, chosen here rather than by the planner, which cannot price the chunks'
        TOAST: first the newest chunks of the visible conversations, read straight up to a small
        budget (a common word fills the page there); then, if the page is not full, the trigram
        index alone, made to run first (a rare word: a bitmap of the few chunks that can hold it),
        and only its matches are kept to the visible conversations and ordered."""
        t = part_text.c
        scope: list[ColumnElement[bool]] = [t.conversation_id.in_(visible.scalar_subquery())]
        if upto is not None:
            scope.append(t.id <= upto)
        recent = select(t.id, t.text).where(*scope).order_by(t.id.desc()).limit(RECENT_BUDGET).cte("recent")
        first = (
            select(recent.c.id)
            .where(*(recent.c.text.ilike(like_pattern(term), escape="\\") for term in terms))
            .order_by(recent.c.id.desc())
            .limit(limit)
        )
        found = list(conn.execute(first).scalars())
        if len(found) >= limit:
            return found
        conn.exec_driver_sql("SET LOCAL enable_seqscan = off")
        matched = [t.text.ilike(like_pattern(term), escape="\\") for term in terms]
        bounded = [t.id <= upto] if upto is not None else []
        hits = select(t.id, t.conversation_id).where(*matched, *bounded).cte("hits").prefix_with("MATERIALIZED")
        rest = (
            select(hits.c.id)
            .where(hits.c.conversation_id.in_(visible.scalar_subquery()))
            .order_by(hits.c.id.desc())
            .limit(limit)
        )
        return list(conn.execute(rest).scalars())

    def plan_search(self, conn: Connection) -> None:
        # The chunks live in TOAST, whose reading the planner does not cost: left alone it scans
        # the whole table for a rare word (seconds) instead of asking the GIN index (milliseconds).
        # Index scans stay open to it, so a common word still walks the ids backwards and stops early.
        conn.exec_driver_sql("SET LOCAL enable_seqscan = off")

    def storable_text(self, text: str) -> str:
        # PostgreSQL text cannot hold NUL: it is kept as U+FFFD (one code point for one, so offsets hold).
        return text.replace("\x00", "\ufffd")


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
