"""Continue sessions (``~/.continue/sessions/<sessionId>.json``) as Foldline messages.

A session is one JSON document, rewritten whole on every change: ``{sessionId, title,
workspaceDirectory, history[], usage}``. A history item is ``{message {role, content,
toolCalls[]}, contextItems, toolCallStates[]}``: ``content`` is text (or ``text`` and
``imageUrl`` parts), each ``toolCalls[]`` entry a tool part (``function.arguments`` is JSON
text), and its ``toolCallStates[]`` entry (same ``toolCallId``) gives the outcome: ``output[]``
contents joined when ``done``, an ``output-error`` when ``errored`` or ``canceled``. Message ids
are the item's place in ``history``, so a rewritten session writes only what changed. ``usage``
exists only for the whole session: it is the usage of the last assistant message. There are no
per-message times or models: the session (not its messages) is dated by its file's modification
time, so a rewrite changes only the messages that did.
"""

from __future__ import annotations

import os
import re
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from ..registry import Registry
from .document import read_document
from .formats import Format, Group, Head, one_session
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

NAME = "continue"
OPENING = re.compile(rb'^\s*\{\s*"sessionId"\s*:\s*"([^"]+)"')
FAILED = {"errored", "canceled"}


def sniff(head: Head) -> bool:
    return OPENING.match(head.data) is not None and b'"history"' in head.data and b'"workspaceDirectory"' in head.data


def session_id(head: Head) -> str:
    found = OPENING.match(head.data)
    return found.group(1).decode() if found else head.path.stem


def count(raw: Json, key: str) -> int:
    value = raw.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def content_parts(content: Any) -> list[Json]:
    if isinstance(content, str):
        return [{"type": "text", "text": content, "state": "done"}] if content.strip() else []
    parts: list[Json] = []
    for p in content if isinstance(content, list) else []:
        if not isinstance(p, dict):
            continue
        if p.get("type") == "text" and isinstance(p.get("text"), str) and p["text"].strip():
            parts.append({"type": "text", "text": p["text"], "state": "done"})
        image = p.get("imageUrl")
        if p.get("type") == "imageUrl" and isinstance(image, dict) and isinstance(image.get("url"), str):
            url = image["url"]
            media = url[5:].split(";", 1)[0] if url.startswith("data:") else "image/*"
            parts.append({"type": "file", "mediaType": media or "image/*", "url": url})
    return parts


def arguments(raw: Any) -> Json:
    if isinstance(raw, dict):
        return raw
    try:
        found = orjson.loads(raw) if isinstance(raw, str) and raw.strip() else {}
    except orjson.JSONDecodeError:
        return {"arguments": raw}
    return found if isinstance(found, dict) else {"arguments": found}


def outcome(part: Json, state: Json) -> None:
    output = state.get("output")
    texts = [o.get("content") for o in output if isinstance(o, dict)] if isinstance(output, list) else []
    text = "\n".join(t for t in texts if isinstance(t, str))
    if state.get("status") == "done":
        set_output(part, text)
    elif state.get("status") in FAILED:
        set_output(part, text or str(state["status"]), error=True)


def item_message(conv: Conversation, registry: Registry, number: int, item: Json) -> None:
    m = item.get("message")
    if not isinstance(m, dict) or m.get("role") not in ("user", "assistant", "system"):
        return
    meta: Json = {"source": NAME, "lineType": str(m["role"])}
    message, _ = conv.message(f"h:{number}", str(m["role"]), meta)
    message["parts"].extend(content_parts(m.get("content")))
    states = {s.get("toolCallId"): s for s in item.get("toolCallStates") or [] if isinstance(s, dict)}
    for i, call in enumerate(m.get("toolCalls") or []):
        if not isinstance(call, dict):
            continue
        function: Json = call["function"] if isinstance(call.get("function"), dict) else {}
        call_id = str(call.get("id") or f"h:{number}:{i}")
        name = str(function.get("name") or "unknown")
        part = tool_part(registry, name, call_id, arguments(function.get("arguments")))
        if isinstance(states.get(call.get("id")), dict):
            outcome(part, states[call.get("id")])
        message["parts"].append(part)
    if m["role"] == "user" and conv.title is None:
        said = " ".join(p["text"] for p in message["parts"] if p["type"] == "text")
        conv.title = short_title(said) if said else None


def parse(group: Group, registry: Registry, namespace: uuid.UUID) -> Session:
    conv = Conversation(namespace, idle=is_idle(group.main))
    doc = read_document(group.main)
    doc = doc if isinstance(doc, dict) else {}
    stamp = datetime.fromtimestamp(group.main.stat().st_mtime, UTC).isoformat()
    conv.saw(stamp)
    history: list[Any] = doc["history"] if isinstance(doc.get("history"), list) else []
    for number, item in enumerate(history):
        if isinstance(item, dict):
            item_message(conv, registry, number, item)
    usage = doc.get("usage")
    last = next((m for m in reversed(conv.messages) if m["role"] == "assistant" and m["parts"]), None)
    if isinstance(usage, dict) and last is not None:
        details = usage["promptTokensDetails"] if isinstance(usage.get("promptTokensDetails"), dict) else {}
        cached, written = count(details, "cachedTokens"), count(details, "cacheWriteTokens")
        said = (count(usage, "promptTokens"), count(usage, "completionTokens"))
        last["metadata"]["usage"] = usage_of(*said, cached, written)
        last["metadata"]["usageOf"] = "session"
    if isinstance(doc.get("title"), str) and doc["title"].strip():
        conv.title = short_title(doc["title"])
    settle_conversation(conv, registry)
    return Session(str(group.main), NAME, group.session_id, conv, files=[str(group.main)])


def locations() -> list[Path]:
    root = os.environ.get("CONTINUE_GLOBAL_DIR")
    return [Path(root) / "sessions" if root else Path.home() / ".continue" / "sessions"]


FORMAT = Format(NAME, "Continue", (".json",), sniff, one_session(NAME, session_id), parse, locations)
