"""The write door: conversations made and renamed, messages stored with their parts, chunks and totals."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import (
    Connection,
    delete,
    func,
    insert,
    select,
    update,
)

from ..usage import MessageUsage
from .chunks import FieldText, chunk_rows
from .core import Hooks
from .errors import StaleWrite
from .rows import (
    TOTALS,
    AgentFacts,
    Conversation,
    StoredPart,
    now,
)
from .schema import (
    conversations,
    imports,
    messages,
    part_text,
    parts,
    usage_totals,
)

USAGE_COLUMNS = ("model", "day", "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "cost")


def usage_columns(usage: MessageUsage | None) -> dict[str, Any]:
    """A message's usage columns (all NULL when it reports none)."""
    if usage is None:
        return dict.fromkeys(USAGE_COLUMNS)
    u = usage.usage
    return {"model": usage.model, "day": usage.day, "input_tokens": u.input, "output_tokens": u.output,
            "cache_read_tokens": u.cache_read, "cache_write_tokens": u.cache_write, "cost": usage.cost}  # fmt: skip


class Writes(Hooks):
    """Every write of a conversation and its messages (mixed into :class:`~foldline.store.Store`)."""

    def create_conversation(
        self,
        conversation_id: str,
        workspace_id: str,
        owner_id: str,
        title: str | None,
        parent_id: str | None = None,
        call_id: str | None = None,
    ) -> Conversation:
        """Create a conversation, or return the one already there.

        An agent (no ``parent_id``) is known by its id; a subagent by ``(parent_id, call_id)``:
        two writers making the same subagent at once, under different ids, both get the one
        that was stored first. An existing conversation is returned unchanged.
        """
        stamp = now()
        values = {
            "id": conversation_id,
            "workspace_id": workspace_id,
            "owner_id": owner_id,
            "parent_id": parent_id,
            "call_id": call_id,
            "title": title,
            "seq": 0,
            "created_at": stamp,
            "updated_at": stamp,
        }
        with self.write() as conn:
            if parent_id is None:
                self.upsert_in(conn, conversations, values, ["id"], [])
            else:
                self.upsert_in(conn, conversations, values, ["parent_id", "call_id"], [])
            row = conn.execute(self._conversation_query().where(conversations.c.id == conversation_id)).first()
            if row is None:  # a subagent made by a concurrent writer under another id
                row = conn.execute(
                    self._conversation_query().where(
                        conversations.c.parent_id == parent_id, conversations.c.call_id == call_id
                    )
                ).one()
        return Conversation(**row._asdict())

    def set_times(self, conversation_id: str, created_at: str, updated_at: str) -> None:
        """Date a conversation by its source (an imported session's first and last line)."""
        with self.write() as conn:
            conn.execute(
                update(conversations)
                .where(conversations.c.id == conversation_id)
                .values(created_at=created_at, updated_at=updated_at)
            )

    def set_title(self, conversation_id: str, title: str) -> None:
        """Rename a conversation."""
        with self.write() as conn:
            conn.execute(update(conversations).where(conversations.c.id == conversation_id).values(title=title))

    def put_message(
        self,
        conv: Conversation,
        message_id: str,
        role: str,
        head: str,
        stored: Sequence[StoredPart],
        expect_seq: int | None = None,
        checked: str | None = None,
        usage: MessageUsage | None = None,
        facts: AgentFacts | None = None,
    ) -> tuple[int, bool]:
        """Create or replace one message and its parts in one transaction.

        Returns the write's seq and whether the message is new. A new message goes after every
        other (its position is the write's seq); a replaced one keeps its place, and its old
        parts are all dropped for ``stored``. With ``expect_seq`` the write happens only if the
        message is still the one written at that seq (else :class:`StaleWrite`, and nothing is
        written). The conversation (and a subagent's parent) is marked active; followers in
        other processes are told (:meth:`announce`). ``checked`` is the read stamp the caller
        vouches for (the checks the message passed); a row stored without one is checked on every read.

        In the same transaction the agent's totals (its row, and ``usage_totals``) take back what
        a replaced message counted and add what ``usage`` says; ``facts`` from a message of the
        agent itself (not a subagent's) say where it ran: each one given replaces the one kept,
        but the source, which the first message to say it decides.
        """
        stamp = now()
        m = messages.c
        with self.write() as conn:
            seq = self._next_seq(conn, conv, stamp)
            # The conversation's row is now locked (or the SQLite write lock held): no writer interleaves.
            found = conn.execute(
                select(
                    m.position, m.seq, m.model, m.day, m.input_tokens, m.output_tokens, m.cache_read_tokens,
                    m.cache_write_tokens, m.cost,
                ).where(m.conversation_id == conv.id, m.id == message_id)
            ).first()
            if expect_seq is not None and (found is None or found.seq != expect_seq):
                raise StaleWrite(message_id)
            position = seq if found is None else found.position
            values = {
                "conversation_id": conv.id, "id": message_id, "owner_id": conv.owner_id, "position": position,
                "seq": seq, "role": role, "head": head, "created_at": stamp, "updated_at": stamp, "checked": checked,
                **usage_columns(usage),
            }  # fmt: skip
            changed = ["seq", "role", "head", "updated_at", "checked", *USAGE_COLUMNS]
            self.upsert_in(conn, messages, values, ["conversation_id", "id"], changed)
            self._count(conn, conv, found, usage, facts)
            self._replace_parts(conn, conv.id, message_id, position, seq, stored)
            self.replace_texts(conn, conv.id, message_id, [(p.idx, f) for p in stored for f in p.texts])
            self.announce(conn, conv.id)
        return seq, found is None

    def _count(
        self, conn: Connection, conv: Conversation, old: Any, usage: MessageUsage | None, facts: AgentFacts | None
    ) -> None:
        """Keep the agent's totals: take back what the replaced message (``old``) counted, add
        ``usage``, and note ``facts``. Every change is relative (``x = x + d``), so concurrent
        writers to one agent's subagents never lose one another's counts."""
        agent = conv.parent_id or conv.id
        change: dict[str, int] = dict.fromkeys(TOTALS, 0)
        if old is None:
            change["messages"] = 1
        buckets: list[tuple[str, str, dict[str, int]]] = []
        if old is not None and old.input_tokens is not None:
            before = {"messages": -1, "input_tokens": -old.input_tokens, "output_tokens": -old.output_tokens,
                      "cache_read_tokens": -old.cache_read_tokens, "cache_write_tokens": -old.cache_write_tokens,
                      "cost": -(old.cost or 0), "unpriced": -int(old.cost is None)}  # fmt: skip
            buckets.append((old.day or "", old.model or "", before))
        if usage is not None:
            after = {"messages": 1, "input_tokens": usage.usage.input, "output_tokens": usage.usage.output,
                     "cache_read_tokens": usage.usage.cache_read, "cache_write_tokens": usage.usage.cache_write,
                     "cost": usage.cost or 0, "unpriced": int(usage.cost is None)}  # fmt: skip
            buckets.append((usage.day, usage.model, after))
        for _, _, delta in buckets:
            for name in TOTALS:
                if name != "messages":
                    change[name] += delta[name]
        c = conversations.c
        values: dict[str, Any] = {name: c[name] + change[name] for name in TOTALS if change[name]}
        if facts is not None and conv.parent_id is None:
            for name in ("project", "branch", "model"):
                if getattr(facts, name):
                    values[name] = getattr(facts, name)
            if facts.source:
                values["source"] = func.coalesce(c.source, facts.source)
        if values:
            conn.execute(update(conversations).where(c.id == agent).values(**values))
        for day, model, delta in buckets:
            self._add_usage(conn, agent, day, model, delta)

    def _add_usage(self, conn: Connection, agent: str, day: str, model: str, delta: dict[str, int]) -> None:
        row = {"agent_id": agent, "day": day, "model": model, **delta}
        stmt = self.dialect_insert(usage_totals).values(**row)
        stmt = stmt.on_conflict_do_update(
            index_elements=["agent_id", "day", "model"],
            set_={name: usage_totals.c[name] + stmt.excluded[name] for name in TOTALS},
        )
        conn.execute(stmt)

    @staticmethod
    def _next_seq(conn: Connection, conv: Conversation, stamp: str) -> int:
        """Take the conversation's next write number, and mark it (and its parent) active."""
        seq = conn.execute(
            update(conversations)
            .where(conversations.c.id == conv.id)
            .values(seq=conversations.c.seq + 1, updated_at=stamp)
            .returning(conversations.c.seq)
        ).scalar_one()
        if conv.parent_id is not None:  # a subagent's activity is its parent's activity too
            conn.execute(update(conversations).where(conversations.c.id == conv.parent_id).values(updated_at=stamp))
        return int(seq)

    @staticmethod
    def _replace_parts(
        conn: Connection, conv_id: str, message_id: str, position: int, seq: int, stored: Sequence[StoredPart]
    ) -> None:
        conn.execute(delete(parts).where(parts.c.conversation_id == conv_id, parts.c.message_id == message_id))
        if not stored:
            return
        rows = [
            {"conversation_id": conv_id, "message_id": message_id, "idx": p.idx, "position": position, "seq": seq,
             "tool": p.tool, "body": p.body, "cut_body": p.cut_body, "cut_ref": p.cut_ref}
            for p in stored
        ]  # fmt: skip
        conn.execute(insert(parts), rows)

    def replace_texts(
        self, conn: Connection, conversation_id: str, message_id: str, texts: Sequence[tuple[int, FieldText]]
    ) -> None:
        """Replace a message's chunk rows (and their index entries), in the write's transaction."""
        self.unindex_texts(conn, conversation_id, message_id)
        conn.execute(
            delete(part_text).where(
                part_text.c.conversation_id == conversation_id, part_text.c.message_id == message_id
            )
        )
        rows = [row for idx, field in texts for row in chunk_rows(conversation_id, message_id, idx, field)]
        if not rows:
            return
        for row in rows:
            row["text"] = self.storable_text(str(row["text"]))
        conn.execute(insert(part_text), rows)
        self.index_texts(conn, conversation_id, message_id)

    def stamp(self, conv: Conversation, message_id: str, seq: int, stamp: str) -> bool:
        """Stamp one message as it stands, if the write ``seq`` made it (a rewrite since keeps
        the stamp its own write gave it); the message is not written, so no one is told."""
        with self.write() as conn:
            done = conn.execute(
                update(messages)
                .where(messages.c.conversation_id == conv.id, messages.c.id == message_id, messages.c.seq == seq)
                .values(checked=stamp)
            )
        return bool(done.rowcount)

    # -- import bookkeeping --------------------------------------------------------------

    def compact(self) -> None:
        """Leave no copy of rewritten text behind (after ``foldline redact``). PostgreSQL: a
        VACUUM marks the old row versions' space free (only ``VACUUM FULL`` rewrites the files;
        docs/security.md); SQLite overrides it to rebuild its file and empty its log."""
        with self.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.exec_driver_sql("VACUUM")

    def import_state(self, source: str) -> str | None:
        """What the importers recorded for a source (a session file), or None if never imported."""
        with self.read() as conn:
            return conn.execute(select(imports.c.state).where(imports.c.source == source)).scalar()

    def set_import_state(self, source: str, state: str) -> None:
        """Record (or replace) the import state of a source."""
        with self.write() as conn:
            self.upsert_in(
                conn,
                imports,
                {"source": source, "state": state, "done": True, "updated_at": now()},
                ["source"],
                ["state", "done", "updated_at"],
            )
