"""The write door: a message validated fully and stored (with its cuts and searchable text), and the turn-end."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any

import orjson

from ..agentlist import PROJECT_MAX
from ..cut import candidate, cut_text
from ..errors import Conflict, NotFound
from ..message import check_message, close_open_tools, tool_name
from ..search.fields import searchable
from ..sources import NAMES
from ..store import AgentFacts, Conversation, MessageWrite, StaleWrite, StoredPart
from ..store.chunks import FieldText
from ..usage import NAME_MAX, message_usage, parse_usage
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
        messages = []
        for message_id, (_, body) in zip(ids, bodies, strict=True):
            message = check_message(body, self.registry, message_id)
            parse_usage(message.get("metadata"))  # a usage report of another shape is refused (422)
            messages.append(message)
        # A subagent's conversation is made by its first write, and only once that write passed.
        conv = parent if call is None else self._subagent(account, parent, call)
        done = self._store.put_messages(conv, [self._message_write(m, self.read_stamp) for m in messages])
        self._changed(conv.id)
        return [{"id": m["id"], "seq": seq, "created": new} for m, (seq, new) in zip(messages, done, strict=True)]

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
        write = self._message_write(message, self.read_stamp if checked else None)
        ((seq, created),) = self._store.put_messages(conv, [write], expect_seq)
        self._changed(conv.id)
        return {"id": message["id"], "seq": seq, "created": created}

    def _message_write(self, message: Json, stamp: str | None) -> MessageWrite:
        """A valid message as the store writes it: its head, its parts with their cuts and texts.
        Every secret in it is replaced by its marker first (:mod:`foldline.redaction`), before
        anything is cut, chunked or stored."""
        if self.redactor is not None:
            message, _ = self.redactor.message(message)
        head = {k: v for k, v in message.items() if k != "parts"}
        stored = tuple(self._stored_part(i, p) for i, p in enumerate(message["parts"]))
        meta = message.get("metadata")
        return MessageWrite(
            message["id"], message["role"], orjson.dumps(head).decode(), stored, stamp,
            message_usage(meta), agent_facts(message["role"], meta),
        )  # fmt: skip

    def _stored_part(self, index: int, part: Json) -> StoredPart:
        """A part to store, with its cut if it has a field over the bound (of any tool: whether
        the cut is sent is decided by the registry when the part is read)."""
        body = orjson.dumps(part).decode()
        name = tool_name(part)
        found = candidate(part)
        # A text part (an answer, a prompt) is cut only past the larger text bound, with the same ends.
        bound = self.settings.text_bound if part.get("type") == "text" else self.settings.bound
        cut = cut_text(*found, bound=bound, half=self.settings.bound // 2) if found else None
        texts = tuple(
            FieldText(field, text, len(cut.head) if cut and cut.field == field else None)
            for field, text in searchable(part)
        )
        if cut is None:
            return StoredPart(index, name, body, texts=texts)
        rest = {k: v for k, v in part.items() if k != cut.field}
        ref = {"index": index, "field": cut.field, "bytes": cut.bytes, "head": cut.head, "tail": cut.tail}
        return StoredPart(index, name, body, orjson.dumps(rest).decode(), orjson.dumps(ref).decode(), texts)

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


def agent_facts(role: str, metadata: Any) -> AgentFacts:
    """Where an agent ran, as a message's metadata says: its source (an importer's name, as
    :mod:`foldline.sources` lists them, else ``api``), folder (``cwd``), git branch
    (``gitBranch``, or Codex's ``git.branch``) and, for an assistant message, its model."""
    meta = metadata if isinstance(metadata, dict) else {}

    def text(value: Any, most: int) -> str | None:  # NUL cannot be stored in PostgreSQL text
        return value[:most] if isinstance(value, str) and value and "\x00" not in value else None

    source = meta.get("source") if meta.get("source") in NAMES else "api"
    git = meta.get("git")
    branch = text(meta.get("gitBranch"), NAME_MAX) or (
        text(git.get("branch"), NAME_MAX) if isinstance(git, dict) else None
    )
    model = text(meta.get("model"), NAME_MAX) if role == "assistant" else None
    if model is not None and model.startswith("<"):  # Claude Code's "<synthetic>" notes are no model
        model = None
    return AgentFacts(source, text(meta.get("cwd"), PROJECT_MAX), branch, model)
