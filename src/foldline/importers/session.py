"""What an importer produces: a session parsed whole, ready for the write door.

A :class:`Session` is one agent: its messages in order, the conversations of the subagents it
started (keyed by the tool call id that started each), a title and where it came from. The
helpers here build the parts every format shares: tool parts that always pass the write door
(an unknown or refused tool becomes a ``dynamic-tool``), and the outcome of a call.

Each conversation is dated by its source: its first and last line's timestamps. A call whose
result never came is closed once its turn is over: when a later message follows it, or when the
conversation has been quiet for ``IDLE_SECONDS`` (an agent that is still running appends to its
file all the time): its own last line is older than that, or its file was not written for that
long. The line's own time comes first: a month-old session copied or cloned today has a fresh
file, but it is not running.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..errors import Invalid
from ..message import NOT_IN_NAMES, check_tool_schemas, set_unknown_outcome
from ..registry import Registry
from ..store import MessageWrite

Json = dict[str, Any]
TITLE_MAX = 120
# A session file not modified for this long before an import is over: the calls still open in its
# last message are closed as the turn-end outcome (a live file, appended to all the time, keeps them).
IDLE_SECONDS = 10 * 60


def iso_time(value: Any) -> str | None:
    """A log's timestamp in the store's form (UTC, milliseconds, ``Z``), or None if it is not one."""
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def is_idle(path: Path) -> bool:
    """Whether ``path`` was last modified more than ``IDLE_SECONDS`` ago (so no agent is writing it)."""
    try:
        return time.time() - path.stat().st_mtime > IDLE_SECONDS
    except OSError:
        return False


def stale(stamp: str | None) -> bool:
    """Whether a log's timestamp (the store's form) is more than ``IDLE_SECONDS`` in the past."""
    if stamp is None:
        return False
    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return False
    return time.time() - moment.timestamp() > IDLE_SECONDS


@dataclass
class Conversation:
    """The messages of one conversation (an agent's, or a subagent's), in the order they were written."""

    namespace: uuid.UUID
    messages: list[Json] = field(default_factory=list)
    by_key: dict[str, Json] = field(default_factory=dict)
    title: str | None = None
    first_at: str | None = None  # the first line's timestamp, in the store's form
    last_at: str | None = None  # the last line's timestamp
    idle: bool = False  # its file is no longer written: calls open in the last message are over too

    def saw(self, stamp: Any) -> None:
        """Note a line's timestamp: the conversation runs from its first line to its last."""
        found = iso_time(stamp)
        if found is not None:
            self.first_at = self.first_at or found
            self.last_at = found

    def message(self, key: str, role: str, metadata: Json) -> tuple[Json, bool]:
        """The message for ``key``, made (with a stable id) if new; and whether it was new."""
        found = self.by_key.get(key)
        if found is not None:
            return found, False
        made: Json = {"id": str(uuid.uuid5(self.namespace, key)), "role": role, "metadata": metadata, "parts": []}
        self.by_key[key] = made
        self.messages.append(made)
        return made, True


def file_stamp(path: Path) -> str | None:
    """A file's modification time in the store's form, or None if it cannot be read."""
    try:
        return iso_time(datetime.fromtimestamp(path.stat().st_mtime, UTC).isoformat())
    except OSError:
        return None


def date_untimed(conv: Conversation, fallback: str | None) -> None:
    """Date what the log left undated: a conversation with no time at all runs at ``fallback``
    (its file's modification time); a message without ``metadata.timestamp`` takes the last time
    stated before it (``conv.first_at`` before the first), and where that is the file's time it is
    marked ``metadata.timestampFrom: "file"``. So no message is dated by the import, nor priced
    on the import's day."""
    if conv.first_at is None and fallback is not None:
        conv.first_at = conv.last_at = fallback
    from_file = fallback is not None and conv.first_at == fallback  # the format dated it by its file too
    last = conv.first_at
    for message in conv.messages:
        meta = message.setdefault("metadata", {})
        if isinstance(meta.get("timestamp"), str) and iso_time(meta["timestamp"]):
            last = meta["timestamp"]
            from_file = False
        elif last is not None:
            meta["timestamp"] = last
            if from_file:
                meta["timestampFrom"] = "file"


@dataclass
class Session:
    """One agent to write: its conversation and its subagents' conversations by call id."""

    source: str  # the main file's path
    format: str  # "claude-code" or "codex"
    session_id: str
    main: Conversation
    subagents: dict[str, Conversation] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)
    parent: tuple[str, str] | None = None  # (parent session id, call) for a subagent rollout of another session
    # Its messages' writes made ready ahead by an import's worker (importers.ahead), by the call
    # of their conversation in this session ("" for the main one), then by message id.
    writes: dict[str, dict[str, MessageWrite]] = field(default_factory=dict, repr=False)
    # Their marks (``writer.marked``: the short hash and JSON size of each message), made there too.
    marks: dict[str, dict[str, tuple[str, int]]] = field(default_factory=dict, repr=False)

    def date_untimed(self) -> None:
        """Date each conversation's undated messages (:func:`date_untimed`), by the main file's time."""
        fallback = file_stamp(Path(self.source))
        for conv in (self.main, *self.subagents.values()):
            date_untimed(conv, fallback)

    @property
    def title(self) -> str:
        return self.main.title or f"{self.format} session {self.session_id[:8]}"


def short_title(text: str) -> str | None:
    """One line of at most 120 code points, without control characters (as the write door takes titles)."""
    line = " ".join(NOT_IN_NAMES.sub(" ", text).split())
    if not line:
        return None
    return line if len(line) <= TITLE_MAX else line[: TITLE_MAX - 1] + "…"


def tool_part(registry: Registry, name: str, call_id: str, tool_input: Any) -> Json:
    """A tool part awaiting its outcome: ``tool-NAME`` for a registered tool, else ``dynamic-tool``."""
    if not isinstance(tool_input, dict):
        tool_input = {"input": tool_input}
    known = registry.tool(name)
    if known is None or known.retired or name.startswith("mcp__"):
        return {
            "type": "dynamic-tool",
            "toolName": name,
            "toolCallId": call_id,
            "state": "input-available",
            "input": tool_input,
        }
    return {"type": f"tool-{name}", "toolCallId": call_id, "state": "input-available", "input": tool_input}


def set_output(part: Json, output: Any, error: bool = False) -> None:
    """Give a tool part its outcome: the output the model saw, or an error."""
    part.pop("output", None)
    part.pop("errorText", None)
    if error:
        part["state"] = "output-error"
        part["errorText"] = output if isinstance(output, str) else str(output)
    else:
        part["state"] = "output-available"
        part["output"] = output


def image_file(media_type: str, data: str, call_id: str) -> Json:
    """An image a tool returned, as a ``file`` part (the panel draws it, a read cuts it by reference)."""
    return {
        "type": "file",
        "mediaType": media_type,
        "url": f"data:{media_type};base64,{data}",
        "providerMetadata": {"foldline": {"toolCallId": call_id}},
    }


def lift_images(message: Json, part: Json, output: Any) -> Any:
    """A tool output of content items with its images (``{"type": "media", mediaType, data}``)
    taken out: each becomes a ``file`` part right after the tool's part in ``message``, and the
    output keeps a short note in its place, so no base64 is ever drawn as text."""
    if not isinstance(output, list) or not any(is_media(item) for item in output):
        return output
    kept: list[Any] = []
    files: list[Json] = []
    for item in output:
        if not is_media(item):
            kept.append(item)
            continue
        files.append(image_file(str(item["mediaType"]), str(item["data"]), str(part.get("toolCallId"))))
        size = len(item["data"]) * 3 // 4
        kept.append({"type": "text", "text": f"[image {len(files)}: {item['mediaType']}, {size} bytes, shown below]"})
    at = next((i for i, p in enumerate(message["parts"]) if p is part), len(message["parts"]) - 1) + 1
    message["parts"][at:at] = files
    texts = [item.get("text") for item in kept if isinstance(item, dict)]
    if len(texts) == len(kept) and all(isinstance(t, str) for t in texts):
        return "\n".join(str(t) for t in texts)
    return kept


def is_media(item: Any) -> bool:
    return (
        isinstance(item, dict) and item.get("type") == "media"
        and isinstance(item.get("data"), str) and isinstance(item.get("mediaType"), str)
    )  # fmt: skip


def settle(part: Json, registry: Registry, ended: bool) -> None:
    """Close a call that never returned (when its turn is over) and make sure the door takes the part.

    A registered tool whose schema refuses what the session holds is kept as a ``dynamic-tool``:
    the data is real, so it is shown rather than dropped.
    """
    if ended and part["state"] == "input-available":
        set_unknown_outcome(part)
    if part["type"] == "dynamic-tool":
        return
    try:
        check_tool_schemas(part, "", registry)
    except Invalid:
        part["toolName"] = part["type"][5:]
        part["type"] = "dynamic-tool"


def settle_conversation(conv: Conversation, registry: Registry) -> None:
    """Settle every tool part; calls still open in the last message may still be running, unless
    the conversation is quiet: its last line is old, or its file is idle. A message left without
    parts is dropped; the usage it reported is added to the assistant message before it (or,
    at the start, after it), so no token goes uncounted."""
    last = len(conv.messages) - 1
    quiet = conv.idle or stale(conv.last_at)
    for i, message in enumerate(conv.messages):
        for part in message["parts"]:
            if part["type"] == "dynamic-tool" or part["type"].startswith("tool-"):
                settle(part, registry, ended=i < last or quiet)
    kept: list[Json] = []
    orphan: Json | None = None  # usage of dropped messages that no kept message took yet
    for message in conv.messages:
        usage = message.get("metadata", {}).get("usage")
        if not message["parts"]:
            if usage:
                target = next((m for m in reversed(kept) if m["role"] == "assistant"), None)
                if target is None:
                    orphan = add_usage(orphan, usage)
                else:
                    target["metadata"]["usage"] = add_usage(target["metadata"].get("usage"), usage)
            continue
        if orphan is not None and message["role"] == "assistant":
            message["metadata"]["usage"] = add_usage(orphan, usage)
            orphan = None
        kept.append(message)
    conv.messages = kept


USAGE_KEYS = ("inputTokens", "outputTokens", "totalTokens")
DETAIL_KEYS = {"inputTokenDetails": ("noCacheTokens", "cacheReadTokens", "cacheWriteTokens"),
               "outputTokenDetails": ("textTokens", "reasoningTokens")}  # fmt: skip


def usage_of(input_tokens: int, output_tokens: int, cache_read: int = 0, cache_write: int = 0,
             reasoning: int | None = None) -> Json:  # fmt: skip
    """A usage report in the AI SDK's ``LanguageModelUsage`` shape, as the write door takes it:
    ``input_tokens`` counts only what the cache did not hold; ``inputTokens`` counts it all."""
    total_in = input_tokens + cache_read + cache_write
    usage: Json = {
        "inputTokens": total_in,
        "outputTokens": output_tokens,
        "totalTokens": total_in + output_tokens,
        "inputTokenDetails": {"noCacheTokens": input_tokens, "cacheReadTokens": cache_read,
                              "cacheWriteTokens": cache_write},
    }  # fmt: skip
    if reasoning is not None:
        usage["outputTokenDetails"] = {"reasoningTokens": reasoning}
    return usage


def add_usage(a: Json | None, b: Json | None) -> Json:
    """Two usage reports made by :func:`usage_of` (either may be None), added."""
    if not a or not b:
        return dict(a or b or {})
    out: Json = {key: int(a.get(key) or 0) + int(b.get(key) or 0) for key in USAGE_KEYS}
    for group, keys in DETAIL_KEYS.items():
        if group in a or group in b:
            x, y = a.get(group) or {}, b.get(group) or {}
            out[group] = {key: int(x.get(key) or 0) + int(y.get(key) or 0) for key in keys if key in x or key in y}
    return out
