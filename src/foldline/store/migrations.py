"""The numbered migrations, each frozen as it was first shipped.

A migration never reads today's table definitions (``schema.py``): those change as the schema
grows, and an old store must be brought forward by exactly the steps a new one went through.
So each migration holds its own copy of the tables it creates, in a private ``MetaData``.
Dialect-specific statements (the SQLite FTS5 table, PostgreSQL's ``pg_trgm``) come from the
store's backend through :class:`Backend`.
"""

from __future__ import annotations

import logging
from typing import Any

import orjson
from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Connection,
    Index,
    Integer,
    MetaData,
    Row,
    Select,
    String,
    Table,
    Text,
    UniqueConstraint,
    func,
    insert,
    select,
    tuple_,
)

from ..search.fields import searchable
from .backend import Backend
from .chunks import FieldText, chunk_rows

log = logging.getLogger("foldline")
ID = 36
BACKFILL_BATCH = 200  # parts read per step of migration 2


# -- 1: accounts, workspaces, conversations, messages, parts (as first shipped) ------------

v1 = MetaData()

Table(
    "accounts",
    v1,
    Column("id", String(ID), primary_key=True),
    Column("name", Text, nullable=False),
    Column("created_at", Text, nullable=False),
)
Table(
    "tokens",
    v1,
    Column("hash", String(64), primary_key=True),
    Column("account_id", String(ID), nullable=False, index=True),
    Column("label", Text, nullable=False, default=""),
    Column("created_at", Text, nullable=False),
)
Table(
    "workspaces",
    v1,
    Column("id", String(ID), primary_key=True),
    Column("name", Text, nullable=False),
    Column("created_at", Text, nullable=False),
)
Table(
    "members",
    v1,
    Column("workspace_id", String(ID), primary_key=True),
    Column("account_id", String(ID), primary_key=True),
    Index("members_by_account", "account_id", "workspace_id"),
)
Table(
    "conversations",
    v1,
    Column("id", String(ID), primary_key=True),
    Column("workspace_id", String(ID), nullable=False),
    Column("owner_id", String(ID), nullable=False),
    Column("parent_id", String(ID)),
    Column("call_id", Text),
    Column("title", Text),
    Column("seq", Integer, nullable=False, default=0),
    Column("created_at", Text, nullable=False),
    Column("updated_at", Text, nullable=False),
    UniqueConstraint("parent_id", "call_id", name="subagent_by_call"),
    Index("agents_by_workspace", "workspace_id", "updated_at"),
)
Table(
    "messages",
    v1,
    Column("conversation_id", String(ID), primary_key=True),
    Column("id", String(ID), primary_key=True),
    Column("owner_id", String(ID), nullable=False),
    Column("position", Integer, nullable=False),
    Column("seq", Integer, nullable=False),
    Column("role", String(16), nullable=False),
    Column("head", Text, nullable=False),
    Column("created_at", Text, nullable=False),
    Column("updated_at", Text, nullable=False),
    Index("messages_by_position", "conversation_id", "position"),
    Index("messages_by_seq", "conversation_id", "seq"),
)
v1_parts = Table(
    "parts",
    v1,
    Column("conversation_id", String(ID), primary_key=True),
    Column("message_id", String(ID), primary_key=True),
    Column("idx", Integer, primary_key=True),
    Column("position", Integer, nullable=False),
    Column("seq", Integer, nullable=False),
    Column("tool", Text),
    Column("cut_body", Text),
    Column("cut_ref", Text),
    Column("body", Text, nullable=False),
    Index("parts_by_position", "conversation_id", "position", "idx"),
    Index("parts_by_seq", "conversation_id", "seq"),
)
Table(
    "imports",
    v1,
    Column("source", Text, primary_key=True),
    Column("state", Text, nullable=False),
    Column("done", Boolean, nullable=False, default=False),
    Column("updated_at", Text, nullable=False),
)


def create_v1(conn: Connection, backend: Backend) -> None:
    v1.create_all(conn)


# -- 2: searchable text in chunks, indexed by the engine (FTS5 trigram / pg_trgm) --------

v2 = MetaData()

v2_part_text = Table(
    "part_text",
    v2,
    Column("id", BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True),
    Column("conversation_id", String(ID), nullable=False),
    Column("message_id", String(ID), nullable=False),
    Column("idx", Integer, nullable=False),
    Column("field", String(16), nullable=False),
    Column("start", BigInteger, nullable=False),
    Column("length", BigInteger, nullable=False),
    Column("owned", Integer, nullable=False),
    Column("shown", Integer),
    Column("text", Text, nullable=False),
    Index("part_text_by_part", "conversation_id", "message_id", "idx", "field", "start", unique=True),
    sqlite_autoincrement=True,
)


def create_v2(conn: Connection, backend: Backend) -> None:
    """Make the chunk table and its text index, and index every part already stored."""
    v2.create_all(conn)
    backend.prepare_text_index(conn)
    total = conn.execute(select(func.count()).select_from(v1_parts)).scalar_one()
    done, after = 0, None
    while True:
        batch = conn.execute(_parts_after(after)).all()
        if not batch:
            break
        last_id = conn.execute(select(func.coalesce(func.max(v2_part_text.c.id), 0))).scalar_one()
        rows = [row for part in batch for row in _text_rows(part)]
        if rows:
            conn.execute(insert(v2_part_text), rows)
            backend.index_texts_after(conn, int(last_id))
        done += len(batch)
        after = (batch[-1].conversation_id, batch[-1].message_id, batch[-1].idx)
        log.info("search index: %d of %d parts", done, total)
    backend.finish_text_index(conn)


def _parts_after(after: tuple[str, str, int] | None) -> Select[Any]:
    p = v1_parts.c
    query = select(p.conversation_id, p.message_id, p.idx, p.cut_ref, p.body)
    if after is not None:
        query = query.where(tuple_(p.conversation_id, p.message_id, p.idx) > tuple_(*after))
    return query.order_by(p.conversation_id, p.message_id, p.idx).limit(BACKFILL_BATCH)


def _text_rows(row: Row[Any]) -> list[dict[str, object]]:
    """The chunk rows of one stored part (a damaged row has none)."""
    try:
        part = orjson.loads(row.body)
        ref = orjson.loads(row.cut_ref) if row.cut_ref else None
    except orjson.JSONDecodeError:
        return []
    cut_field, shown = None, None
    if isinstance(ref, dict) and isinstance(ref.get("head"), str):
        cut_field, shown = ref.get("field"), len(ref["head"])
    out: list[dict[str, object]] = []
    for field, text in searchable(part):
        texts = FieldText(field, text, shown if field == cut_field else None)
        out += chunk_rows(row.conversation_id, row.message_id, row.idx, texts)
    return out


# -- 3: tokens that expire, and when each was last used ----------------------------------------


def tokens_v3(conn: Connection, backend: Backend) -> None:
    """``tokens.expires_at`` (none: it never expires) and ``tokens.last_used_at``, both ISO 8601 UTC."""
    conn.exec_driver_sql("ALTER TABLE tokens ADD COLUMN expires_at TEXT")
    conn.exec_driver_sql("ALTER TABLE tokens ADD COLUMN last_used_at TEXT")


# -- 5: messages.checked, the read stamp a message's write was validated under --------------


def add_v5_checked(conn: Connection, backend: Backend) -> None:
    """A nullable column: messages stored before it (NULL) keep every read-time check."""
    conn.exec_driver_sql("ALTER TABLE messages ADD COLUMN checked TEXT")


# -- 6: the text index keeps rows, not positions (SQLite FTS5 detail='none') -------------------


def text_index_v6(conn: Connection, backend: Backend) -> None:
    """SQLite's FTS5 table made anew without positions and every chunk indexed again, logging
    its progress (PostgreSQL's GIN index is left as it is)."""
    backend.rebuild_text_index(conn)


# -- 7: the agents list's facts and totals, each message's usage, usage by agent, day and model --

v7 = MetaData()

Table(
    "usage_totals",
    v7,
    Column("agent_id", String(ID), primary_key=True),
    Column("day", String(10), primary_key=True),
    Column("model", Text, primary_key=True),
    Column("messages", Integer, nullable=False, default=0),
    Column("input_tokens", BigInteger, nullable=False, default=0),
    Column("output_tokens", BigInteger, nullable=False, default=0),
    Column("cache_read_tokens", BigInteger, nullable=False, default=0),
    Column("cache_write_tokens", BigInteger, nullable=False, default=0),
    Column("cost", BigInteger, nullable=False, default=0),
    Column("unpriced", Integer, nullable=False, default=0),
)

V7_CONVERSATIONS = (
    "source TEXT", "project TEXT", "branch TEXT", "model TEXT",
    "messages INTEGER NOT NULL DEFAULT 0",
    "input_tokens BIGINT NOT NULL DEFAULT 0", "output_tokens BIGINT NOT NULL DEFAULT 0",
    "cache_read_tokens BIGINT NOT NULL DEFAULT 0", "cache_write_tokens BIGINT NOT NULL DEFAULT 0",
    "cost BIGINT NOT NULL DEFAULT 0", "unpriced INTEGER NOT NULL DEFAULT 0",
)  # fmt: skip
V7_MESSAGES = (
    "model TEXT", "day VARCHAR(10)", "input_tokens BIGINT", "output_tokens BIGINT", "cache_read_tokens BIGINT",
    "cache_write_tokens BIGINT", "cost BIGINT",
)  # fmt: skip


def agents_v7(conn: Connection, backend: Backend) -> None:
    """New columns (messages stored before it report no usage until they are written again) and
    ``usage_totals``; each agent's message count, its subagents' included, counted once here."""
    for column in V7_CONVERSATIONS:
        conn.exec_driver_sql(f"ALTER TABLE conversations ADD COLUMN {column}")
    for column in V7_MESSAGES:
        conn.exec_driver_sql(f"ALTER TABLE messages ADD COLUMN {column}")
    v7.create_all(conn)
    conn.exec_driver_sql(
        "UPDATE conversations SET messages = (SELECT count(*) FROM messages m JOIN conversations s"
        " ON s.id = m.conversation_id WHERE s.id = conversations.id OR s.parent_id = conversations.id)"
        " WHERE parent_id IS NULL"
    )


# -- 8: the chunks' text compressed with lz4 where the engine has it (PostgreSQL) ---------------


def chunks_lz4_v8(conn: Connection, backend: Backend) -> None:
    """New chunk rows' text compressed with lz4 rather than pglz on PostgreSQL (a third of a
    write's cost of the chunk rows, measured in ``docs/benchmarks.md``); the rows already stored
    keep pglz, which PostgreSQL reads as before, so nothing is rewritten. SQLite: nothing."""
    backend.compress_text_chunks(conn)


# -- 9: chunks indexed after the write's commit (part_text.pending, the pending ids) ------------


def index_later_v9(conn: Connection, backend: Backend) -> None:
    """``part_text.pending``: false for every chunk stored before (each was indexed in its
    write), true for a chunk written since until the indexer has added it to the engine's index;
    and what the backend needs to build its index after the commit (:meth:`Backend.index_later`:
    the pending ids' partial index, SQLite's queue of rows to forget, PostgreSQL's GIN index made
    partial, over the indexed chunks only)."""
    conn.exec_driver_sql("ALTER TABLE part_text ADD COLUMN pending BOOLEAN NOT NULL DEFAULT FALSE")
    backend.index_later(conn)


# -- 10: share links: one agent's transcript, read by whoever holds the link ------------------

v10 = MetaData()

Table(
    "shares",
    v10,
    Column("id", String(ID), primary_key=True),
    Column("hash", String(64), nullable=False, unique=True),
    Column("agent_id", String(ID), nullable=False, index=True),
    Column("account_id", String(ID), nullable=False),
    Column("created_at", Text, nullable=False),
    Column("expires_at", Text),
)


def shares_v10(conn: Connection, backend: Backend) -> None:
    """``shares``: a link's id, the SHA-256 hash of its token (never the token), the agent it
    opens, the member who made it, and when it expires (none: never)."""
    v10.create_all(conn)


# -- 11: big parts' JSON in pieces, written in short transactions before their message --------

v11 = MetaData()

Table(
    "part_pieces",
    v11,
    Column("key", Text, primary_key=True),
    Column("n", Integer, primary_key=True),
    Column("bytes", BigInteger, nullable=False),
    Column("text", Text, nullable=False),
)


def pieces_v11(conn: Connection, backend: Backend) -> None:
    """``parts.pieces`` (the key of a body stored in pieces; NULL: the body is in ``parts.body``,
    as every part stored before) and ``part_pieces``; the pieces' keys a part names are indexed,
    so the sweep finds the pieces no part names."""
    conn.exec_driver_sql("ALTER TABLE parts ADD COLUMN pieces TEXT")
    conn.exec_driver_sql("CREATE INDEX parts_by_pieces ON parts (pieces) WHERE pieces IS NOT NULL")
    v11.create_all(conn)


# -- 12: the pending chunks kept folded for the search's walk (PostgreSQL) -------------------


def fold_pending_v12(conn: Connection, backend: Backend) -> None:
    """PostgreSQL: ``part_text.folded``, a pending chunk's text as ``lower()`` folds it, kept
    by a trigger from the write until the indexer marks the chunk indexed (then ``NULL``), so
    the search's walk of the backlog looks for a substring where ``ILIKE`` folds every chunk it
    reads (:meth:`~.backend.Backend.fold_pending`; the chunks pending now are folded here).
    SQLite: nothing."""
    backend.fold_pending(conn)
