"""Cursor agent transcripts (``~/.cursor/projects/<slug>/agent-transcripts/<id>.jsonl``) as Foldline messages.

One line per message, ``{role, message: {content: [...]}}`` with ``text`` and ``tool_use``
blocks, and nothing else: no ids, times, model, usage or tool results. A prompt is the text in
its ``<user_query>`` wrapper; text is kept as written (``[REDACTED]`` included: the placeholder
is what the log holds). A call gets an id from its line and place, and has no result, so it is
closed with the unknown outcome once its turn is over. The session id is the file's name and
its time is the file's modification time.
"""

from __future__ import annotations

import os
import re
import uuid
from pathlib import Path
from typing import Any

from ..registry import Registry
from .document import file_time
from .formats import Format, Group, Head, one_session
from .jsonl import read_lines
from .session import Conversation, Json, Session, is_idle, set_output, settle_conversation, short_title, tool_part

NAME = "cursor"
QUERY = re.compile(r"<user_query>\s*(.*?)\s*</user_query>", re.S)


def is_line(d: Json) -> bool:
    body = d.get("message")
    return (
        d.get("role") in ("user", "assistant")
        and isinstance(body, dict)
        and isinstance(body.get("content"), list | str)
        and not {"type", "sessionId", "uuid", "timestamp"} & d.keys()
    )


def sniff(head: Head) -> bool:
    return bool(head.lines) and all(is_line(d) for d in head.lines[:3])


def text_of(block: Any) -> str | None:
    if isinstance(block, str):
        return block or None
    if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
        return block["text"] or None
    return None


def prompt_text(text: str) -> str:
    found = QUERY.search(text)
    return found.group(1) if found else text


def parse(group: Group, registry: Registry, namespace: uuid.UUID) -> Session:
    conv = Conversation(namespace, idle=is_idle(group.main))
    conv.saw(file_time(group.main))
    calls: dict[str, Json] = {}
    first: str | None = None
    for number, d in enumerate(read_lines(group.main)):
        if not is_line(d):
            continue
        content = d["message"]["content"]
        blocks = [content] if isinstance(content, str) else content
        message, _ = conv.message(f"l:{number}", str(d["role"]), {"source": NAME, "lineType": d["role"]})
        for index, block in enumerate(blocks):
            text = text_of(block)
            if text is not None:
                text = prompt_text(text) if d["role"] == "user" else text
                message["parts"].append({"type": "text", "text": text, "state": "done"})
                first = first or (text if d["role"] == "user" else None)
            elif isinstance(block, dict) and block.get("type") == "tool_use":
                call_id = str(block.get("id") or f"line-{number}-{index}")
                part = tool_part(registry, str(block.get("name") or "unknown"), call_id, block.get("input") or {})
                calls[call_id] = part
                message["parts"].append(part)
            elif isinstance(block, dict) and block.get("type") == "tool_result":
                result(calls, block)
    conv.title = short_title(first) if first else None
    settle_conversation(conv, registry)
    return Session(str(group.main), NAME, group.session_id, conv, files=[str(group.main)])


def result(calls: dict[str, Json], block: Json) -> None:
    """A result, where a transcript gives one with the id of its call."""
    part = calls.get(str(block.get("tool_use_id")))
    if part is None:
        return
    content = block.get("content")
    texts = [text_of(b) for b in content] if isinstance(content, list) else [text_of(content)]
    set_output(part, "\n".join(t for t in texts if t), error=bool(block.get("is_error")))


def locations() -> list[Path]:
    return [Path(os.environ.get("CURSOR_CONFIG_DIR") or Path.home() / ".cursor") / "projects"]


FORMAT = Format(NAME, "Cursor", (".jsonl",), sniff, one_session(NAME, lambda head: head.path.stem), parse, locations)
