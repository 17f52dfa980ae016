"""Factory Droid sessions (``~/.factory/sessions/<cwd-slug>/<uuid>.jsonl``, with
``<uuid>.settings.json`` beside it) as Foldline messages.

The first line is ``session_start {id, title, sessionTitle, cwd}``; ``message`` lines hold
Anthropic-style blocks: ``text``, ``thinking`` (``reasoning``), ``image`` (file parts),
``tool_use {id, name, input}`` (tool parts) and, on user messages, ``tool_result {tool_use_id,
content, is_error}`` (the call's outcome; a user message of results only is not a prompt).
The model and the token counts are only in the settings file, per session: ``model`` is the
assistant messages' ``metadata.model`` and ``tokenUsage`` the usage of the last one.
``todo_state`` lines are not shown.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import Any

import orjson

from ..registry import Registry
from .formats import Finding, Format, Group, Head
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

NAME = "droid"
SETTINGS = ".settings.json"
PLACEHOLDER_TITLES = {"New Session"}


def is_start(d: Json) -> bool:
    return d.get("type") == "session_start" and isinstance(d.get("id"), str) and "cwd" in d


def is_settings(head: Head) -> bool:
    if not head.path.name.endswith(SETTINGS):
        return False
    try:
        found = orjson.loads(head.data)
    except orjson.JSONDecodeError:
        return False
    return isinstance(found, dict) and "tokenUsage" in found and "autonomyMode" in found


def sniff(head: Head) -> bool:
    return (bool(head.lines) and is_start(head.lines[0])) or is_settings(head)


def settings_of(log: Path) -> list[Path]:
    beside = log.with_name(log.name.removesuffix(".jsonl") + SETTINGS)
    return [beside] if beside.is_file() else []


def groups(head: Head, finding: Finding) -> None:
    """The session's log names it; its settings file belongs to it (and alone makes nothing)."""
    if is_settings(head):
        log = head.path.with_name(head.path.name.removesuffix(SETTINGS) + ".jsonl")
        if log.is_file():
            start = next(iter(read_lines(log)), {})
            if is_start(start):
                finding.add(Group(NAME, log, start["id"], [head.path]))
        return
    finding.add(Group(NAME, head.path, str(head.lines[0]["id"]), settings_of(head.path)))


def read_settings(paths: list[Path]) -> Json:
    for path in paths:
        try:
            found = orjson.loads(path.read_bytes())
        except (OSError, orjson.JSONDecodeError):
            continue
        if isinstance(found, dict):
            return found
    return {}


def count(raw: Json, key: str) -> int:
    value = raw.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def result_text(content: Any) -> Any:
    if isinstance(content, list):
        texts = [b.get("text") for b in content if isinstance(b, dict)]
        if texts and all(isinstance(t, str) for t in texts):
            return "\n".join(str(t) for t in texts)
    return content if content is not None else ""


def block_part(registry: Registry, calls: dict[str, Json], b: Json, key: str) -> Json | None:
    kind = b.get("type")
    if kind == "text" and isinstance(b.get("text"), str) and b["text"]:
        return {"type": "text", "text": b["text"], "state": "done"}
    if kind == "thinking" and isinstance(b.get("thinking"), str) and b["thinking"].strip():
        return {"type": "reasoning", "text": b["thinking"], "state": "done"}
    source = b.get("source")
    if kind == "image" and isinstance(source, dict) and isinstance(source.get("data"), str):
        media = source["media_type"] if isinstance(source.get("media_type"), str) else "image/png"
        return {"type": "file", "mediaType": media, "url": f"data:{media};base64,{source['data']}"}
    if kind == "tool_use":
        call_id = str(b.get("id") or key)
        part = tool_part(registry, str(b.get("name") or "unknown"), call_id, b.get("input") or {})
        calls[call_id] = part
        return part
    return None


def parse(group: Group, registry: Registry, namespace: uuid.UUID) -> Session:
    conv = Conversation(namespace, idle=all(is_idle(p) for p in group.files))
    settings = read_settings(group.agents)
    model = settings.get("model") if isinstance(settings.get("model"), str) else None
    calls: dict[str, Json] = {}
    for number, d in enumerate(read_lines(group.main)):
        if is_start(d):
            title = d.get("title") or d.get("sessionTitle")
            if isinstance(title, str) and title not in PLACEHOLDER_TITLES:
                conv.title = short_title(title)
            continue
        m = d.get("message")
        if d.get("type") != "message" or not isinstance(m, dict) or m.get("role") not in ("user", "assistant"):
            continue
        conv.saw(d.get("timestamp"))
        content = m.get("content")
        items = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
        if isinstance(content, str):
            items = [{"type": "text", "text": content}]
        for b in items:
            answered = calls.get(str(b.get("tool_use_id"))) if b.get("type") == "tool_result" else None
            if answered is not None:
                set_output(answered, result_text(b.get("content")), error=b.get("is_error") is True)
        parts = [p for i, b in enumerate(items) if (p := block_part(registry, calls, b, f"{number}:{i}"))]
        if not parts:
            continue
        meta: Json = {"source": NAME, "lineType": "message"}
        if conv.last_at:
            meta["timestamp"] = conv.last_at
        if m["role"] == "assistant" and model:
            meta["model"] = model
        message, _ = conv.message(str(d.get("id") or f"line-{number}"), str(m["role"]), meta)
        message["parts"] = parts
    tokens = settings.get("tokenUsage")
    last = next((m for m in reversed(conv.messages) if m["role"] == "assistant"), None)
    if isinstance(tokens, dict) and last is not None:
        last["metadata"]["usage"] = usage_of(count(tokens, "inputTokens"), count(tokens, "outputTokens"),
                                             count(tokens, "cacheReadTokens"), count(tokens, "cacheCreationTokens"),
                                             count(tokens, "thinkingTokens"))  # fmt: skip
        last["metadata"]["usageOf"] = "session"
    if conv.title is None:
        first = next((m for m in conv.messages if m["role"] == "user"), None)
        conv.title = short_title(first["parts"][0].get("text", "")) if first else None
    settle_conversation(conv, registry)
    return Session(str(group.main), NAME, group.session_id, conv, files=[str(p) for p in group.files])


def locations() -> list[Path]:
    root = os.environ.get("FACTORY_HOME")
    return [Path(root) / "sessions" if root else Path.home() / ".factory" / "sessions"]


FORMAT = Format(NAME, "Factory Droid", (".jsonl", SETTINGS), sniff, groups, parse, locations)
