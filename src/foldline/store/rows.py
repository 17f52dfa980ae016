"""The store's row types: what its methods take and return, and the constants they share.

No SQL here: these are plain values (and :class:`Chunks`, a part's bytes as they are read).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Protocol

from ..usage import MessageUsage
from .chunks import FieldText

EVERYONE = "*"  # announced instead of a conversation id when access changed: every follower checks again
TOKEN_ID = 12  # a token's public id: the first hex digits of its SHA-256 hash
SOMETHING = "?"  # said when some write happened, it is not known where: live follow looks at once


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(frozen=True, slots=True)
class Conversation:
    """An agent's conversation (``parent_id`` None) or a subagent's (``parent_id`` is the agent,
    ``call_id`` the tool call that started it). ``seq`` counts its writes; times are ISO 8601 UTC."""

    id: str
    workspace_id: str
    owner_id: str
    parent_id: str | None
    call_id: str | None
    title: str | None
    seq: int
    created_at: str
    updated_at: str


@dataclass(frozen=True, slots=True)
class StoredPart:
    """A part as the store keeps it: JSON texts, with its cut computed."""

    idx: int
    tool: str | None
    body: str
    cut_body: str | None = None
    cut_ref: str | None = None
    texts: tuple[FieldText, ...] = ()  # its searchable fields, stored in chunks beside it
    pieces: str | None = None  # the key of its JSON in ``part_pieces`` (then ``body`` is empty)


@dataclass(frozen=True, slots=True)
class MessageWrite:
    """One message to create or replace (:meth:`~foldline.store.Store.put_messages`): its head
    (the JSON text of all but its parts), its parts, the read stamp the caller vouches for, its
    usage and what it says of where its agent ran."""

    id: str
    role: str
    head: str
    parts: tuple[StoredPart, ...]
    checked: str | None = None
    usage: MessageUsage | None = None
    facts: AgentFacts | None = None


TOTALS = ("messages", "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "cost", "unpriced")
AGENT_SORTS = ("activity", "messages", "tokens", "cost", "title")


@dataclass(frozen=True, slots=True)
class AgentFacts:
    """Where an agent ran, as one of its own messages says (None: that message does not say)."""

    source: str | None = None
    project: str | None = None
    branch: str | None = None
    model: str | None = None


@dataclass(frozen=True, slots=True)
class AgentRow:
    """An agent as the agents list shows it: its conversation, where it ran, and its totals (its
    subagents' messages included; ``cost`` in picodollars over the ``unpriced`` messages' rest)."""

    conv: Conversation
    source: str | None
    project: str | None
    branch: str | None
    model: str | None
    messages: int
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    cost: int
    unpriced: int


@dataclass(slots=True)
class ExportPart:
    """A part as an export reads it (:meth:`~foldline.store.exports.ExportRead.parts`): its stored
    JSON when it is small (``body``, else None: read it in pieces), and its stored cut if any."""

    position: int
    idx: int
    tool: str | None
    size: int
    cut_ref: bytes | str | None
    cut_body: bytes | str | None
    body: bytes | str | None


@dataclass(frozen=True, slots=True)
class StoredBody:
    """A whole part as stored (:meth:`Store.part_body`): ``size`` bytes of JSON in ``chunks``.
    ``close()`` lets go of what reading it holds, if it is not read to its end."""

    tool: str | None
    checked: str | None
    size: int
    chunks: Iterator[bytes]

    def close(self) -> None:
        close = getattr(self.chunks, "close", None)
        if close is not None:
            close()


class Chunks(Iterator[bytes]):
    """A part's bytes as they are read, and ``release()`` once they are done with: at their
    end, on an error, or on ``close()``, even one before the first chunk was asked for (a
    generator's own ``close()`` runs nothing until it has started, so a reader gone before the
    second chunk left its connection to the garbage collector)."""

    def __init__(self, read: Iterator[bytes], release: Callable[[], None]) -> None:
        self._read, self._release = read, release
        self._done = False

    def __next__(self) -> bytes:
        try:
            return next(self._read)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        if self._done:
            return
        self._done = True
        close = getattr(self._read, "close", None)
        try:
            if close is not None:
                close()
        finally:
            self._release()


class SeqChecks(Protocol):
    """Asks, without leaving the event loop, whether a kept page still holds: the seq of a
    conversation the account may read. Opened and closed by the loop that uses it
    (:meth:`Store.seq_checks`)."""

    async def open(self) -> None: ...

    async def close(self) -> None: ...

    async def seq(self, account_id: str, agent_id: str, call_id: str | None) -> int | None:
        """The conversation's seq; None when there is none the account may read."""
        ...


@dataclass(frozen=True, slots=True)
class MessageRow:
    """A stored message as read: its ``head`` (the message's JSON without ``parts``), its
    ``position`` (fixed at creation: page order and cursor) and ``seq`` (its last write)."""

    id: str
    position: int
    seq: int
    head: str | bytes  # bytes (UTF-8) where the backend returns them undecoded (read_page)
    parts: list[tuple[int, str | bytes, str | bytes | None]]  # (idx, part JSON, cutParts entry JSON or None)
    checked: str | None = None  # the read stamp it was written under (``Transcripts`` says what it means)
    tools: list[str | None] = field(default_factory=list)  # each part's stored tool column, as ``parts``
    created_at: str | None = None  # when the message was first stored (pages and changes read it)


# A page read's rows as the driver returns them (:meth:`Store.read_page`): a message is
# (id, position, seq, head, checked, created_at) and a part (position, idx, tool, body, ref), the
# JSON texts (head, body, ref) as UTF-8 bytes where the driver can hand them over undecoded.
PageMessage = tuple[str, int, int, str | bytes, str | None, str | None]
PagePart = tuple[int, int, str | None, str | bytes, str | bytes | None]


@dataclass(frozen=True, slots=True)
class PageRead:
    """What :meth:`Store.read_page` found in one snapshot: the conversation, a page of its
    messages (oldest first) and their parts (by position, then index), whether older messages
    exist, and the conversation's seq. ``unchanged``: the conversation is still at the seq the
    caller knew, and nothing else was read."""

    conv: Conversation
    messages: list[PageMessage]
    parts: list[PagePart]
    more: bool
    seq: int
    unchanged: bool = False


@dataclass(frozen=True, slots=True)
class TextRow:
    """One chunk that matched a search, with what a hit needs to say where it is."""

    id: int
    agent_id: str
    call_id: str | None
    title: str | None
    message_id: str
    role: str
    tool: str | None
    idx: int
    field: str
    start: int
    length: int
    owned: int
    shown: int | None
    text: str


@dataclass(frozen=True, slots=True)
class Found:
    """Chunks found, newest first, and, when the search ran out of time before it had them all,
    the chunk id to go on from (chunks at most ``stopped`` are not searched yet)."""

    rows: list[TextRow]
    stopped: int | None = None


@dataclass(slots=True)
class Matched:
    """Chunk ids found by an engine's own path, newest first, and where it stopped (as above)."""

    ids: list[int] = field(default_factory=list)
    stopped: int | None = None


@dataclass(frozen=True, slots=True)
class Backlog:
    """The chunks written but not yet in the engine's index: how many, their code points, and
    how long ago the oldest one's message was written (``None``: none is pending)."""

    chunks: int
    chars: int
    oldest_seconds: float | None


@dataclass(frozen=True, slots=True)
class Slice:
    tool: str | None
    length: int
    start: int  # offset in the field of ``text``
    text: str
