"""Reads of a whole export: one snapshot held while an agent and its subagents are written out.

An export (:mod:`foldline.service.exports`) walks a conversation in batches of messages, reads
each part small enough whole, and the rest in pieces: a big part's stored JSON in slices
(:meth:`~.backend.Backend.body_pieces`), a cut field's text from its search chunks. Every read
of one export runs on one connection in one read transaction, so a message written meanwhile is
seen as it was before or after that write, never half of each.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Connection, and_, case, func, null, select

from .core import Hooks
from .rows import Conversation, ExportPart
from .schema import conversations, messages, part_pieces, part_text, parts


class ExportRead:
    """What one export reads, on one connection in one snapshot (see :meth:`Exports.export_read`)."""

    def __init__(self, store: Hooks, conn: Connection) -> None:
        self._store, self._conn = store, conn

    def subagents(self, conv: Conversation) -> list[Conversation]:
        """The agent's subagents, oldest first (their messages are under the agent's owner)."""
        query = (
            Hooks._conversation_query()
            .where(conversations.c.parent_id == conv.id)
            .order_by(conversations.c.created_at, conversations.c.call_id)
        )
        return [Conversation(**row._asdict()) for row in self._conn.execute(query)]

    def messages(self, conv: Conversation, after: int, limit: int) -> list[tuple[Any, ...]]:
        """Up to ``limit`` messages after position ``after``, in order: ``(id, position, seq,
        head, checked, created_at)``, the head as UTF-8 bytes."""
        m = messages.c
        query = (
            select(m.id, m.position, m.seq, self._store.as_bytes(m.head), m.checked, m.created_at)
            .where(m.conversation_id == conv.id, m.owner_id == conv.owner_id, m.position > after)
            .order_by(m.position)
            .limit(limit)
        )
        return [tuple(row) for row in self._conn.execute(query)]

    def parts(self, conv: Conversation, first: int, last: int, whole_under: int) -> list[ExportPart]:
        """The parts of the messages at positions ``first`` to ``last``, in order. A part's stored
        JSON comes with it when it has fewer than ``whole_under`` bytes (else :meth:`body` reads
        it in pieces); its stored cut (the part less its big field, and the cut's entry) always."""
        p, pc = parts.c, part_pieces.c
        pieced = select(func.coalesce(func.sum(pc.bytes), 0)).where(pc.key == p.pieces).scalar_subquery()
        size = case((p.pieces.is_(None), self._store.byte_length(p.body)), else_=pieced)
        small = and_(size < whole_under, p.pieces.is_(None))  # a body in pieces is read in pieces
        query = (
            select(
                p.position,
                p.idx,
                p.tool,
                size.label("size"),
                self._store.as_bytes(p.cut_ref),
                self._store.as_bytes(p.cut_body),
                case((small, self._store.as_bytes(p.body)), else_=null()).label("b"),
            )  # fmt: skip
            .where(p.conversation_id == conv.id, p.position >= first, p.position <= last)
            .order_by(p.position, p.idx)
        )
        return [ExportPart(*row) for row in self._conn.execute(query)]

    def body(self, conv: Conversation, message_id: str, idx: int) -> Iterator[bytes]:
        """One part's stored JSON (UTF-8), in pieces of at most a MiB, in this snapshot."""
        return self._store.body_pieces(self._conn, conv.id, message_id, idx)

    def field(self, conv: Conversation, message_id: str, idx: int, field: str, batch: int = 8) -> Iterator[str]:
        """One searchable field of one part, from its chunks, in order, a few chunks a statement.
        A field stored in no chunk gives nothing (check its length against the cut's)."""
        t = part_text.c
        of_field = and_(t.conversation_id == conv.id, t.message_id == message_id, t.idx == idx, t.field == field)
        start = -1
        while True:
            rows = self._conn.execute(
                select(t.start, t.owned, t.text).where(of_field, t.start > start).order_by(t.start).limit(batch)
            ).all()
            for row in rows:
                yield row.text[: row.owned]
            if len(rows) < batch:
                return
            start = rows[-1].start

    def field_length(self, conv: Conversation, message_id: str, idx: int, field: str) -> int | None:
        """The field's length in code points, as its chunks say; None when it has none."""
        t = part_text.c
        found = self._conn.execute(
            select(t.length).where(
                t.conversation_id == conv.id, t.message_id == message_id, t.idx == idx, t.field == field, t.start == 0
            )
        ).first()
        return None if found is None else int(found.length)


class Exports(Hooks):
    """The export's snapshot (mixed into :class:`~foldline.store.Store`)."""

    @contextmanager
    def export_read(self) -> Iterator[ExportRead]:
        """One read transaction for a whole export, held until the block ends."""
        with self.read() as conn:
            yield ExportRead(self, conn)
