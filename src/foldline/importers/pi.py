"""pi sessions (``~/.pi/agent/sessions/--<cwd>--/<time>_<uuid>.jsonl``) as Foldline messages.

Line 1 is the header ``{type: "session", version, id, timestamp, cwd}``; every later entry has
``{type, id, parentId, timestamp}`` and the entries form a tree (pi branches in place). The
conversation shown is the active one: the path from the last entry back to the root; the other
branches are abandoned attempts. A ``message`` entry's ``message`` is ``user`` (text and image
blocks), ``assistant`` (``text``, ``thinking`` as ``reasoning``, ``toolCall {id, name,
arguments}`` as tool parts; ``model``, ``provider``, ``usage {input, output, cacheRead,
cacheWrite}``) or ``toolResult`` (``toolCallId``, ``content``, ``isError``: the call's outcome).
``session_info.name`` is the title, ``compaction`` a system note of its summary; model and
thinking-level changes, custom and branch-summary entries are not shown.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import Any

from ..registry import Registry
from .formats import Format, Group, Head, one_session
from .jsonl import read_lines
from .session import (
    Conversation,
    Json,
    Session,
    is_idle,
    set_output,
    settle_conversation,
    short_title,
    tool_part,
    usage_of,
)

NAME = "pi"


def is_header(d: Json) -> bool:
    return d.get("type") == "session" and isinstance(d.get("id"), str) and "version" in d and "cwd" in d


def sniff(head: Head) -> bool:
    return bool(head.lines) and is_header(head.lines[0])


def session_id(head: Head) -> str:
    return str(head.lines[0]["id"])


def active_path(entries: list[Json]) -> list[Json]:
    """The entries from the root to the last one, following ``parentId``."""
    by_id = {e["id"]: e for e in entries if isinstance(e.get("id"), str)}
    path: list[Json] = []
    at = entries[-1] if entries else None
    seen: set[str] = set()
    while at is not None and at.get("id") not in seen:
        seen.add(str(at.get("id")))
        path.append(at)
        parent = at.get("parentId")
        at = by_id.get(parent) if isinstance(parent, str) else None
    return path[::-1]


def count(raw: Json, key: str) -> int:
    value = raw.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def blocks(content: Any) -> list[Json]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def text_parts(content: Any) -> list[Json]:
    parts: list[Json] = []
    for b in blocks(content):
        if b.get("type") == "text" and isinstance(b.get("text"), str) and b["text"]:
            parts.append({"type": "text", "text": b["text"], "state": "done"})
        elif b.get("type") == "image" and isinstance(b.get("data"), str):
            media = b["mimeType"] if isinstance(b.get("mimeType"), str) else "image/png"
            parts.append({"type": "file", "mediaType": media, "url": f"data:{media};base64,{b['data']}"})
    return parts


def parse(group: Group, registry: Registry, namespace: uuid.UUID) -> Session:
    conv = Conversation(namespace, idle=is_idle(group.main))
    entries = [d for d in read_lines(group.main) if not is_header(d)]
    calls: dict[str, Json] = {}
    for e in active_path(entries):
        conv.saw(e.get("timestamp"))
        meta: Json = {"source": NAME, "lineType": str(e.get("type"))}
        if conv.last_at:
            meta["timestamp"] = conv.last_at
        kind, m = e.get("type"), e.get("message")
        if kind == "session_info" and isinstance(e.get("name"), str) and e["name"].strip():
            conv.title = short_title(e["name"])
        elif kind == "compaction" and isinstance(e.get("summary"), str) and e["summary"]:
            note, _ = conv.message(f"e:{e.get('id')}", "system", {**meta, "compaction": True})
            note["parts"].append({"type": "text", "text": e["summary"], "state": "done"})
        elif kind == "message" and isinstance(m, dict):
            message_entry(conv, registry, calls, e, m, meta)
    if conv.title is None:
        first = next((m for m in conv.messages if m["role"] == "user"), None)
        said = " ".join(p["text"] for p in first["parts"] if p["type"] == "text") if first else ""
        conv.title = short_title(said) if said else None
    settle_conversation(conv, registry)
    return Session(str(group.main), NAME, group.session_id, conv, files=[str(group.main)])


def message_entry(conv: Conversation, registry: Registry, calls: dict[str, Json], e: Json, m: Json, meta: Json) -> None:
    role = m.get("role")
    if role == "toolResult":
        part = calls.get(str(m.get("toolCallId")))
        if part is not None:
            texts = [p["text"] for p in text_parts(m.get("content")) if p["type"] == "text"]
            set_output(part, "\n".join(texts), error=m.get("isError") is True)
        return
    if role not in ("user", "assistant"):
        return
    message, _ = conv.message(f"e:{e.get('id')}", str(role), meta)
    if role == "user":
        message["parts"].extend(text_parts(m.get("content")))
        return
    for key in ("model", "provider", "stopReason"):
        if isinstance(m.get(key), str) and m[key]:
            meta[key] = m[key]
    usage = m.get("usage")
    if isinstance(usage, dict):
        meta["usage"] = usage_of(count(usage, "input"), count(usage, "output"), count(usage, "cacheRead"),
                                 count(usage, "cacheWrite"))  # fmt: skip
    for b in blocks(m.get("content")):
        if b.get("type") == "thinking" and isinstance(b.get("thinking"), str) and b["thinking"].strip():
            message["parts"].append({"type": "reasoning", "text": b["thinking"], "state": "done"})
        elif b.get("type") == "toolCall":
            call_id = str(b.get("id") or f"{e.get('id')}:{len(message['parts'])}")
            args = b.get("arguments")
            part = tool_part(registry, str(b.get("name") or "unknown"), call_id, args if isinstance(args, dict) else {})
            calls[call_id] = part
            message["parts"].append(part)
        else:
            message["parts"].extend(text_parts([b]))


def locations() -> list[Path]:
    root = os.environ.get("PI_CODING_AGENT_DIR")
    return [Path(root) / "sessions" if root else Path.home() / ".pi" / "agent" / "sessions"]


FORMAT = Format(NAME, "pi", (".jsonl",), sniff, one_session(NAME, session_id), parse, locations)
