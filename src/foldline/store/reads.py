"""Reads of conversations and messages: a page (the hot path), changes since a seq, one message, one part."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    Integer,
    and_,
    case,
    false,
    func,
    null,
    or_,
    select,
    tuple_,
)

from ..registry import TextTools
from .core import CONVERSATION, Hooks, Prepared, m_conv_is, slot
from .errors import PageTooBig
from .rows import (
    Conversation,
    MessageRow,
    PageRead,
    StoredBody,
)
from .schema import (
    conversations,
    members,
    messages,
    part_pieces,
    parts,
)


def within(cursor: Any, budget: int | None, most: int | None = None) -> tuple[list[Any], int | None]:
    """A page's part rows (position, idx, tool, body, ref), newest first, read from ``cursor``
    until their bytes reach ``budget`` at the end of a message; and the position of the first
    message not read (None: every row was read). Past ``most`` bytes, :class:`PageTooBig`, each
    row counted as at least :data:`ROW_COST` bytes toward it."""
    if budget is None and most is None:
        return cursor.fetchall(), None
    rows: list[Any] = []
    total, cost, at = 0, 0, None
    while batch := cursor.fetchmany(PAGE_BATCH):
        for row in batch:
            if row[0] != at:
                if budget is not None and total >= budget:
                    return rows, row[0]
                at = row[0]
            size = len(row[3]) + (len(row[4]) if row[4] is not None else 0)
            total += size
            cost += max(size, ROW_COST)
            if most is not None and cost > most:
                raise PageTooBig()
            rows.append(row)
    return rows, None


PAGE_BATCH = 256  # part rows read at a time from a page's cursor
# What a part row counts for at least against ``most`` (what the event loop may read itself):
# the loop's time goes to rows more than to bytes. A huge page of small parts (100 messages of
# 2,000 parts of 200 bytes, issue 20) held the loop 17-28 ms for the 5,000 rows of its first
# MiB before it gave up and went to a thread; counted at 1 KiB a row, it gives up after 1,024.
ROW_COST = 1024


@dataclass(frozen=True, slots=True)
class PageSQL:
    conversation: Prepared
    messages: Prepared
    parts: Prepared


class Reads(Hooks):
    """Every read of conversations and messages (mixed into :class:`~foldline.store.Store`)."""

    def visible_conversation(self, account_id: str, agent_id: str, call_id: str | None) -> Conversation | None:
        """The agent (or its subagent for ``call_id``) if ``account_id`` is a member of its workspace.

        None when there is no such conversation and when the account may not see it: the caller
        cannot tell the two apart. A subagent's id is never accepted as an agent's.
        """
        check = self._page_sql(None, call_id is not None, False, False).conversation
        row = self.first_row(check, {"account": account_id, "agent": agent_id, "call": call_id})
        return Conversation(*row) if row else None

    def read_page(
        self, account_id: str, agent_id: str, call_id: str | None, *, cut: TextTools | None, limit: int | None,
        before: int | None, known_seq: int | None = None, budget: int | None = None, most: int | None = None,
    ) -> PageRead | None:
        """:meth:`visible_conversation` and its :meth:`page`, in one read snapshot: what a
        transcript read asks of the database, in three statements built once (per backend and
        registry), run on the driver's own cursor and read by position. None when the account
        may not read the conversation; ``unchanged`` and no page when it is at ``known_seq``.
        ``budget``: the page ends (``more``) at the first message past which its parts' bytes
        reach it; the newest message is always sent whole. The parts are read newest first and
        no further than that. ``most``: :class:`PageTooBig` as soon as they pass it."""
        sql = self._page_sql(cut, call_id is not None, limit is not None, before is not None)
        params: dict[str, Any] = {"account": account_id, "agent": agent_id, "call": call_id, "before": before,
                                  "limit": None if limit is None else limit + 1}  # fmt: skip
        with self.driver_read() as cursor:
            found = cursor.execute(sql.conversation.sql, sql.conversation.bind(params)).fetchone()
            if found is None:
                return None
            conv = Conversation(*found)
            if conv.seq == known_seq:
                return PageRead(conv, [], [], False, conv.seq, unchanged=True)
            params.update(conv=conv.id, owner=conv.owner_id)
            rows = cursor.execute(sql.messages.sql, sql.messages.bind(params)).fetchall()
            more = limit is not None and len(rows) > limit
            if more:
                del rows[limit:]
            if not rows:
                return PageRead(conv, [], [], False, conv.seq)
            params.update(first=rows[-1][1], last=rows[0][1])
            part_rows, stopped = within(cursor.execute(sql.parts.sql, sql.parts.bind(params)), budget, most)
        if stopped is not None:  # the older messages are the next page's
            rows = [row for row in rows if row[1] > stopped]
            more = True
        rows.reverse()
        part_rows.reverse()
        return PageRead(conv, rows, part_rows, more, conv.seq)

    def _page_sql(self, cut: TextTools | None, call: bool, limited: bool, before: bool) -> PageSQL:
        key = (cut, call, limited, before)
        built: dict[Any, PageSQL] = self.__dict__.setdefault("_page_statements", {})
        found = built.get(key)
        if found is None:
            found = built[key] = self._build_page_sql(*key)
        return found

    def _build_page_sql(self, cut: TextTools | None, call: bool, limited: bool, before: bool) -> PageSQL:
        conv, page, part_query = self._build_page_sql_queries(cut, call, limited, before)
        page = page.where(m_conv_is(), messages.c.owner_id == slot("owner"))
        part_query = part_query.where(
            parts.c.conversation_id == slot("conv"),
            parts.c.position >= slot("first"),
            parts.c.position <= slot("last"),
        ).order_by(None).order_by(parts.c.position.desc(), parts.c.idx.desc())  # newest first: see within()
        return PageSQL(self._prepare(conv), self._prepare(page), self._prepare(part_query))

    def _build_page_sql_queries(self, cut: TextTools | None, call: bool, limited: bool, before: bool) -> Any:
        """The three queries of a page read, less what ties them together (the backend's choice)."""
        c = conversations.c
        conv = select(*CONVERSATION).join(
            members, and_(members.c.workspace_id == c.workspace_id, members.c.account_id == slot("account"))
        )
        if call:
            conv = conv.where(c.parent_id == slot("agent"), c.call_id == slot("call"))
        else:
            conv = conv.where(c.id == slot("agent"), c.parent_id.is_(None))
        m = messages.c
        page = select(m.id, m.position, m.seq, self.as_bytes(m.head), m.checked, m.created_at)
        if before:
            page = page.where(m.position < slot("before"))
        page = page.order_by(m.position.desc())
        if limited:
            page = page.limit(slot("limit", Integer))
        sent = [self.as_bytes(c) for c in self._parts_query(None, cut).selected_columns[4:]]  # body (and ref)
        if cut is None:
            sent = [*sent, null().label("ref")]
        part_query = select(parts.c.position, parts.c.idx, parts.c.tool, *sent).order_by(parts.c.position, parts.c.idx)
        return conv, page, part_query

    def changes(self, conv: Conversation, since: int, cut: TextTools, limit: int | None = None) -> list[MessageRow]:
        """The messages written after ``since`` (a seq), in cut form, in the order they were
        written; at most ``limit`` of them (the oldest first).

        A message written twice after ``since`` appears once, at its last write's seq.
        """
        query = (
            select(
                messages.c.id, messages.c.position, messages.c.seq, messages.c.head, messages.c.checked,
                messages.c.created_at,
            )
            .where(messages.c.conversation_id == conv.id, messages.c.owner_id == conv.owner_id, messages.c.seq > since)
            .order_by(messages.c.seq)
        )
        if limit is not None:
            query = query.limit(limit)
        with self.read() as conn:
            rows = conn.execute(query).all()
            if not rows:
                return []
            part_rows = conn.execute(
                self._parts_query(conv, cut)
                .where(parts.c.seq > since, parts.c.seq <= rows[-1].seq)
                .order_by(parts.c.seq, parts.c.idx)
            ).all()
        return self._assemble(rows, part_rows, key="seq")

    def seqs(self, conversation_ids: Sequence[str]) -> dict[str, int]:
        """Each conversation's write counter: what live follow compares to find other processes' writes."""
        if not conversation_ids:
            return {}
        query = select(conversations.c.id, conversations.c.seq).where(conversations.c.id.in_(conversation_ids))
        with self.read() as conn:
            return {row.id: int(row.seq) for row in conn.execute(query)}

    def _parts_query(self, conv: Conversation | None, cut: TextTools | None) -> Any:
        columns: list[Any] = [parts.c.position, parts.c.seq, parts.c.idx, parts.c.tool]
        if cut is None:
            columns.append(self._body().label("body"))
        else:
            # Sent cut: a part with a stored cut whose tool is drawn as text (per today's registry).
            # substr, not LIKE: SQLite's LIKE ignores case, PostgreSQL's does not.
            by_prefix = or_(false(), *(func.substr(parts.c.tool, 1, len(p)) == p for p in cut.prefixes))
            drawn = or_(
                parts.c.tool.is_(None),
                self.tool_in(sorted(cut.names)),
                and_(self.tool_in(sorted(cut.others), among=False), by_prefix),
            )
            sent_cut = and_(parts.c.cut_ref.is_not(None), drawn)
            columns.append(case((sent_cut, parts.c.cut_body), else_=self._body()).label("body"))
            columns.append(case((sent_cut, parts.c.cut_ref), else_=None).label("ref"))
        query = select(*columns)
        return query if conv is None else query.where(parts.c.conversation_id == conv.id)

    def _body(self) -> Any:
        """A part's JSON as stored: its ``body``, or its pieces joined (:mod:`.staging`)."""
        pc = part_pieces.c
        joined = select(self.joined(pc.n, pc.text)).where(pc.key == parts.c.pieces).scalar_subquery()
        return case((parts.c.pieces.is_(None), parts.c.body), else_=joined)

    @staticmethod
    def _assemble(rows: Sequence[Any], part_rows: Sequence[Any], key: str) -> list[MessageRow]:
        by_key: dict[int, MessageRow] = {}
        out = []
        for r in rows:
            row = MessageRow(
                r.id, r.position, r.seq, r.head, [], getattr(r, "checked", None), [], getattr(r, "created_at", None)
            )
            by_key[getattr(r, key)] = row
            out.append(row)
        for p in part_rows:
            owner = by_key.get(getattr(p, key))
            if owner is not None:
                owner.parts.append((p.idx, p.body, getattr(p, "ref", None)))
                owner.tools.append(p.tool)
        return out

    def message(self, conv: Conversation, message_id: str) -> MessageRow | None:
        """One whole message, read by id under the conversation's owner."""
        with self.read() as conn:
            row = conn.execute(
                select(messages.c.id, messages.c.position, messages.c.seq, messages.c.head).where(
                    messages.c.conversation_id == conv.id,
                    messages.c.owner_id == conv.owner_id,
                    messages.c.id == message_id,
                )
            ).first()
            if row is None:
                return None
            part_rows = conn.execute(
                self._parts_query(conv, None).where(parts.c.message_id == message_id).order_by(parts.c.idx)
            ).all()
        return self._assemble([row], part_rows, key="position")[0]

    def unstamped(self, stamp: str, after: tuple[str, str] | None, limit: int) -> list[tuple[Conversation, str]]:
        """Up to ``limit`` messages not stamped ``stamp``, in key order after ``after`` (a
        conversation id and a message id): each with its conversation."""
        m = messages.c
        return self.message_keys(after, limit, or_(m.checked.is_(None), m.checked != stamp))

    def message_keys(
        self, after: tuple[str, str] | None, limit: int, where: Any = None
    ) -> list[tuple[Conversation, str]]:
        """Up to ``limit`` stored messages (those ``where`` holds for), in key order after
        ``after`` (a conversation id and a message id): each with its conversation."""
        m = messages.c
        query = (
            self._conversation_query()
            .add_columns(m.id.label("message_id"))
            .join(messages, conversations.c.id == m.conversation_id)
            .order_by(m.conversation_id, m.id)
            .limit(limit)
        )
        if where is not None:
            query = query.where(where)
        if after is not None:
            query = query.where(tuple_(m.conversation_id, m.id) > tuple_(*after))
        with self.read() as conn:
            rows = conn.execute(query).all()
        out = []
        for row in rows:
            fields = row._asdict()
            message_id = fields.pop("message_id")
            out.append((Conversation(**fields), message_id))
        return out

    def last_message_id(self, conv: Conversation, role: str) -> str | None:
        """The id of the conversation's last message (by position) if it has this role, else None."""
        query = (
            select(messages.c.id)
            .where(messages.c.conversation_id == conv.id, messages.c.owner_id == conv.owner_id)
            .order_by(messages.c.position.desc())
            .limit(1)
        )
        with self.read() as conn:
            row = conn.execute(query.add_columns(messages.c.role)).first()
        return row.id if row is not None and row.role == role else None

    def part_body(self, conv: Conversation, message_id: str, index: int) -> StoredBody | None:
        """One whole part as stored, to be sent as it is: its tool, its message's read stamp, and
        its JSON in UTF-8, in chunks (a backend that can reads them as they are sent)."""
        query = self._part_query(conv, message_id, index, self.as_bytes(self._body().label("body")))
        with self.read() as conn:
            row = conn.execute(query).first()
        if row is None:
            return None
        body = row.body if isinstance(row.body, bytes) else row.body.encode()
        return StoredBody(row.tool, row.checked, len(body), iter((body,)))

    @staticmethod
    def _part_query(conv: Conversation, message_id: str, index: int, *columns: Any) -> Any:
        return (
            select(parts.c.tool, messages.c.checked, *columns)
            .join(
                messages,
                and_(messages.c.conversation_id == parts.c.conversation_id, messages.c.id == parts.c.message_id),
            )
            .where(
                parts.c.conversation_id == conv.id,
                parts.c.message_id == message_id,
                parts.c.idx == index,
                messages.c.owner_id == conv.owner_id,
            )
        )

    def part(self, conv: Conversation, message_id: str, index: int) -> tuple[str, str | None] | None:
        """One whole part (its JSON and tool), read by message id under the conversation's owner."""
        with self.read() as conn:
            row = conn.execute(self._part_query(conv, message_id, index, self._body().label("body"))).first()
        return (row.body, row.tool) if row else None
