"""SQLite: the embedded default. One file, WAL, one writer at a time (``BEGIN IMMEDIATE``)."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from sqlalchemy import ColumnElement, Connection, FromClause, column, create_engine, event, func, table, text
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from .base import Store
from .schema import part_text
from .terms import contains, fts_query, indexed

# The chunks' FTS5 index: trigrams, case folded, over part_text.text (stored once: external content).
FTS = table("part_text_fts", column("rowid"), column("text"))


class SQLiteStore(Store):
    def __init__(self, url: str) -> None:
        self.url = url
        self.engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})
        self._writer = threading.Lock()
        event.listen(self.engine, "connect", _on_connect)
        event.listen(self.engine, "begin", _on_begin)

    @contextmanager
    def write(self) -> Iterator[Connection]:
        # One writer per process at a time; BEGIN IMMEDIATE (and busy_timeout) between processes.
        with self._writer, self.engine.connect().execution_options(foldline_write=True) as conn, conn.begin():
            yield conn

    def dialect_insert(self, table: Any) -> Any:
        return sqlite_insert(table)

    def prepare_text_index(self, conn: Connection) -> None:
        conn.exec_driver_sql(
            "CREATE VIRTUAL TABLE part_text_fts USING fts5("
            "text, content='part_text', content_rowid='id', tokenize='trigram')"
        )

    def index_texts_after(self, conn: Connection, after_id: int) -> None:
        conn.execute(
            text(
                "INSERT INTO part_text_fts(rowid, text) SELECT id, foldline_fts_text(text) FROM part_text"
                " WHERE id > :after"
            ),
            {"after": after_id},
        )

    def index_texts(self, conn: Connection, conversation_id: str, message_id: str) -> None:
        conn.execute(
            text(
                "INSERT INTO part_text_fts(rowid, text) SELECT id, foldline_fts_text(text) FROM part_text"
                " WHERE conversation_id = :conv AND message_id = :message"
            ),
            {"conv": conversation_id, "message": message_id},
        )

    def unindex_texts(self, conn: Connection, conversation_id: str, message_id: str) -> None:
        # An external-content table forgets a row only when told its old text.
        conn.execute(
            text(
                "INSERT INTO part_text_fts(part_text_fts, rowid, text)"
                " SELECT 'delete', id, foldline_fts_text(text) FROM part_text"
                " WHERE conversation_id = :conv AND message_id = :message"
            ),
            {"conv": conversation_id, "message": message_id},
        )

    def text_match(self, terms: Sequence[str]) -> tuple[FromClause, ColumnElement[Any], list[ColumnElement[Any]]]:
        # Trigram MATCH for terms of 3 code points or more; shorter ones (no trigram to look up)
        # are checked row by row by the same Python test the hits use (such a query scans).
        long, short = [t for t in terms if indexed(t)], [t for t in terms if not indexed(t)]
        conditions: list[ColumnElement[Any]] = [func.foldline_contains(part_text.c.text, t) == 1 for t in short]
        if not long:
            return part_text, part_text.c.id, conditions
        source = FTS.join(part_text, part_text.c.id == FTS.c.rowid)
        return source, FTS.c.rowid, [FTS.c.text.match(fts_query(long)), *conditions]


def _on_connect(dbapi_conn: Any, record: Any) -> None:
    # Let SQLAlchemy's "begin" event issue BEGIN itself, so writes can say IMMEDIATE.
    dbapi_conn.isolation_level = None
    cursor = dbapi_conn.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.close()
    dbapi_conn.create_function("foldline_contains", 2, _contains, deterministic=True)
    dbapi_conn.create_function("foldline_fts_text", 1, _fts_text, deterministic=True)


def _fts_text(text: Any) -> Any:
    """A chunk's text as the FTS5 index is given it: FTS5 stops reading a text at a NUL, so each
    NUL is indexed as U+FFFD (the chunk itself keeps it; no query can hold a NUL)."""
    return text.replace("\x00", "\ufffd") if isinstance(text, str) else text


def _contains(haystack: Any, term: Any) -> int:
    return int(isinstance(haystack, str) and isinstance(term, str) and contains(haystack, term))


def _on_begin(conn: Connection) -> None:
    write = conn.get_execution_options().get("foldline_write", False)
    conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")
