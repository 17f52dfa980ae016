"""Whole exports: an agent and its subagents, whole (never cut), as JSON, Markdown or HTML.

Streamed: the export is read in one snapshot (:meth:`~foldline.store.Store.export_read`),
batch after batch of messages, and written message by message; a part of
:data:`WHOLE_UNDER` bytes or more is read in pieces (its stored JSON in slices, its cut field
from the search chunks), so what one export holds is a batch of small parts and one piece.

- **JSON** is ``{"agent", "messages", "subagents": {call: messages}}``, each message exactly as
  a whole read of the transcript sends it: a stamped message from its stored texts as they are,
  any other decoded and put through the read's checks (held whole, one message at a time).
- **Markdown** and **HTML** are drawn by :mod:`foldline.export`'s writers; a subagent follows the
  tool call that started it (those no call names come last).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import orjson

from ..errors import BadRequest
from ..export import FORMATS, MEDIA_TYPES, WRITERS, PartView, Writer
from ..search.fields import FIELDS
from ..store import Conversation, ExportPart, MessageRow
from ..store.exports import ExportRead
from .core import Core
from .stored import as_bytes, as_stored, decoded, part_ok, readable

BATCH = 20  # messages a statement
WHOLE_UNDER = 64 * 1024  # bytes: a part this big or bigger is read in pieces
FILE_WHOLE = 16 * 2**20  # bytes: an attachment sent inline is drawn (HTML) up to this size
SENT = 64 * 1024  # bytes the answer is sent in

Row = tuple[Any, ...]  # (id, position, seq, head, checked, created_at)


class Exports(Core):
    def export(
        self, account: str, agent_id: str, format: Any = "json", shared: bool = False
    ) -> tuple[str, str, Iterator[bytes]]:
        """The agent's whole export in ``format`` (json, md or html): its media type, a file name
        (from the agent's title) and its bytes, read as they are sent. Access is decided first:
        the one not-found, or a 400 for a format that is none of the three, before a byte is sent.
        ``shared``: for a share link's reader, who is not told the agent's workspace."""
        if format not in FORMATS:
            raise BadRequest("'format' is json, md or html", where="format")
        conv = self.conversation(account, agent_id)
        agent = {"id": conv.id, "title": conv.title, **({} if shared else {"workspace_id": conv.workspace_id})}
        if format == "json":
            pieces = self._export_json(conv, agent)
        else:
            pieces = self._export_document(conv, agent, WRITERS[format]())
        return MEDIA_TYPES[format], file_name(conv.title, format), gathered(pieces)

    # -- JSON ----------------------------------------------------------------------------

    def _export_json(self, conv: Conversation, agent: dict[str, Any]) -> Iterator[bytes]:
        with self._store.export_read() as read:
            yield b'{"agent":' + orjson.dumps(agent) + b',"messages":['
            yield from self._export_json_messages(read, conv)
            yield b'],"subagents":{'
            for n, sub in enumerate(read.subagents(conv)):
                yield (b"," if n else b"") + orjson.dumps(sub.call_id) + b":["
                yield from self._export_json_messages(read, sub)
                yield b"]"
            yield b"}}\n"

    def _export_json_messages(self, read: ExportRead, conv: Conversation) -> Iterator[bytes]:
        first = True
        for row, mine in batches(read, conv):
            if not first:
                yield b","
            first = False
            yield from self._export_json_message(read, conv, row, mine)

    def _export_json_message(
        self, read: ExportRead, conv: Conversation, row: Row, mine: list[ExportPart]
    ) -> Iterator[bytes]:
        message_id, position, seq, head, checked, created_at = row
        head = as_bytes(head)
        if as_stored(head, checked, [p.tool for p in mine], self.read_stamp, self._retired):
            yield head[:-1] + b',"parts":['
            for n, part in enumerate(mine):
                if n:
                    yield b","
                if part.body is not None:
                    yield as_bytes(part.body)
                else:
                    yield from read.body(conv, message_id, part.idx)
            yield b"]}"
            return
        bodies: list[tuple[int, str | bytes, str | bytes | None]] = [
            (p.idx, self._export_body(read, conv, message_id, p), None) for p in mine
        ]
        message = MessageRow(message_id, position, seq, head, bodies, checked, [p.tool for p in mine], created_at)
        yield orjson.dumps(readable(message, self.registry))

    @staticmethod
    def _export_body(read: ExportRead, conv: Conversation, message_id: str, part: ExportPart) -> bytes:
        if part.body is not None:
            return as_bytes(part.body)
        return b"".join(read.body(conv, message_id, part.idx))

    # -- Markdown and HTML ---------------------------------------------------------------

    def _export_document(self, conv: Conversation, agent: dict[str, Any], writer: Writer) -> Iterator[bytes]:
        with self._store.export_read() as read:
            subagents = {sub.call_id: sub for sub in read.subagents(conv) if sub.call_id is not None}
            shown: set[str] = set()
            texts = self._export_walk(read, conv, writer, subagents, shown)
            texts = chained(writer.begin(conv.title or "", agent), texts)
            for text in texts:
                yield text.encode()
            for call, sub in subagents.items():  # those no tool call of a shown conversation started
                if call not in shown:
                    shown.add(call)
                    for text in self._export_subagent(read, sub, call, writer, subagents, shown):
                        yield text.encode()
            for text in writer.end():
                yield text.encode()

    def _export_walk(
        self, read: ExportRead, conv: Conversation, writer: Writer, subagents: dict[str, Conversation], shown: set[str]
    ) -> Iterator[str]:
        for row, mine in batches(read, conv):
            message_id, _, _, head, checked, created_at = row
            head = as_bytes(head)
            checks = not as_stored(head, checked, [p.tool for p in mine], self.read_stamp, self._retired)
            message = decoded(head)
            role = str(message.get("role", "")) if isinstance(message, dict) else ""
            yield from writer.message(role, written_at(message, created_at))
            for part in mine:
                view = self._export_view(read, conv, message_id, part, checks)
                if view is None:
                    continue
                yield from writer.part(view)
                call = view.part.get("toolCallId")
                if view.tool is not None and isinstance(call, str) and call in subagents and call not in shown:
                    shown.add(call)
                    yield from self._export_subagent(read, subagents[call], view.subagent_label() or call, writer,
                                              subagents, shown)  # fmt: skip
            yield from writer.end_message()

    def _export_subagent(
        self, read: ExportRead, sub: Conversation, label: str, writer: Writer, subagents: dict[str, Conversation],
        shown: set[str],
    ) -> Iterator[str]:  # fmt: skip
        yield from writer.subagent(label)
        yield from self._export_walk(read, sub, writer, subagents, shown)
        yield from writer.end_subagent()

    def _export_view(
        self, read: ExportRead, conv: Conversation, message_id: str, part: ExportPart, checks: bool
    ) -> PartView | None:
        """The part for a writer, its cut field (if any) read from the chunks in pieces; None
        when the read's checks drop it (a message not sent as stored, a retired tool)."""
        cut = decoded(part.cut_ref) if part.cut_ref is not None else None
        cut = cut if isinstance(cut, dict) else None
        field = cut.get("field") if cut is not None else None
        skeleton = decoded(part.cut_body) if cut is not None and part.cut_body is not None else None
        view: PartView | None = None
        if isinstance(skeleton, dict) and field in FIELDS and part.body is None:
            length = read.field_length(conv, message_id, part.idx, str(field))
            if length is not None:
                name = str(field)
                view = PartView(skeleton, {name: lambda: read.field(conv, message_id, part.idx, name)})
        elif isinstance(skeleton, dict) and field == "url" and part.size > FILE_WHOLE:
            view = PartView(skeleton, omitted={"url": part.size})
        if view is None:
            whole = decoded(self._export_body(read, conv, message_id, part))
            if not isinstance(whole, dict):
                return None
            view, cut = PartView(whole), None
        if checks and not part_ok(view.part, cut, self.registry):
            return None
        return view


def batches(read: ExportRead, conv: Conversation) -> Iterator[tuple[Row, list[ExportPart]]]:
    """Each message of the conversation in order, with its parts (small ones' bodies with them)."""
    after = -1
    while True:
        rows = read.messages(conv, after, BATCH)
        if not rows:
            return
        found = read.parts(conv, rows[0][1], rows[-1][1], WHOLE_UNDER)
        at = 0
        for row in rows:
            while at < len(found) and found[at].position < row[1]:
                at += 1
            first = at
            while at < len(found) and found[at].position == row[1]:
                at += 1
            yield row, found[first:at]
        if len(rows) < BATCH:
            return
        after = rows[-1][1]


def file_name(title: str | None, format: str) -> str:
    """A file name for the export, as the panel makes it: the title's letters, digits, ``.``,
    ``_`` and ``-`` (ASCII), other runs as one ``-``, at most 60; ``transcript`` when none is left."""
    base = re.sub(r"[^\w.-]+", "-", title or "", flags=re.ASCII).strip("-")[:60] or "transcript"
    return f"{base}.{format}"


def chained(*parts: Iterator[str]) -> Iterator[str]:
    for part in parts:
        yield from part


def gathered(pieces: Iterator[bytes]) -> Iterator[bytes]:
    """The pieces sent in chunks of about :data:`SENT` bytes (a big piece as it is)."""
    held: list[bytes] = []
    size = 0
    try:
        for piece in pieces:
            held.append(piece)
            size += len(piece)
            if size >= SENT:
                yield b"".join(held)
                held, size = [], 0
        if held:
            yield b"".join(held)
    finally:
        close = getattr(pieces, "close", None)
        if close is not None:
            close()


def written_at(message: object, stored_at: str) -> str:
    """When a message was written by its own word (``metadata.timestamp``, as the panel shows
    it: an imported session's lines keep their time), else when it was stored."""
    meta = message.get("metadata") if isinstance(message, dict) else None
    stamp = meta.get("timestamp") if isinstance(meta, dict) else None
    return stamp if isinstance(stamp, str) and stamp else stored_at
