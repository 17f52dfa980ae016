"""PostgreSQL, for teams: any number of ``foldline serve`` processes share one database."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Connection, create_engine, text
from sqlalchemy.dialects.postgresql import insert as pg_insert

from .base import Store


class PostgresStore(Store):
    def __init__(self, url: str) -> None:
        self.url = url
        self.engine = create_engine(url, pool_size=10, max_overflow=20, pool_pre_ping=True)

    @contextmanager
    def read(self) -> Iterator[Connection]:
        # One snapshot per read, so a page's messages and parts come from the same moment.
        with self.engine.connect().execution_options(isolation_level="REPEATABLE READ") as conn, conn.begin():
            yield conn

    def lock_migrations(self, conn: Connection) -> None:
        conn.execute(text("SELECT pg_advisory_xact_lock(7438210)"))

    def upsert(self, table: Any, values: dict[str, Any], keys: Sequence[str], update_cols: Sequence[str]) -> Any:
        stmt = pg_insert(table).values(**values)
        if not update_cols:
            return stmt.on_conflict_do_nothing(index_elements=list(keys))
        return stmt.on_conflict_do_update(index_elements=list(keys), set_={c: stmt.excluded[c] for c in update_cols})
