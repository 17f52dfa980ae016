"""The text index built after the write's commit: batches of pending chunks given to the
engine's index, and the backlog they are in.

A message's chunks are written pending in its own transaction (:mod:`.writes`); each batch here
is a short write transaction of its own (:meth:`~.backend.Backend.index_batch`), so a writer
waits at most one batch. Pending is a column, so a crash loses nothing: the next batch starts
where the last committed one ended. Until a chunk is indexed a search walks it (:mod:`.search`).
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import and_, func, select

from .core import RELAXED, Hooks
from .rows import Backlog
from .schema import conversations, members, messages, part_text

INDEX_BATCH = 64  # pending chunks indexed per transaction at most
# and about this many code points (SQLite: the batch holds the one write lock; four full chunks
# are about 55 ms of FTS5's trigram work at the 427 ns a code point of docs/benchmarks.md)
INDEX_BATCH_CHARS = 131_072


class TextIndex(Hooks):
    """The indexer's store side (mixed into :class:`~foldline.store.Store`)."""

    def index_pending(self, size: int = INDEX_BATCH, chars: int = INDEX_BATCH_CHARS) -> tuple[int, int]:
        """Index one batch of at most ``size`` pending chunks (and about ``chars`` code points),
        oldest first, in a transaction of its own; returns the chunks and code points indexed
        (none: the backlog is empty)."""
        # An index batch is derived from the chunks: one lost to a power loss leaves them pending,
        # to be indexed again. So its commit does not wait for the disk.
        token = RELAXED.set(True)
        try:
            with self.write() as conn:
                return self.index_batch(conn, size, chars)
        finally:
            RELAXED.reset(token)

    def has_pending(self) -> bool:
        """Whether the indexer has work (a read, by the pending chunks' partial index: an idle
        indexer asks this, and takes no write lock)."""
        with self.read() as conn:
            return conn.execute(select(part_text.c.id).where(part_text.c.pending).limit(1)).first() is not None

    def last_chunk(self) -> int:
        """The id of the newest chunk written (0: none), by the key's index: a write's chunks
        raise it, indexing does not."""
        query = self.prepared("last_chunk", lambda: select(func.coalesce(func.max(part_text.c.id), 0)))
        return int(self.first_row(query, {})[0])

    def backlog(self, account_id: str | None = None) -> Backlog:
        """The chunks the engine's index has not reached yet: all of them, or those of the
        conversations ``account_id`` may read; their code points, and when the oldest one's
        message was written."""
        t = part_text.c
        query = select(func.count(), func.coalesce(func.sum(t.owned), 0), func.min(t.id)).where(t.pending)
        if account_id is not None:
            readable = select(conversations.c.id).join(
                members,
                and_(members.c.workspace_id == conversations.c.workspace_id, members.c.account_id == account_id),
            )
            query = query.where(t.conversation_id.in_(readable.scalar_subquery()))
        with self.read() as conn:
            chunks, chars, oldest = conn.execute(query).one()
            written = None
            if oldest is not None:
                of_chunk = and_(messages.c.conversation_id == t.conversation_id, messages.c.id == t.message_id)
                written = conn.execute(
                    select(messages.c.updated_at).select_from(part_text).join(messages, of_chunk).where(t.id == oldest)
                ).scalar()
        return Backlog(int(chunks), int(chars), _age(written))


def _age(stamp: str | None) -> float | None:
    """Seconds since ``stamp`` (ISO 8601 UTC), never below zero."""
    if stamp is None:
        return None
    then = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    return max(0.0, (datetime.now(UTC) - then).total_seconds())
