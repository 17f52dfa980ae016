"""The write door: a message validated fully and stored (with its cuts and searchable text), and the turn-end."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any

from ..errors import Conflict, NotFound
from ..message import close_open_tools
from ..store import Conversation, MessageWrite, StaleWrite
from .core import Core, Json, canonical_uuid, is_call
from .stored import passes_read_checks, whole

TURN_END_TRIES = 5


class Writes(Core):
    def put_message(self, account: str, agent_id: str, message_id: str, body: Any, call: str | None = None) -> Json:
        """The write door: validate ``body`` fully and create or replace the message (owner only); a
        subagent's conversation is made by its first write.
        """
        return self.put_messages(account, agent_id, [(message_id, body)], call)[0]

    def batched(self) -> AbstractContextManager[None]:
        """A bulk writer's block (an import): this thread's commits inside do not each wait for the
        disk, and all are on disk when it ends. A power loss meanwhile may drop some, which the
        import (idempotent) writes again; what the API acknowledges always waits."""
        return self._store.batched()

    def put_messages(
        self, account: str, agent_id: str, bodies: Sequence[tuple[str, Any]], call: str | None = None
    ) -> list[Json]:
        """The write door for many messages of one conversation (an import's batch): each
        ``(message_id, body)`` validated as :meth:`put_message` validates it, then all written in
        one transaction, in order (each its own seq), or none if one is refused. The access is
        checked once."""
        ids = [canonical_uuid(message_id) for message_id, _ in bodies]
        parent = self._owned(account, agent_id)
        if call is not None and not is_call(call):
            raise NotFound()
        writes = [self.door.ready(body, message_id) for message_id, (_, body) in zip(ids, bodies, strict=True)]
        return self._put_writes(account, parent, writes, call)

    def put_ready(
        self, account: str, agent_id: str, writes: Sequence[MessageWrite], call: str | None = None
    ) -> list[Json]:
        """:meth:`put_messages` for messages this process's :class:`~foldline.service.door.Door`
        (or one of the same settings, in an import's worker) has already checked and made ready."""
        parent = self._owned(account, agent_id)
        if call is not None and not is_call(call):
            raise NotFound()
        return self._put_writes(account, parent, writes, call)

    def _put_writes(
        self, account: str, parent: Conversation, writes: Sequence[MessageWrite], call: str | None
    ) -> list[Json]:
        # A subagent's conversation is made by its first write, and only once that write passed.
        conv = parent if call is None else self._subagent(account, parent, call)
        done = self._store.put_messages(conv, writes)
        self._changed(conv.id)
        return [{"id": w.id, "seq": seq, "created": new} for w, (seq, new) in zip(writes, done, strict=True)]

    def check_stream(self, account: str, agent_id: str, call: str | None = None) -> None:
        """Refuse a UI message stream before its body is read, as its writes would be refused
        (the owner writes; the one not-found otherwise)."""
        self._owned(account, agent_id)
        if call is not None and not is_call(call):
            raise NotFound()

    def streamed_from(self, account: str, agent_id: str, message_id: str, call: str | None = None) -> Json | None:
        """The stored assistant message a stream that names ``message_id`` goes on from (whole),
        as the AI SDK goes on from a chat's last assistant message; ``None`` if there is none."""
        parent = self._owned(account, agent_id)
        conv = parent if call is None else self._store.visible_conversation(account, parent.id, call)
        row = self._store.message(conv, canonical_uuid(message_id)) if conv is not None else None
        if row is None:
            return None
        message = whole(row)
        return message if message.get("role") == "assistant" else None

    def _subagent(self, account: str, parent: Conversation, call: str) -> Conversation:
        found = self._store.visible_conversation(account, parent.id, call)
        if found is not None:
            return found
        return self._store.create_conversation(
            str(uuid.uuid4()), parent.workspace_id, parent.owner_id, None, parent.id, call
        )

    def _write(self, conv: Conversation, message: Json, expect_seq: int | None = None, checked: bool = True) -> Json:
        """Store a message. ``checked``: it passed the write door (or is valid by construction),
        so it is stamped with :attr:`read_stamp` and later reads send its stored text as it is."""
        write = self.door.prepare(message, self.read_stamp if checked else None)
        ((seq, created),) = self._store.put_messages(conv, [write], expect_seq)
        self._changed(conv.id)
        return {"id": message["id"], "seq": seq, "created": created}

    def end_turn(self, account: str, agent_id: str, call: str | None = None) -> Json:
        """Give every open tool part of the last assistant message an unknown outcome.

        The rewrite is a compare-and-set: if the agent writes that message meanwhile (a tool's
        real outcome arriving), the turn-end reads it again rather than overwrite it.
        """
        conv = self._target(account, agent_id, call)
        for _ in range(TURN_END_TRIES):
            message_id = self._store.last_message_id(conv, "assistant")
            row = self._store.message(conv, message_id) if message_id else None
            if row is None:
                return {"message": None, "ended": []}
            message = whole(row)
            ended = close_open_tools(message["parts"])
            if not ended:
                return {"message": message["id"], "ended": []}
            # Valid by construction (inputs kept, each open tool given an outcome) if the message
            # was; a row stored some other way is stamped only if it passes the read's checks.
            sound = row.checked == self.read_stamp or passes_read_checks(message, self.registry)
            try:
                self._write(conv, message, expect_seq=row.seq, checked=sound)
            except StaleWrite:
                continue
            return {"message": message["id"], "ended": ended}
        raise Conflict("the last message kept changing; end the turn again")

