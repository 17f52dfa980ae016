"""The write door: conversations made and renamed, messages stored with their parts, chunks and totals."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import (
    Connection,
    delete,
    func,
    select,
    update,
)

from ..usage import MessageUsage
from .chunks import chunk_rows
from .core import slot
from .errors import StaleWrite
from .rows import (
    TOTALS,
    AgentFacts,
    Conversation,
    MessageWrite,
    StoredPart,
    now,
)
from .schema import (
    conversations,
    imports,
    messages,
    part_pieces,
    part_text,
    parts,
    shares,
    usage_totals,
)
from .staging import Stage, Staging, stored_chars

log = logging.getLogger("foldline")

Row = dict[str, Any]
Written = tuple[str, int, int, Sequence[StoredPart]]  # a message written: its id, position, seq and parts
IN_BATCH = 500  # ids per IN (...) list: well within every engine's bound on parameters
USAGE_COLUMNS = ("model", "day", "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "cost")
# A message row as a write makes it (``_put_run``).
MESSAGE_ROW = (
    "conversation_id", "id", "owner_id", "position", "seq", "role", "head", "created_at", "updated_at", "checked",
    *USAGE_COLUMNS,
)  # fmt: skip


def usage_columns(usage: MessageUsage | None) -> dict[str, Any]:
    """A message's usage columns (all NULL when it reports none)."""
    if usage is None:
        return dict.fromkeys(USAGE_COLUMNS)
    u = usage.usage
    return {"model": usage.model, "day": usage.day, "input_tokens": u.input, "output_tokens": u.output,
            "cache_read_tokens": u.cache_read, "cache_write_tokens": u.cache_write, "cost": usage.cost}  # fmt: skip


@dataclass(slots=True)
class Leftovers:
    """What a write's transaction took out of reach, to delete after its commit (:meth:`Staging.clear`):
    the dropped chunks' ids and the piece keys of the parts it replaced."""

    chunks: list[str] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)


class Writes(Staging):
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

    def set_times(self, conversation_id: str, created_at: str, updated_at: str, title: str | None = None) -> None:
        """Date a conversation by its source (an imported session's first and last line), and
        rename it (``title``) in the same write."""
        values = {"created_at": created_at, "updated_at": updated_at}
        if title is not None:
            values["title"] = title
        with self.write() as conn:
            conn.execute(update(conversations).where(conversations.c.id == conversation_id).values(**values))

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
        write = MessageWrite(message_id, role, head, tuple(stored), checked, usage, facts)
        return self.put_messages(conv, [write], expect_seq)[0]

    def put_messages(
        self, conv: Conversation, batch: Sequence[MessageWrite], expect_seq: int | None = None
    ) -> list[tuple[int, bool]]:
        """Create or replace the messages of one conversation in one transaction, as
        :meth:`put_message` would one after the other (each its own seq, in order), with a few
        statements for the whole batch: each table's rows in one ``executemany``, the totals
        added once. Returns each write's (seq, new). ``expect_seq`` is for a batch of one."""
        if not batch:
            return []
        stamp = now()
        texts = [self._chunk_rows(conv.id, w) for w in batch]  # made before the write lock is taken
        runs = list(distinct_runs(range(len(batch)), lambda i: batch[i].id))
        staged = self.stage_over is not None and stored_chars(batch, texts) > self.stage_over
        stages: list[Stage | None] = []
        left = Leftovers()
        done: list[tuple[int, bool]] = []
        try:
            for run in runs:  # a big write: its bodies and chunks first, each group in a transaction
                writes, chunks = [batch[i] for i in run], [texts[i] for i in run]
                stages.append(self.stage(conv.id, writes, chunks) if staged else None)
            with self.write() as conn:
                for run, stage in zip(runs, stages, strict=True):
                    writes = stage.writes if stage else [batch[i] for i in run]
                    done += self._put_run(conn, conv, writes, [texts[i] for i in run], expect_seq, stamp, stage, left)
                self.announce(conn, conv.id)
        except BaseException:
            self._clear_quietly([s.id for s in stages if s], [k for s in stages if s for k in s.pieces])
            raise
        self._clear_quietly(left.chunks, left.keys)
        return done

    def _clear_quietly(self, chunk_ids: Sequence[str], keys: Sequence[str]) -> None:
        """:meth:`clear`, whose failure only leaves rows no read reaches, for the next start's sweep."""
        if not chunk_ids and not keys:
            return
        try:
            self.clear(chunk_ids, keys)
        except Exception:
            log.warning("unreachable rows left for the next start's sweep", exc_info=True)

    def _put_run(
        self, conn: Connection, conv: Conversation, batch: Sequence[MessageWrite], texts: Sequence[list[Row]],
        expect_seq: int | None, stamp: str, stage: Stage | None, left: Leftovers,
    ) -> list[tuple[int, bool]]:  # fmt: skip
        """Messages of distinct ids, in one transaction already open. ``stage``: their chunks and
        big bodies were staged (:meth:`stage`), and are linked here. What the replaced messages
        leave out of reach is added to ``left``."""
        last = self._next_seq(conn, conv, stamp, len(batch))
        # The conversation's row is now locked (or the SQLite write lock held): no writer interleaves.
        # One that no write had reached holds no message yet (every write takes a seq).
        found = self._found(conn, conv.id, [w.id for w in batch]) if last > len(batch) else {}
        if expect_seq is not None:
            old = found.get(batch[0].id)
            if old is None or old.seq != expect_seq:
                raise StaleWrite(batch[0].id)
        first = last - len(batch) + 1
        rows, olds, done = [], [], []
        for seq, w in enumerate(batch, first):
            old = found.get(w.id)
            position = seq if old is None else old.position
            rows.append({
                "conversation_id": conv.id, "id": w.id, "owner_id": conv.owner_id, "position": position,
                "seq": seq, "role": w.role, "head": w.head, "created_at": stamp, "updated_at": stamp,
                "checked": w.checked, **usage_columns(w.usage),
            })  # fmt: skip
            olds.append(old)
            done.append((seq, old is None))
        self.run_prepared_many(conn, "message_upsert", self._message_upsert, rows)
        self._count(conn, conv, list(zip(olds, batch, strict=True)))
        replaced = [w.id for w in batch if w.id in found]
        written = [(r["id"], r["position"], r["seq"], w.parts) for r, w in zip(rows, batch, strict=True)]
        if replaced:
            left.keys += self.piece_keys(conn, conv.id, replaced)
        self._replace_parts(conn, conv.id, replaced, written)
        dropped = self.drop_texts(conn, conv.id, replaced) if replaced else None
        if dropped is not None:
            left.chunks.append(dropped)
        fresh = [] if stage else [row for chunks in texts for row in chunks]
        self.replace_texts(conn, conv.id, [] if dropped else replaced, fresh)
        if stage is not None:
            self.link(conn, conv.id, stage)
        return done

    @staticmethod
    def _found(conn: Connection, conv_id: str, ids: Sequence[str]) -> dict[str, Any]:
        """The stored rows (position, seq, usage) of those of ``ids`` already in the conversation."""
        m = messages.c
        found: dict[str, Any] = {}
        for at in range(0, len(ids), IN_BATCH):
            query = select(
                m.id, m.position, m.seq, m.model, m.day, m.input_tokens, m.output_tokens, m.cache_read_tokens,
                m.cache_write_tokens, m.cost,
            ).where(m.conversation_id == conv_id, m.id.in_(ids[at : at + IN_BATCH]))  # fmt: skip
            found.update((row.id, row) for row in conn.execute(query))
        return found

    def _count(self, conn: Connection, conv: Conversation, writes: Sequence[tuple[Any, MessageWrite]]) -> None:
        """Keep the agent's totals: take back what each replaced message (``old``) counted, add
        its ``usage``, and note its ``facts``, all in one update of the agent (and one of each
        day and model's totals). Every change is relative (``x = x + d``), so concurrent
        writers to one agent's subagents never lose one another's counts."""
        agent = conv.parent_id or conv.id
        change: dict[str, int] = dict.fromkeys(TOTALS, 0)
        buckets: dict[tuple[str, str], dict[str, int]] = {}

        def add(day: str, model: str, delta: dict[str, int]) -> None:
            bucket = buckets.setdefault((day, model), dict.fromkeys(TOTALS, 0))
            for name in TOTALS:
                bucket[name] += delta[name]
                if name != "messages":
                    change[name] += delta[name]

        c = conversations.c
        values: dict[str, Any] = {}
        for old, w in writes:
            if old is None:
                change["messages"] += 1
            if old is not None and old.input_tokens is not None:
                add(old.day or "", old.model or "", {
                    "messages": -1, "input_tokens": -old.input_tokens, "output_tokens": -old.output_tokens,
                    "cache_read_tokens": -old.cache_read_tokens, "cache_write_tokens": -old.cache_write_tokens,
                    "cost": -(old.cost or 0), "unpriced": -int(old.cost is None),
                })  # fmt: skip
            if w.usage is not None:
                u = w.usage
                add(u.day, u.model, {
                    "messages": 1, "input_tokens": u.usage.input, "output_tokens": u.usage.output,
                    "cache_read_tokens": u.usage.cache_read, "cache_write_tokens": u.usage.cache_write,
                    "cost": u.cost or 0, "unpriced": int(u.cost is None),
                })  # fmt: skip
            if w.facts is not None and conv.parent_id is None:
                for name in ("project", "branch", "model"):
                    if getattr(w.facts, name):
                        values[name] = getattr(w.facts, name)
                if w.facts.source and "source" not in values:
                    values["source"] = func.coalesce(c.source, w.facts.source)
        values.update({name: c[name] + change[name] for name in TOTALS if change[name]})
        if values:
            conn.execute(update(conversations).where(c.id == agent).values(**values))
        rows = [{"agent_id": agent, "day": day, "model": model, **delta} for (day, model), delta in buckets.items()]
        if rows:
            self.run_prepared_many(conn, "usage_add", self._usage_add, rows)

    def _next_seq(self, conn: Connection, conv: Conversation, stamp: str, writes: int = 1) -> int:
        """Take the conversation's next ``writes`` write numbers (the last is returned), and mark
        it (and its parent) active."""
        taken = self.run_prepared(conn, "seq_taken", _seq_taken, {"id": conv.id, "writes": writes, "stamp": stamp})
        seq = taken.fetchone()[0]
        if conv.parent_id is not None:  # a subagent's activity is its parent's activity too
            self.run_prepared(conn, "touched", _touched, {"id": conv.parent_id, "stamp": stamp})
        return int(seq)

    def _message_upsert(self) -> Any:
        """A message row written: inserted, or its write's columns replaced (its place kept)."""
        stmt = self.dialect_insert(messages).values({n: slot(n, messages.c[n].type) for n in MESSAGE_ROW})
        changed = ["seq", "role", "head", "updated_at", "checked", *USAGE_COLUMNS]
        return stmt.on_conflict_do_update(
            index_elements=["conversation_id", "id"], set_={c: stmt.excluded[c] for c in changed}
        )

    def _usage_add(self) -> Any:
        """A day and model's totals for an agent: inserted, or each added to what is there."""
        names = ["agent_id", "day", "model", *TOTALS]
        stmt = self.dialect_insert(usage_totals).values({n: slot(n, usage_totals.c[n].type) for n in names})
        return stmt.on_conflict_do_update(
            index_elements=["agent_id", "day", "model"],
            set_={name: usage_totals.c[name] + stmt.excluded[name] for name in TOTALS},
        )

    def _replace_parts(
        self, conn: Connection, conv_id: str, replaced: Sequence[str], stored: Sequence[Written]
    ) -> None:
        """Drop the parts of the ``replaced`` messages, and insert ``stored``: (message id,
        position, seq, its parts) of each message written."""
        p = parts.c
        for at in range(0, len(replaced), IN_BATCH):
            some = replaced[at : at + IN_BATCH]
            conn.execute(delete(parts).where(p.conversation_id == conv_id, p.message_id.in_(some)))
        rows = [
            {"conversation_id": conv_id, "message_id": message_id, "idx": part.idx, "position": position, "seq": seq,
             "tool": part.tool, "body": part.body, "cut_body": part.cut_body, "cut_ref": part.cut_ref,
             "pieces": part.pieces}
            for message_id, position, seq, written in stored for part in written
        ]  # fmt: skip
        if rows:
            self.insert_rows(conn, parts, rows)

    def _chunk_rows(self, conversation_id: str, write: MessageWrite) -> list[Row]:
        """The chunk rows of a message's searchable fields, ready to insert."""
        rows = [
            row for part in write.parts for field in part.texts
            for row in chunk_rows(conversation_id, write.id, part.idx, field)
        ]  # fmt: skip
        for row in rows:
            row["text"] = self.storable_text(str(row["text"]))
            row["pending"] = True  # the indexer adds it to the engine's index after the commit
        return rows

    def replace_texts(
        self, conn: Connection, conversation_id: str, replaced: Sequence[str], rows: Sequence[Row]
    ) -> None:
        """Replace the chunk rows of the messages written, in the write's transaction: those of
        the ``replaced`` ones are dropped (what the engine's index needs to forget them kept for
        the indexer), ``rows`` (every written message's, :meth:`_chunk_rows`) inserted pending:
        a search reads them until the indexer has them. No index work here."""
        for message_id in replaced:
            self.forget_texts(conn, conversation_id, message_id)
        t = part_text.c
        for at in range(0, len(replaced), IN_BATCH):
            some = replaced[at : at + IN_BATCH]
            conn.execute(delete(part_text).where(t.conversation_id == conversation_id, t.message_id.in_(some)))
        if not rows:
            return
        self.insert_rows(conn, part_text, rows)

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

    def delete_agent(
        self, agent_id: str, exclusion: str | None = None, told: Callable[[list[str]], None] | None = None
    ) -> list[str]:
        """Delete an agent and its subagents with everything stored of them (messages, parts,
        chunks, usage totals, share links); ``exclusion`` names an import record to keep (an
        importer then passes the session over). Returns the conversations deleted (none: it
        was not there), once everything of them is gone; ``told`` is called with them as soon
        as the delete is committed and no read finds them. The engine's index forgets the
        indexed chunks with the indexer's next batch (SQLite), or with vacuum (PostgreSQL).

        One transaction, but on SQLite for an agent holding more than one clearing transaction
        writes: that transaction moves its rows out of reach (:meth:`drop_agent`), and they are
        deleted in short transactions after it (:meth:`clear_dropped`), before this returns;
        a process that dies meanwhile leaves them to the next start's sweep (store/staging.py)."""
        c = conversations.c
        with self.read() as conn:
            found = list(conn.execute(select(c.id).where(c.id == agent_id, c.parent_id.is_(None))).scalars())
            found += conn.execute(select(c.id).where(c.parent_id == agent_id)).scalars()
        staged = bool(found) and self.stages_delete(found)
        dropped: list[str] = []
        with self.write() as conn:
            ids = list(conn.execute(select(c.id).where(c.id == agent_id, c.parent_id.is_(None))).scalars())
            if not ids:
                return []
            ids += conn.execute(select(c.id).where(c.parent_id == agent_id).order_by(c.id)).scalars()
            if staged:
                dropped = self.drop_agent(conn, ids)
            else:
                for conv_id in ids:
                    self.forget_texts(conn, conv_id, None)
                named = select(parts.c.pieces).where(parts.c.conversation_id.in_(ids), parts.c.pieces.is_not(None))
                conn.execute(delete(part_pieces).where(part_pieces.c.key.in_(named)))
                for table in (part_text, parts, messages):
                    conn.execute(delete(table).where(table.c.conversation_id.in_(ids)))
            conn.execute(delete(usage_totals).where(usage_totals.c.agent_id == agent_id))
            conn.execute(delete(shares).where(shares.c.agent_id == agent_id))  # its share links open nothing
            conn.execute(delete(conversations).where(c.id.in_(ids)))
            if exclusion is not None:
                self.upsert_in(conn, imports, {"source": exclusion, "state": "{}", "done": True, "updated_at": now()},
                               ["source"], ["state", "done", "updated_at"])  # fmt: skip
            for conv_id in ids:
                self.announce(conn, conv_id)
        if told is not None:
            told(ids)
        if dropped:
            try:
                self.clear_dropped(dropped)
            except Exception:
                log.warning("a deleted agent's rows left for the next start's sweep", exc_info=True)
        return ids

    def exists(self, conversation_id: str) -> bool:
        """Whether a conversation is stored (no access check: a follower who could read it asks)."""
        with self.read() as conn:
            query = select(conversations.c.id).where(conversations.c.id == conversation_id)
            return conn.execute(query).first() is not None

    # -- import bookkeeping --------------------------------------------------------------

    def compact(self) -> None:
        """Leave no copy of rewritten text behind (after ``foldline redact``). PostgreSQL: a
        VACUUM marks the old row versions' space free (only ``VACUUM FULL`` rewrites the files;
        docs/security.md); SQLite overrides it to rebuild its file and empty its log."""
        with self.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.exec_driver_sql("VACUUM")

    def import_state(self, source: str) -> str | None:
        """What the importers recorded for a source (a session file), or None if never imported."""
        query = self.prepared("import_state", lambda: select(imports.c.state).where(imports.c.source == slot("source")))
        row = self.first_row(query, {"source": source})
        return None if row is None else row[0]

    def import_states(self, sources: Sequence[str]) -> dict[str, str]:
        """:meth:`import_state` of several sources in one statement (those never imported left out)."""
        if not sources:
            return {}
        names = [f"s{n}" for n in range(len(sources))]
        query = self.prepared(f"import_states:{len(names)}", lambda: select(imports.c.source, imports.c.state).where(
            imports.c.source.in_([slot(name) for name in names])))  # fmt: skip
        with self.driver_cursor() as cursor:
            rows = cursor.execute(query.sql, query.bind(dict(zip(names, sources, strict=True)))).fetchall()
        return {str(source): str(state) for source, state in rows}

    def set_import_state(self, source: str, state: str) -> None:
        """Record (or replace) the import state of a source."""
        self.set_import_states({source: state})

    def set_import_states(self, states: dict[str, str]) -> None:
        """Record (or replace) the import states of several sources, in one transaction."""
        stamp = now()
        with self.write() as conn:
            for source, state in states.items():
                self.upsert_in(conn, imports, {"source": source, "state": state, "done": True, "updated_at": stamp},
                               ["source"], ["state", "done", "updated_at"])  # fmt: skip


def _seq_taken() -> Any:
    c = conversations.c
    return (
        update(conversations)
        .where(c.id == slot("id"))
        .values(seq=c.seq + slot("writes", c.seq.type), updated_at=slot("stamp", c.updated_at.type))
        .returning(c.seq)
    )


def _touched() -> Any:
    c = conversations.c
    return update(conversations).where(c.id == slot("id")).values(updated_at=slot("stamp", c.updated_at.type))


def distinct_runs(items: Iterable[int], key: Callable[[int], str]) -> Iterator[list[int]]:
    """``items`` in runs, in order, each without two of one ``key``: a message written twice in
    one batch is written twice, the second replacing the first, as two writes would."""
    run: list[int] = []
    seen: set[str] = set()
    for item in items:
        if key(item) in seen:
            yield run
            run, seen = [], set()
        run.append(item)
        seen.add(key(item))
    if run:
        yield run
