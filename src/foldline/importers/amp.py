"""Amp threads (``~/.local/share/amp/threads/T-<uuid>.json``) as Foldline messages.

A thread is one JSON document, rewritten whole as it goes: ``{v, id, created, title,
messages[]}`` with Anthropic-style blocks. ``text`` is text, ``thinking`` is ``reasoning`` (its
signature is never shown), ``tool_use`` a tool part that the ``tool_result`` with the same
``toolUseID`` (on a later user message) completes: ``run.status`` ``done`` gives ``run.result``
as the output, ``error``, ``cancelled`` and ``rejected-by-user`` an ``output-error``; images are
``file`` parts. An assistant message's ``usage`` (its ``model``, cache reads and writes kept
apart) is ``metadata.usage`` and its model ``metadata.model``. Message ids derive from Amp's
``messageId``, so a rewritten thread writes only what changed.
"""

from __future__ import annotations

import os
import re
import sys
import uuid
from pathlib import Path
from typing import Any

from ..registry import Registry
from .document import ms_time, read_document
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

NAME = "amp"
# a thread document opens with its revision ``v`` and its ``id`` (never a line of another log)
THREAD = re.compile(rb'^\s*\{\s*(?:"v"\s*:\s*\d+\s*,\s*)?"id"\s*:\s*"(T-[0-9a-fA-F-]{36})"')
FAILED = ("error", "cancelled", "rejected-by-user")


def sniff(head: Head) -> bool:
    return THREAD.match(head.data) is not None and b'"messages"' in head.data


def session_id(head: Head) -> str:
    found = THREAD.match(head.data)
    return found.group(1).decode() if found else head.path.stem


def amp_usage(raw: Any) -> Json | None:
    if not isinstance(raw, dict):
        return None

    def count(key: str) -> int:
        value = raw.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 10**12 else 0

    return usage_of(count("inputTokens"), count("outputTokens"), count("cacheReadInputTokens"),
                    count("cacheCreationInputTokens"))  # fmt: skip


def image_part(block: Json) -> Json | None:
    source = block.get("source")
    if not isinstance(source, dict) or not isinstance(source.get("data"), str):
        return None
    named = [source[k] for k in ("mediaType", "media_type") if isinstance(source.get(k), str)]
    media = named[0] if named else "image/png"
    return {"type": "file", "mediaType": media, "url": f"data:{media};base64,{source['data']}"}


def run_outcome(part: Json, run: Any) -> None:
    if not isinstance(run, dict):
        return
    status = run.get("status")
    if status == "done":
        result = run.get("result")
        set_output(part, result if result is not None else "")
    elif status in FAILED:
        error = run.get("error")
        message = error.get("message") if isinstance(error, dict) else error
        set_output(part, message if isinstance(message, str) and message else str(status), error=True)


def meta_of(m: Json) -> Json:
    meta: Json = {"source": NAME, "lineType": m.get("role")}
    usage = m.get("usage")
    sent = m.get("meta", {}).get("sentAt") if isinstance(m.get("meta"), dict) else None
    stamp = usage.get("timestamp") if isinstance(usage, dict) else ms_time(sent)
    if isinstance(stamp, str):
        meta["timestamp"] = stamp
    if isinstance(usage, dict):
        if isinstance(usage.get("model"), str):
            meta["model"] = usage["model"]
        meta["usage"] = amp_usage(usage)
    return meta


def block_part(block: Any, registry: Registry, calls: dict[str, Json]) -> Json | None:
    if not isinstance(block, dict):
        return None
    kind = block.get("type")
    if kind == "text" and isinstance(block.get("text"), str) and block["text"].strip():
        return {"type": "text", "text": block["text"], "state": "done"}
    if kind == "thinking" and isinstance(block.get("thinking"), str) and block["thinking"].strip():
        return {"type": "reasoning", "text": block["thinking"], "state": "done"}
    if kind == "image":
        return image_part(block)
    if kind == "tool_use" and isinstance(block.get("id"), str) and block["id"] not in calls:
        part = tool_part(registry, str(block.get("name") or "unknown"), block["id"], block.get("input") or {})
        calls[block["id"]] = part
        return part
    if kind == "tool_result" and isinstance(block.get("toolUseID"), str) and block["toolUseID"] in calls:
        run_outcome(calls[block["toolUseID"]], block.get("run"))
    return None


def parse(group: Group, registry: Registry, namespace: uuid.UUID) -> Session:
    thread = read_document(group.main)
    thread = thread if isinstance(thread, dict) else {}
    conv = Conversation(namespace, idle=is_idle(group.main))
    conv.saw(ms_time(thread.get("created")))
    calls: dict[str, Json] = {}
    first: str | None = None
    messages = thread.get("messages")
    for index, m in enumerate(messages if isinstance(messages, list) else []):
        if not isinstance(m, dict) or m.get("role") not in ("user", "assistant"):
            continue
        meta = meta_of(m)
        conv.saw(meta.get("timestamp"))
        message, _ = conv.message(f"m:{m.get('messageId', f'i{index}')}", str(m["role"]), meta)
        content = m.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for block in blocks if isinstance(blocks, list) else []:
            part = block_part(block, registry, calls)
            if part is not None:
                message["parts"].append(part)
        if first is None and m["role"] == "user":
            first = next((p["text"] for p in message["parts"] if p["type"] == "text"), None)
    title = thread.get("title") if isinstance(thread.get("title"), str) and thread["title"].strip() else first
    conv.title = short_title(title) if title else None
    settle_conversation(conv, registry)
    return Session(str(group.main), NAME, group.session_id, conv, files=[str(group.main)])


def locations() -> list[Path]:
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    else:
        base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return [base / "amp" / "threads"]


FORMAT = Format(NAME, "Amp", (".json",), sniff, one_session(NAME, session_id), parse, locations)
