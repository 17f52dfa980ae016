"""Tables and numbered migrations, the same on SQLite and PostgreSQL.

Each migration runs once, in order, in its own transaction, and is recorded in the
``foldline_migrations`` ledger.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Connection,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)

from .backend import Backend
from .migrations import (
    add_v5_checked,
    agents_v7,
    chunks_lz4_v8,
    create_v1,
    create_v2,
    fold_pending_v12,
    index_later_v9,
    pieces_v11,
    shares_v10,
    text_index_v6,
    tokens_v3,
)

metadata = MetaData()

ID = 36  # a UUID as text

migrations_table = Table(
    "foldline_migrations",
    metadata,
    Column("version", Integer, primary_key=True),
    Column("name", Text, nullable=False),
    Column("applied_at", Text, nullable=False),
)

accounts = Table(
    "accounts",
    metadata,
    Column("id", String(ID), primary_key=True),
    Column("name", Text, nullable=False),
    Column("created_at", Text, nullable=False),
)

tokens = Table(
    "tokens",
    metadata,
    Column("hash", String(64), primary_key=True),
    Column("account_id", String(ID), nullable=False, index=True),
    Column("label", Text, nullable=False, default=""),
    Column("created_at", Text, nullable=False),
    Column("expires_at", Text),  # ISO 8601 UTC; none: the token never expires (migration 3)
    Column("last_used_at", Text),  # written at most every few minutes, not on every request
)

# A share link (migration 10): whoever holds its token reads one agent and its subagents, as the
# member who made it may; stored by the token's SHA-256 hash only, like `tokens`.
shares = Table(
    "shares",
    metadata,
    Column("id", String(ID), primary_key=True),
    Column("hash", String(64), nullable=False, unique=True),
    Column("agent_id", String(ID), nullable=False, index=True),
    Column("account_id", String(ID), nullable=False),
    Column("created_at", Text, nullable=False),
    Column("expires_at", Text),  # ISO 8601 UTC; none: the link never expires
)

workspaces = Table(
    "workspaces",
    metadata,
    Column("id", String(ID), primary_key=True),
    Column("name", Text, nullable=False),
    Column("created_at", Text, nullable=False),
)

members = Table(
    "members",
    metadata,
    Column("workspace_id", String(ID), primary_key=True),
    Column("account_id", String(ID), primary_key=True),
    Index("members_by_account", "account_id", "workspace_id"),
)

# An agent, or a subagent (parent_id and call_id set). `seq` counts its writes: each message
# write takes the next value, which orders new messages and feeds the live event stream.
# What the agents list shows is kept on the agent's row by each message write, in the write's
# transaction (migration 7): where it ran (`source`, `project`, `branch`, `model`, from its own
# messages' metadata) and, counting its subagents' messages too, how many messages and tokens it
# holds and their estimated cost in picodollars (`unpriced`: messages with tokens and no price).
conversations = Table(
    "conversations",
    metadata,
    Column("id", String(ID), primary_key=True),
    Column("workspace_id", String(ID), nullable=False),
    Column("owner_id", String(ID), nullable=False),
    Column("parent_id", String(ID)),
    Column("call_id", Text),
    Column("title", Text),
    Column("seq", Integer, nullable=False, default=0),
    Column("created_at", Text, nullable=False),
    Column("updated_at", Text, nullable=False),
    Column("source", Text),
    Column("project", Text),
    Column("branch", Text),
    Column("model", Text),
    Column("messages", Integer, nullable=False, default=0),
    Column("input_tokens", BigInteger, nullable=False, default=0),
    Column("output_tokens", BigInteger, nullable=False, default=0),
    Column("cache_read_tokens", BigInteger, nullable=False, default=0),
    Column("cache_write_tokens", BigInteger, nullable=False, default=0),
    Column("cost", BigInteger, nullable=False, default=0),
    Column("unpriced", Integer, nullable=False, default=0),
    UniqueConstraint("parent_id", "call_id", name="subagent_by_call"),
    Index("agents_by_workspace", "workspace_id", "updated_at"),
)

# One row per message: everything but the parts (`head`), in JSON.
messages = Table(
    "messages",
    metadata,
    Column("conversation_id", String(ID), primary_key=True),
    Column("id", String(ID), primary_key=True),
    Column("owner_id", String(ID), nullable=False),
    Column("position", Integer, nullable=False),
    Column("seq", Integer, nullable=False),
    Column("role", String(16), nullable=False),
    Column("head", Text, nullable=False),
    Column("created_at", Text, nullable=False),
    Column("updated_at", Text, nullable=False),
    # The read stamp the write door validated it under (see Transcripts.read_stamp); NULL: check on read.
    Column("checked", Text),
    # Its token usage (migration 7; NULL: it reported none), the model, the UTC day it is counted
    # on and its estimated cost in picodollars (NULL: no price known): what a rewrite takes back.
    Column("model", Text),
    Column("day", String(10)),
    Column("input_tokens", BigInteger),
    Column("output_tokens", BigInteger),
    Column("cache_read_tokens", BigInteger),
    Column("cache_write_tokens", BigInteger),
    Column("cost", BigInteger),
    Index("messages_by_position", "conversation_id", "position"),
    Index("messages_by_seq", "conversation_id", "seq"),
)

# One row per part. `body` is the whole part; `cut_body` the part without its big field and
# `cut_ref` its `cutParts` entry, both computed at write time so a page never reads `body`.
# `body` comes last: SQLite lays a row out in column order and reaches a column past a big value
# only by walking that value's overflow pages, so a cut read would otherwise cost the whole body.
parts = Table(
    "parts",
    metadata,
    Column("conversation_id", String(ID), primary_key=True),
    Column("message_id", String(ID), primary_key=True),
    Column("idx", Integer, primary_key=True),
    Column("position", Integer, nullable=False),
    Column("seq", Integer, nullable=False),
    Column("tool", Text),
    Column("cut_body", Text),
    Column("cut_ref", Text),
    Column("body", Text, nullable=False),
    # A big part's JSON is stored in `part_pieces` under this key, `body` left empty (migration 11).
    Column("pieces", Text),
    Index("parts_by_position", "conversation_id", "position", "idx"),
    Index("parts_by_seq", "conversation_id", "seq"),
)

# A big part's JSON in pieces (`store/staging.py`, since migration 11): piece `n` of the body
# whose key a `parts` row names in `pieces`, its UTF-8 size in `bytes`. Written before the
# message in short transactions of their own, so no write holds the lock for the whole body;
# a key no part names is a body staged or left behind, which no read can reach.
part_pieces = Table(
    "part_pieces",
    metadata,
    Column("key", Text, primary_key=True),
    Column("n", Integer, primary_key=True),
    Column("bytes", BigInteger, nullable=False),
    Column("text", Text, nullable=False),
)

# Import bookkeeping: how far each source file has been read.
imports = Table(
    "imports",
    metadata,
    Column("source", Text, primary_key=True),
    Column("state", Text, nullable=False),
    Column("done", Boolean, nullable=False, default=False),
    Column("updated_at", Text, nullable=False),
)

# Searchable text (`fields.py`) in chunks (`chunks.py`): one row per chunk of one field of one
# part, replaced with its message. `id` only grows, so newest first is `id DESC` and a search
# cursor stays valid. `start` is the chunk's code-point offset in the field, `length` the
# field's, `owned` the code points the chunk owns (its `text` runs on into the next chunk),
# `shown` the head and tail length when the field is stored cut. The engine's index over `text`
# is the backend's: an FTS5 trigram table on SQLite, a pg_trgm GIN index on PostgreSQL. A chunk
# is written `pending` and the indexer (`store/index.py`) adds it to that index
# after the write's commit; a search reads the pending chunks directly (since migration 9).
part_text = Table(
    "part_text",
    metadata,
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
    Column("pending", Boolean, nullable=False),
    Index("part_text_by_part", "conversation_id", "message_id", "idx", "field", "start", unique=True),
    sqlite_autoincrement=True,
)

# Token usage summed by agent (its subagents included), UTC day and model ('' when none was
# given), kept by each message write in its transaction: what `foldline usage` reads.
usage_totals = Table(
    "usage_totals",
    metadata,
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

# Each migration is frozen in `migrations.py` with its own copy of the tables it made.
MIGRATIONS: list[tuple[int, str, Callable[[Connection, Backend], None]]] = [
    (1, "accounts, workspaces, conversations, messages, parts", create_v1),
    (2, "searchable text in chunks, indexed (FTS5 trigram / pg_trgm)", create_v2),
    (3, "tokens that expire, and when each was last used", tokens_v3),
    # 4 was never shipped.
    (5, "messages.checked: the read stamp a message was validated under", add_v5_checked),
    (6, "the text index keeps rows, not positions (SQLite FTS5 detail='none')", text_index_v6),
    (7, "the agents list's facts and totals, per-message usage, usage_totals", agents_v7),
    (8, "the chunks' text compressed with lz4 (PostgreSQL)", chunks_lz4_v8),
    (9, "chunks indexed after the write's commit: part_text.indexed, pending ids", index_later_v9),
    (10, "share links: an agent read by whoever holds the link", shares_v10),
    (11, "big parts' JSON in pieces, written before their message: part_pieces", pieces_v11),
    (12, "pending chunks kept folded for the search's walk (PostgreSQL)", fold_pending_v12),
]
