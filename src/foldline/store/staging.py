"""Big writes staged: a message's big bodies and its chunks written ahead of it, in short
transactions of their own, under ids no read or search reaches; the message's own small
transaction then links them in.

Why: SQLite has one write lock per file. A message holding a 20 MB tool output stored its body
(20 MB) and its chunks (20 MB more) in one transaction, holding the lock for a quarter to half
a second, and every other writer (another agent, another account) waited that long. Staged, no
transaction writes more than about :data:`STAGE_CHARS` code points, so another writer waits at
most one of them.

- **Pieces.** A part's JSON over :data:`PIECE` code points goes to ``part_pieces`` in pieces of
  that size, under a key of its own; its ``parts`` row (written with the message) names the key
  in ``pieces`` and keeps an empty ``body``. Pieces are never updated: a key no part names is a
  body not linked yet, or one left behind by a replaced message.
- **Chunks.** The message's ``part_text`` rows are written with a staging id (``~s…``) as their
  ``conversation_id``: no conversation has it, so no search, slice or export sees them (all ask
  by the conversation). The link moves them to the conversation with one ``UPDATE`` of that
  column: the id has the conversation id's length, so SQLite rewrites each row in place, only
  the page its head is on (the text, past it, is compared and left).
- **The link.** The message's transaction does what an unstaged write does, but for the chunks
  (moved, not inserted) and the old version's big leftovers: its chunks are moved to a dropped
  id (``~d…``) rather than deleted (deleting 20 MB of rows costs as much as writing them), its
  pieces are left unnamed; both are deleted after the commit in short transactions
  (:meth:`Staging.clear`). A reader sees the old message or the new one, never a part without
  its body or chunks.
- **The sweep.** A writer that dies between its stages leaves staged rows no one links. At each
  start (:func:`~foldline.store.open_store`) :meth:`Staging.sweep` deletes every dropped id's
  chunks, and the staged chunks and unnamed pieces staged more than :data:`STALE_SECONDS` ago
  (an id holds the time it was made: a writer of another process may be staging right now). A
  link whose stage was swept meanwhile (a writer stalled that long) finds it short and fails
  (:class:`StageLost`), writing nothing.
- **A big agent deleted.** :meth:`~foldline.store.Store.delete_agent` on an agent holding more
  than :data:`STAGE_CHARS` code points (chunks, bodies, pieces) deletes it in one small
  transaction as ever (its conversations, usage totals, share links; the import record; its
  followers told), but moves its messages, parts and chunks out of reach (:meth:`drop_agent`: each
  conversation's rows to a dropped id of their own, rewritten in place) instead of deleting
  them; :meth:`clear_dropped` then deletes them in short transactions of about
  :data:`STAGE_CHARS` each (the chunks with what the engine's index needs to forget them, the
  pieces, the parts, the messages) before the delete returns. The sweep finishes what a process
  that died meanwhile left, finding the dropped ids in any of those tables.

PostgreSQL locks rows, not the database: another agent's write never waits for a big one, so
it writes in one transaction (``stage_over`` None); the read side (pieces) is shared.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy import Connection, bindparam, delete, exists, func, insert, inspect, select, update

from .core import RELAXED, Hooks
from .errors import StoreError
from .rows import MessageWrite
from .schema import messages, part_pieces, part_text, parts

Row = dict[str, Any]
PIECE = 1 << 20  # code points of a part's JSON per piece; a part's JSON past it is stored in pieces
STAGE_OVER = 1 << 20  # code points (bodies and chunks) past which a write is staged
STAGE_CHARS = 2 << 20  # code points written by one staging (or clearing) transaction, about
STALE_SECONDS = 600.0  # a stage this old is a writer's that died: the sweep deletes it
OFF = "~"  # above every character of a UUID: ids from here on name no conversation
STAGED, DROPPED = "~s", "~d"
SHORTEST = 22  # a staging id: its mark, 12 hex digits of milliseconds, 8 random ones at least
IN_BATCH = 500  # ids per IN (...) list, as store/writes.py
GAP = 0.002  # seconds a staged write lets go between two of its transactions, for other writers
CLEAR_BATCH = 64  # chunk rows (32 K code points each) deleted per clearing transaction
CLEAR_ROWS = 500  # parts or messages rows deleted per clearing transaction at most


class StageLost(StoreError):
    """A staged write's rows were swept before its message linked them (it stalled past
    :data:`STALE_SECONDS`): nothing was written."""

    def __init__(self) -> None:
        super().__init__("a big write took too long and its staged rows were swept", "write the message again")


def stage_id(like: str, mark: str = STAGED) -> str:
    """An id no conversation has, as long as ``like`` (a conversation id) where it can be, with
    the time it was made: ``mark``, milliseconds since the epoch in hex, random hex."""
    stamp = f"{mark}{int(time.time() * 1000):012x}"
    fill = max(len(like), SHORTEST) - len(stamp)
    return stamp + os.urandom((fill + 1) // 2).hex()[:fill]


def made_at(key: str) -> float | None:
    """When a staging id (or a piece key made from one) was made, in seconds; None if it is none."""
    try:
        return int(key[2:14], 16) / 1000
    except ValueError:
        return None


def split(body: str) -> list[str]:
    """A body in pieces of :data:`PIECE` code points."""
    return [body[at : at + PIECE] for at in range(0, len(body), PIECE)]


def stored_chars(writes: Sequence[MessageWrite], texts: Sequence[Sequence[Row]]) -> int:
    """What a batch writes, in code points: its parts' JSON and its chunks' text."""
    bodies = sum(len(p.body) for w in writes for p in w.parts)
    return bodies + sum(len(str(row["text"])) for rows in texts for row in rows)


@dataclass(frozen=True, slots=True)
class Stage:
    """One run of messages staged: the id its chunks wait under, the messages as they are linked
    (big parts naming their pieces), and how many chunk rows and pieces the link must find."""

    id: str
    writes: list[MessageWrite]
    chunks: int
    pieces: list[str]


def in_groups(rows: Iterable[tuple[Any, Row]], chars: int) -> Iterator[list[tuple[Any, Row]]]:
    """``(table, row)`` pairs in groups of about ``chars`` code points of text each."""
    group: list[tuple[Any, Row]] = []
    size = 0
    for item in rows:
        group.append(item)
        size += len(str(item[1]["text"]))
        if size >= chars:
            yield group
            group, size = [], 0
    if group:
        yield group


class Staging(Hooks):
    """Staged writes, their leftovers cleared, and the sweep (mixed into :class:`~foldline.store.Store`)."""

    stage_over: int | None = None  # code points past which a write is staged; None: never (PostgreSQL)

    def stage(self, conv_id: str, writes: Sequence[MessageWrite], texts: Sequence[Sequence[Row]]) -> Stage:
        """Write a run's big bodies in pieces and its chunks under a staging id, each group of
        about :data:`STAGE_CHARS` in a transaction of its own; returns what the link needs."""
        sid = stage_id(conv_id)
        linked, rows = [], []
        keys: list[str] = []
        for i, w in enumerate(writes):
            kept = []
            for part in w.parts:
                if len(part.body) <= PIECE:
                    kept.append(part)
                    continue
                key = f"{sid}.{i}.{part.idx}"
                keys.append(key)
                for n, text in enumerate(split(part.body)):
                    rows.append((part_pieces, {"key": key, "n": n, "bytes": len(text.encode()), "text": text}))
                kept.append(replace(part, body="", pieces=key))
            linked.append(replace(w, parts=tuple(kept)))
        chunks = [{**row, "conversation_id": sid} for some in texts for row in some]
        rows += [(part_text, row) for row in chunks]
        batched = RELAXED.get()
        for group in in_groups(rows, STAGE_CHARS):
            token = RELAXED.set(True)  # the commit does not wait for the disk inside the lock...
            try:
                with self.write() as conn:
                    for table in (part_pieces, part_text):
                        some = [row for t, row in group if t is table]
                        if some:
                            conn.execute(insert(table), some)
            finally:
                RELAXED.reset(token)
            if not batched:  # ...but outside it, before the next group (and the link) is written
                self.sync()
            time.sleep(GAP)  # a writer waiting (a thread here, a process polling) takes the lock now
        return Stage(sid, linked, len(chunks), keys)

    def link(self, conn: Connection, conv_id: str, stage: Stage) -> None:
        """In the message's transaction: the staged chunks moved to the conversation, once it is
        sure the stage is whole (else :class:`StageLost`, and the transaction is rolled back)."""
        if stage.pieces:
            found = conn.execute(
                select(func.count()).select_from(part_pieces).where(part_pieces.c.key.in_(stage.pieces),
                                                                    part_pieces.c.n == 0)
            ).scalar_one()  # fmt: skip
            if found != len(stage.pieces):
                raise StageLost()
        moved = conn.execute(
            part_text.update().where(part_text.c.conversation_id == stage.id).values(conversation_id=conv_id)
        )
        if moved.rowcount != stage.chunks:
            raise StageLost()

    def drop_texts(self, conn: Connection, conv_id: str, message_ids: Sequence[str]) -> str | None:
        """In a write's transaction: the chunks of ``message_ids`` taken out of the conversation
        by moving them to a dropped id (returned, for :meth:`clear`), when they are too many to
        delete there and then; None when there were few, and they are left to the caller."""
        t = part_text.c
        some = [message_ids[at : at + IN_BATCH] for at in range(0, len(message_ids), IN_BATCH)]
        held = 0
        for ids in some:
            mine = (t.conversation_id == conv_id) & t.message_id.in_(ids)
            held += int(conn.execute(select(func.coalesce(func.sum(t.owned), 0)).where(mine)).scalar_one())
        if held <= STAGE_CHARS:
            return None
        dropped = stage_id(conv_id, DROPPED)
        for ids in some:
            mine = (t.conversation_id == conv_id) & t.message_id.in_(ids)
            conn.execute(part_text.update().where(mine).values(conversation_id=dropped))
        return dropped

    @staticmethod
    def piece_keys(conn: Connection, conv_id: str, message_ids: Sequence[str]) -> list[str]:
        """The piece keys the parts of ``message_ids`` name (read before those parts are replaced)."""
        p = parts.c
        keys: list[str] = []
        for at in range(0, len(message_ids), IN_BATCH):
            query = select(p.pieces).where(p.conversation_id == conv_id, p.pieces.is_not(None),
                                           p.message_id.in_(message_ids[at : at + IN_BATCH]))  # fmt: skip
            keys += [str(key) for key in conn.execute(query).scalars()]
        return keys

    def clear(self, chunk_ids: Sequence[str], keys: Sequence[str]) -> None:
        """Delete what no read reaches any more: the chunks under each of ``chunk_ids`` (a staging
        or a dropped id) and the pieces of each of ``keys``, in short transactions."""
        t = part_text.c
        for off in chunk_ids:
            while True:
                with self.write() as conn:
                    ids = list(conn.execute(select(t.id).where(t.conversation_id == off).limit(CLEAR_BATCH)).scalars())
                    if not ids:
                        break
                    self.forget_chunks(conn, ids)
                    conn.execute(delete(part_text).where(t.id.in_(ids)))
                time.sleep(GAP)
        for key in keys:
            last = -1
            while True:
                with self.write() as conn:
                    n = conn.execute(
                        select(part_pieces.c.n).where(part_pieces.c.key == key, part_pieces.c.n > last)
                        .order_by(part_pieces.c.n).limit(1)
                    ).scalar()  # fmt: skip
                    if n is None:
                        break
                    conn.execute(delete(part_pieces).where(part_pieces.c.key == key, part_pieces.c.n == n))
                    last = n
                time.sleep(GAP)

    def sweep(self, stale: float | None = None) -> tuple[int, int]:
        """Delete what writes that died left behind: chunks under a dropped id (and a deleted
        agent's parts, pieces and messages), and chunks under a staging id and pieces no part
        names that were staged over ``stale`` seconds ago (:data:`STALE_SECONDS`). Returns how
        many staging ids and piece keys it cleared."""
        cutoff = time.time() - (STALE_SECONDS if stale is None else stale)
        t, pc = part_text.c, part_pieces.c
        with self.read() as conn:
            if not all(inspect(conn).has_table(table.name) for table in (part_text, part_pieces)):
                return 0, 0  # a store not migrated this far (only tests make one)
            offs = list(conn.execute(select(t.conversation_id).where(t.conversation_id >= OFF).distinct()).scalars())
            deleted: set[str] = set()
            for table in (parts, messages):  # a deleted agent's rows (by their keys' first column)
                deleted.update(str(off) for off in conn.execute(
                    select(table.c.conversation_id).where(table.c.conversation_id >= OFF).distinct()
                ).scalars())  # fmt: skip
            unnamed = list(
                conn.execute(select(pc.key).distinct().where(~exists().where(parts.c.pieces == pc.key))).scalars()
            )
        offs = [off for off in offs if off.startswith(OFF)]  # whatever the collation says of ">= '~'"
        gone = [off for off in offs if off.startswith(DROPPED) or (made_at(off) or 0) < cutoff]
        keys = [key for key in unnamed if (made_at(key) or 0) < cutoff]
        self.clear(gone, keys)
        dropped = sorted(off for off in deleted if off.startswith(DROPPED))  # each dropped id, whatever its age
        self.clear_dropped(dropped)
        return len(set(gone) | set(dropped)), len(keys)

    # -- a big agent deleted -------------------------------------------------------------

    def agent_chars(self, ids: Sequence[str]) -> int:
        """What the conversations ``ids`` hold, in code points (UTF-8 bytes for bodies): their
        chunks, their parts' JSON and their pieces (a read; what a delete would write)."""
        t, p, pc = part_text.c, parts.c, part_pieces.c
        body = func.coalesce(self.byte_length(p.body), 0) + func.coalesce(self.byte_length(p.cut_body), 0)
        named = select(p.pieces).where(p.conversation_id.in_(ids), p.pieces.is_not(None))
        with self.read() as conn:
            chunks = conn.execute(select(func.coalesce(func.sum(t.owned), 0)).where(t.conversation_id.in_(ids)))
            bodies = conn.execute(select(func.coalesce(func.sum(body), 0)).where(p.conversation_id.in_(ids)))
            pieces = conn.execute(select(func.coalesce(func.sum(pc.bytes), 0)).where(pc.key.in_(named)))
            return int(chunks.scalar_one()) + int(bodies.scalar_one()) + int(pieces.scalar_one())

    def stages_delete(self, ids: Sequence[str]) -> bool:
        """Whether deleting the conversations ``ids`` is staged: on SQLite (``stage_over`` set),
        when they hold more than one clearing transaction should write (:data:`STAGE_CHARS`)."""
        return self.stage_over is not None and self.agent_chars(ids) > STAGE_CHARS

    @staticmethod
    def drop_agent(conn: Connection, ids: Sequence[str]) -> list[str]:
        """In the delete's transaction: each conversation's messages, parts and chunks moved to a
        dropped id of its own (as long as its id: each row is rewritten in place, its text
        compared and left), where no read, search or slice reaches them and no conversation
        made again with that id finds them. Returns the dropped ids, for :meth:`clear_dropped`."""
        dropped = []
        for conv_id in ids:
            off = stage_id(conv_id, DROPPED)
            for table in (part_text, parts, messages):
                conn.execute(update(table).where(table.c.conversation_id == conv_id).values(conversation_id=off))
            dropped.append(off)
        return dropped

    def clear_dropped(self, offs: Sequence[str]) -> None:
        """Delete a deleted agent's rows under each of the dropped ids ``offs``, in short
        transactions (:data:`GAP` between them): its chunks (the engine's index told), the pieces
        its parts name, its parts, its messages, in that order, so that at any point what is
        left is found by the sweep."""
        p = parts.c
        for off in offs:
            self.clear([off], [])
            with self.read() as conn:
                keys = list(conn.execute(
                    select(p.pieces).where(p.conversation_id == off, p.pieces.is_not(None)).distinct()
                ).scalars())  # fmt: skip
            self.clear([], [str(key) for key in keys])
            body = func.coalesce(self.byte_length(p.body), 0) + func.coalesce(self.byte_length(p.cut_body), 0)
            self._clear_rows(parts, off, [p.message_id, p.idx], body)
            m = messages.c
            self._clear_rows(messages, off, [m.id], self.byte_length(m.head))

    def _clear_rows(self, table: Any, off: str, key: Sequence[Any], size: Any) -> None:
        """Delete ``table``'s rows under ``off`` (``key``: the rest of their primary key; ``size``:
        each row's size), at most :data:`CLEAR_ROWS` and about :data:`STAGE_CHARS` per transaction."""
        names = [column.name for column in key]
        gone = delete(table).where(
            table.c.conversation_id == off, *(column == bindparam(f"k_{column.name}") for column in key)
        )
        while True:
            with self.write() as conn:
                rows = conn.execute(
                    select(*key, size.label("size")).where(table.c.conversation_id == off).limit(CLEAR_ROWS)
                ).all()  # fmt: skip
                if not rows:
                    break
                batch, total = [], 0
                for row in rows:
                    batch.append({f"k_{name}": getattr(row, name) for name in names})
                    total += int(row.size or 0)
                    if total >= STAGE_CHARS:
                        break
                conn.execute(gone, batch)
            time.sleep(GAP)
