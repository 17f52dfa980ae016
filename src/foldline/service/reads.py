"""Reads: a transcript's pages (sent as stored where the stamp vouches for them), one part whole or
a slice of it, and the changes live followers are sent."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson

from ..errors import BadRequest, NotFound
from ..message import readable_part
from ..pagecache import PageKey
from ..search.fields import FIELDS
from ..search.query import parse_offset
from ..store import Conversation, MessageRow, PageRead
from ..wire import parse_before, parse_index
from .core import Core, Json, canonical_uuid, is_call
from .stored import as_bytes, as_stored, decoded, readable


class Reads(Core):
    def messages(
        self,
        account: str,
        agent_id: str,
        *,
        call: str | None = None,
        cut: bool = False,
        limit: int | None = None,
        before: str | None = None,
    ) -> Json:
        """A page of a transcript: ``{"messages", "next", "seq"}`` (:meth:`page_json`, decoded)."""
        page: Json = orjson.loads(self.page_json(account, agent_id, call=call, cut=cut, limit=limit, before=before))
        return page

    def page_json(
        self,
        account: str,
        agent_id: str,
        *,
        call: str | None = None,
        cut: bool = False,
        limit: int | None = None,
        before: str | None = None,
        reread: bool = False,
    ) -> bytes:
        """A page of a transcript as the API sends it, in one read of the database.

        A message stamped with today's :attr:`read_stamp` is sent from its stored JSON texts as
        they are (no decoding, no encoding): it passed the write door's checks, which include
        every check a read runs but one, the retired tools, which is asked of each part's stored
        ``tool`` column. Any other message (stored before stamps, under another registry's
        metadata schemas, or not through the write door) is decoded and checked part by part.
        `seq`, read with the page: follow the events from here (…/events?since=seq) to miss nothing.
        ``reread``: the caller has just asked (:func:`foldline.pagereads.kept_page`), so a kept
        copy is not asked about again.
        """
        if call is not None and not is_call(call):
            raise NotFound()
        agent = canonical_uuid(agent_id)
        try:
            cursor = parse_before(before)
        except BadRequest:
            self.conversation(account, agent, call)  # a conversation not visible is the one not-found
            raise
        text_tools = self.registry.text_tools if cut else None
        key: PageKey = (agent, call, cut, limit, cursor)
        kept = self.pages.get(key)
        known = None if kept is None or reread else kept.seq
        found = self._store.read_page(account, agent, call, cut=text_tools, limit=limit, before=cursor, known_seq=known)
        if found is None:
            raise NotFound()
        if found.unchanged and kept is not None:
            return kept.body
        out = [b'{"messages":[']
        self._page_bytes(found, out, dated=cut)
        after = b"null" if not (found.more and found.messages) else b'"%d"' % found.messages[0][1]
        out.append(b'],"next":%s,"seq":%d}' % (after, found.seq))
        page = b"".join(out)
        self.pages.put(key, found.seq, page)
        return page

    def _page_bytes(self, page: PageRead, out: list[bytes], dated: bool) -> None:
        """Add a page's messages to ``out``, comma-separated, as a read sends them.

        The parts arrive in the messages' order, so one walk down both lists pairs them. A
        message the stamp vouches for (see :meth:`page_json`) is sent from its stored texts;
        any other is read back whole and checked (:func:`~foldline.service.stored.readable`).
        """
        stamp, retired, parts = self.read_stamp, self._retired, page.parts
        at, count = 0, len(parts)
        for n, (message_id, position, seq, head, checked, created_at) in enumerate(page.messages):
            while at < count and parts[at][0] < position:  # a part of no message on the page
                at += 1
            first = at
            while at < count and parts[at][0] == position:
                at += 1
            mine = parts[first:at]
            if n:
                out.append(b",")
            head = as_bytes(head)
            if not as_stored(head, checked, [tool for _, _, tool, _, _ in mine], stamp, retired):
                row = MessageRow(message_id, position, seq, head, [(i, b, r) for _, i, _, b, r in mine], checked,
                                 [tool for _, _, tool, _, _ in mine], created_at)  # fmt: skip
                out.append(orjson.dumps(readable(row, self.registry, dated=dated)))
                continue
            out += (head[:-1], b',"parts":[', b",".join([as_bytes(body) for _, _, _, body, _ in mine]), b"]")
            refs = [as_bytes(ref) for _, _, _, _, ref in mine if ref is not None]
            if refs:
                out += (b',"cutParts":[', b",".join(refs), b"]")
            if dated and created_at:
                out += (b',"createdAt":', orjson.dumps(created_at))
            out.append(b"}")

    def changes(self, conv: Conversation, since: int, limit: int | None = None) -> list[tuple[int, Json]]:
        """Messages written after ``since`` (at most ``limit``, oldest first), cut, each with the
        seq that wrote it."""
        rows = self._store.changes(conv, since, self.registry.text_tools, limit)
        return [(row.seq, readable(row, self.registry, dated=True)) for row in rows]

    def seqs(self, conversation_ids: list[str]) -> dict[str, int]:
        """The write counters of some conversations (live follow's look for other processes' writes)."""
        return self._store.seqs(conversation_ids)

    def part(self, account: str, agent_id: str, message_id: str, index: str, call: str | None = None) -> Json:
        """One part, whole (the read's cheap checks apply: a part they drop is not found)."""
        conv = self.conversation(account, agent_id, call)
        found = self._store.part(conv, canonical_uuid(message_id), parse_index(index))
        if found is None:
            raise NotFound()
        part = decoded(found[0])
        if not isinstance(part, dict) or not readable_part(part, self.registry):
            raise NotFound()
        return part

    def part_stream(
        self, account: str, agent_id: str, message_id: str, index: str, call: str | None = None
    ) -> tuple[int, Iterator[bytes]]:
        """One part, whole, as the API sends it: its size in bytes and its JSON in chunks.

        A part of a stamped message (:meth:`page_json`) whose tool is not retired is sent as it
        is stored, read as it is sent where the backend can; any other is decoded and checked
        as :meth:`part` does."""
        conv = self.conversation(account, agent_id, call)
        found = self._store.part_body(conv, canonical_uuid(message_id), parse_index(index))
        if found is None:
            raise NotFound()
        if found.checked == self.read_stamp and (found.tool is None or found.tool not in self._retired):
            return found.size, found.chunks
        try:
            part = decoded(b"".join(found.chunks))
        finally:
            found.close()
        if not isinstance(part, dict) or not readable_part(part, self.registry):
            raise NotFound()
        body = orjson.dumps(part)
        return len(body), iter((body,))

    def part_slice(
        self,
        account: str,
        agent_id: str,
        message_id: str,
        index: str | int,
        field: Any,
        start: Any = 0,
        end: Any = None,
        call: str | None = None,
    ) -> Json:
        """Code points ``[start, end)`` of one field of one part, ``end`` clamped to the field's
        length; read from the chunks that cover them, never the whole part."""
        if field not in FIELDS:
            raise BadRequest(f"'field' is one of {', '.join(FIELDS)}", where="field")
        first = parse_offset(start, "start")
        last = None if end is None else parse_offset(end, "end")
        if last is not None and first > last:
            raise BadRequest("'start' must not be past 'end'", where="start")
        conv = self.conversation(account, agent_id, call)
        idx = parse_index(index)
        found = self._store.text_slice(conv.id, conv.owner_id, canonical_uuid(message_id), idx, field, first, last)
        if found is None or (found.tool is not None and self.registry.retired(found.tool)):
            raise NotFound()
        first = min(first, found.length)
        last = found.length if last is None else min(last, found.length)
        text = found.text[first - found.start : last - found.start]
        return {"field": field, "start": first, "end": last, "length": found.length, "text": text}
