"""The search SQL: chunks holding every term, found newest first, and slices of a field read from its chunks."""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Connection,
    FromClause,
    Select,
    and_,
    case,
    false,
    func,
    or_,
    select,
)

from .chunks import CHUNK
from .core import Hooks
from .rows import (
    Found,
    Matched,
    Slice,
    TextRow,
)
from .schema import (
    conversations,
    members,
    messages,
    part_text,
    parts,
)


def chunk_of_part(t: Any) -> Any:
    """The join of a chunk (``part_text`` columns ``t``) to its part."""
    return and_(parts.c.conversation_id == t.conversation_id, parts.c.message_id == t.message_id, parts.c.idx == t.idx)


# A walk (chunks read newest first and each checked) reads this many first, then windows sized
# to the time left, growing at most this many times a step, up to the largest.
WALK_FIRST, WALK_GROWTH, WALK_MOST = 128, 8, 16_384


class Search(Hooks):
    """Search and slices over the chunk rows (mixed into :class:`~foldline.store.Store`)."""

    def walk(
        self,
        conn: Connection,
        terms: Sequence[str],
        visible: Any,
        upto: int | None,
        limit: int,
        deadline: float | None,
        most: int | None = None,
        pending: bool = False,
    ) -> Matched:
        """Read the visible chunks newest first (at most ``upto``, at most ``most`` of them;
        ``pending``: only those the engine's index has not reached), checking each for every
        term, until ``limit`` are found, the chunks end, or ``deadline`` passes; each step reads
        as many as the last step's pace says fit in the time left. Costs what it reads, whatever
        the words: the path for words the index cannot narrow (common ones, or too short to have
        trigrams), and for the chunks it does not hold yet."""
        t = part_text.c
        found = Matched()
        if pending:  # the newest pending chunk, by its partial index: none is the common case
            newest = select(func.max(t.id)).where(t.pending)
            upto = conn.execute(newest if upto is None else newest.where(t.id <= upto)).scalar()
            if upto is None:
                return found
        size, read = min(WALK_FIRST, most or WALK_FIRST), 0
        while True:
            # Pending chunks are read by their partial index, newest first, and only the visible
            # ones checked (by conversation, a planner would read every chunk of each and sort).
            scope: list[ColumnElement[bool]] = (
                [t.pending] if pending else [t.conversation_id.in_(visible.scalar_subquery())]
            )
            if upto is not None:
                scope.append(t.id <= upto)
            # The window carries the chunks' columns as stored; each is tested outside it, once
            # the window is cut (an expression inside would run on every row a sort reads).
            window = (
                select(t.id, t.conversation_id, *self.walked(t))
                .where(*scope)
                .order_by(t.id.desc())
                .limit(size)
                .cte("window")
            )
            held: Any = and_(*(self.walk_holds(window.c, term) for term in terms))
            if pending:
                held = case((window.c.conversation_id.in_(visible.scalar_subquery()), held), else_=false())
            held = held.label("held")
            started = time.monotonic()
            rows = conn.execute(select(window.c.id, held).order_by(window.c.id.desc())).all()
            found.ids += [row.id for row in rows if row.held]
            read += len(rows)
            if len(found.ids) >= limit or len(rows) < size:
                found.ids = found.ids[:limit]
                return found
            upto = rows[-1].id - 1
            if (deadline is not None and time.monotonic() >= deadline) or (most is not None and read >= most):
                found.stopped = upto
                return found
            size = _next_size(size, time.monotonic() - started, deadline, None if most is None else most - read)

    # -- search --------------------------------------------------------------------------

    def search_texts(
        self,
        account_id: str,
        terms: Sequence[str],
        *,
        workspace_id: str | None,
        agent_id: str | None,
        upto: int | None,
        limit: int,
        deadline: float | None = None,
    ) -> Found:
        """Chunks holding every term, newest first (id at most ``upto``), in the workspaces
        ``account_id`` belongs to, read under each conversation's owner; a search still going
        at ``deadline`` (``time.monotonic()``) stops with what it has and says where."""
        conv = conversations.alias("c")
        visible = select(conv.c.id).join(
            members, and_(members.c.workspace_id == conv.c.workspace_id, members.c.account_id == account_id)
        )
        if workspace_id is not None:
            visible = visible.where(conv.c.workspace_id == workspace_id)
        if agent_id is not None:
            visible = visible.where(or_(conv.c.id == agent_id, conv.c.parent_id == agent_id))
        with self.read() as conn:
            first = self.matching_ids(conn, terms, visible, upto, limit, deadline)
            if first is None:  # the engine's one query over the indexed chunks, with the pending ones
                backlog = self.walk(conn, terms, visible, upto, limit, deadline, pending=True)
                source, chunk_id, matched = self.text_match(terms)
                query = _hit_rows(part_text.c, source, chunk_id, account_id, workspace_id, agent_id).where(*matched)
                if upto is not None:
                    query = query.where(chunk_id <= upto)
                if backlog.stopped is not None:  # below it the backlog is not read: nor is the index
                    query = query.where(chunk_id > backlog.stopped)
                query = query.order_by(chunk_id.desc()).limit(limit)
                self.plan_search(conn)
                # The index's one statement gets half the time left; stopped there, the words
                # are in too many chunks for it to narrow, and the walk reads on newest first
                # (every chunk, pending or not) until the time is up, saying where it stopped.
                cutoff = math.inf if deadline is None else (time.monotonic() + deadline) / 2
                indexed = self.until(conn, cutoff, lambda: [TextRow(**row._asdict()) for row in conn.execute(query)])
                if indexed is None:
                    walked = self.walk(conn, terms, visible, upto, limit, deadline)
                    return Found(self._hits(conn, walked.ids, account_id, workspace_id, agent_id), walked.stopped)
                rows = indexed
                if backlog.ids:
                    rows = sorted(rows + self._hits(conn, backlog.ids, account_id, workspace_id, agent_id),
                                  key=lambda row: row.id, reverse=True)[:limit]  # fmt: skip
                return Found(rows, backlog.stopped if len(rows) < limit else None)
            if not first.ids:
                return Found([], first.stopped)
            # Found by the engine's own path: these rows only, their text not tested again.
            return Found(self._hits(conn, first.ids, account_id, workspace_id, agent_id), first.stopped)

    @staticmethod
    def _hits(
        conn: Connection, ids: Sequence[int], account_id: str, workspace_id: str | None, agent_id: str | None
    ) -> list[TextRow]:
        """The hit rows of the chunks ``ids``, newest first."""
        # The LIMIT keeps the chunks a subquery read first (by key), not a filter on every
        # chunk of every part the caller may read, which is where a planner starts from.
        chosen = select(part_text).where(part_text.c.id.in_(ids)).limit(len(ids)).subquery("t")
        query = _hit_rows(chosen.c, chosen, chosen.c.id, account_id, workspace_id, agent_id)
        return [TextRow(**row._asdict()) for row in conn.execute(query.order_by(chosen.c.id.desc()))]

    # -- slices --------------------------------------------------------------------------

    def text_slice(
        self, conversation_id: str, owner_id: str, message_id: str, idx: int, field: str, start: int, end: int | None
    ) -> Slice | None:
        """Code points ``[start, end)`` of one field of one part (``end`` ``None``: to its end),
        read from the chunks that cover them only; ``None`` when the part or field is not there.
        The slice may start before ``start``: its ``start`` says where."""
        t = part_text.c
        of_field = and_(
            t.conversation_id == conversation_id, t.message_id == message_id, t.idx == idx, t.field == field
        )
        head = (
            select(t.length, parts.c.tool)
            .join(
                messages,
                and_(
                    messages.c.conversation_id == t.conversation_id,
                    messages.c.id == t.message_id,
                    messages.c.owner_id == owner_id,
                ),
            )
            .join(parts, chunk_of_part(t))
            .where(of_field, t.start == 0)
        )
        with self.read() as conn:
            found = conn.execute(head).first()
            if found is None:
                return None
            length = int(found.length)
            end = length if end is None else min(end, length)
            first = min(start, length) // CHUNK * CHUNK
            rows = conn.execute(
                select(t.start, t.owned, t.text)
                .where(of_field, t.start >= first, t.start < max(end, first + 1))
                .order_by(t.start)
            ).all()
        text = "".join(r.text[: r.owned] for r in rows)
        return Slice(found.tool, length, first, text)


def merged(indexed: Sequence[int], backlog: Matched, limit: int) -> Matched:
    """The newest ``limit`` of the chunk ids an index found and of those a walk of the backlog
    found; a walk that stopped early keeps only what is above where it stopped, and says so
    unless the page is full without what it did not read."""
    ids = sorted({*indexed, *backlog.ids}, reverse=True)
    if backlog.stopped is not None:
        ids = [i for i in ids if i > backlog.stopped]
    ids = ids[:limit]
    return Matched(ids, backlog.stopped if len(ids) < limit else None)


def _next_size(size: int, spent: float, deadline: float | None, left: int | None) -> int:
    """A walk's next step: as many chunks as the last step's pace fits in the time left, at
    most ``WALK_GROWTH`` times the last, ``WALK_MOST`` and the chunks ``left`` to read."""
    grown = min(size * WALK_GROWTH, WALK_MOST)
    if deadline is not None and spent > 0:
        fits = int((deadline - time.monotonic()) / (spent / size))
        grown = max(WALK_FIRST, min(grown, fits))
    return grown if left is None else max(1, min(grown, left))


def _hit_rows(
    t: Any,
    source: FromClause,
    chunk_id: ColumnElement[Any],
    account_id: str,
    workspace_id: str | None,
    agent_id: str | None,
) -> Select[Any]:
    """What a hit needs of each chunk of ``source`` (its chunk columns ``t``), in the
    conversations ``account_id`` may read (narrowed to a workspace or an agent with its
    subagents), under each one's owner."""
    conv, parent = conversations.alias("c"), conversations.alias("parent")
    query = (
        select(
            chunk_id.label("id"),
            func.coalesce(conv.c.parent_id, conv.c.id).label("agent_id"),
            conv.c.call_id,
            func.coalesce(parent.c.title, conv.c.title).label("title"),
            t.message_id,
            messages.c.role,
            parts.c.tool,
            t.idx,
            t.field,
            t.start,
            t.length,
            t.owned,
            t.shown,
            t.text,
        )  # fmt: skip
        .select_from(source)
        .join(conv, conv.c.id == t.conversation_id)
        .join(members, and_(members.c.workspace_id == conv.c.workspace_id, members.c.account_id == account_id))
        .join(
            messages,
            and_(
                messages.c.conversation_id == t.conversation_id,
                messages.c.id == t.message_id,
                messages.c.owner_id == conv.c.owner_id,
            ),
        )
        .join(parts, chunk_of_part(t))
        .outerjoin(parent, parent.c.id == conv.c.parent_id)
    )
    if workspace_id is not None:
        query = query.where(conv.c.workspace_id == workspace_id)
    if agent_id is not None:
        query = query.where(or_(conv.c.id == agent_id, conv.c.parent_id == agent_id))
    return query
