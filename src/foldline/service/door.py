"""The write door's own half: a message checked in full and made ready to store (redacted, cut,
its searchable text found, its usage priced), with no store in sight.

:class:`Door` needs only the registry and the settings, so it runs where the store is not: in an
import's worker processes (:mod:`foldline.importers.ahead`), which make a session's writes ready
while the importing process writes the ones before. :class:`~foldline.service.writes.Writes`
puts what it makes into the store.
"""

from __future__ import annotations

from typing import Any

import orjson

from ..agentlist import PROJECT_MAX
from ..cut import candidate, cut_text
from ..message import check_message, tool_name
from ..redaction import Redactor, load
from ..registry import Registry
from ..search.fields import searchable
from ..settings import Settings
from ..sources import NAMES
from ..store import AgentFacts, MessageWrite, StoredPart
from ..store.chunks import FieldText
from ..usage import NAME_MAX, message_usage, parse_usage
from .stored import read_stamp

Json = dict[str, Any]


class Door:
    """Check a message and make it ready to store, as the settings and the registry say."""

    def __init__(self, registry: Registry, settings: Settings) -> None:
        self.registry = registry
        self.settings = settings
        self.read_stamp = read_stamp(registry)
        # Secrets are replaced before anything is stored, cut or indexed (None: redaction is off).
        self.redactor: Redactor | None = load(settings.redact_rules) if settings.redact else None

    @classmethod
    def of(cls, settings: Settings) -> Door:
        """The door ``settings`` describe, its registry loaded from them (a worker's own)."""
        return cls(Registry.load(settings.registry), settings)

    def check(self, body: Any, message_id: str) -> Json:
        """``body`` validated fully as the message ``message_id`` (raises :class:`~foldline.errors.Invalid`)."""
        message = check_message(body, self.registry, message_id)
        parse_usage(message.get("metadata"))  # a usage report of another shape is refused (422)
        return message

    def ready(self, body: Any, message_id: str) -> MessageWrite:
        """``body`` checked and made ready, stamped as passing today's checks."""
        return self.prepare(self.check(body, message_id), self.read_stamp)

    def prepare(self, message: Json, stamp: str | None) -> MessageWrite:
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
