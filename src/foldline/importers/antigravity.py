"""Google Antigravity trajectories exported as steps (one JSON step a line) as Foldline messages.

Each line is ``{step_index, source, type, status, created_at, content, tool_calls, thinking}``;
``source`` is ``USER_EXPLICIT``, ``MODEL`` or ``SYSTEM``. A ``USER_INPUT`` step is a prompt (the
text inside ``<USER_REQUEST>``; the ``<ADDITIONAL_METADATA>`` Antigravity adds is not shown). A
``PLANNER_RESPONSE`` is one assistant message: ``thinking`` as reasoning, ``content`` as text,
and a tool part per ``tool_calls[]`` (``args`` values are JSON-encoded strings, decoded; one
the export cut at 2 KB, ``"...\n<truncated N bytes>"``, keeps what was written and
``toolMetadata.antigravity.truncated`` names it with the bytes lost). There
are no call ids: each step the model's call ran (``CODE_ACTION``, ``SEARCH_WEB``,
``LIST_DIRECTORY``, ``GENERIC``, ...) is the outcome of the oldest call not answered yet, in
order; its "Created At / Completed At" heading is dropped. A step with no call waiting is a tool
part of its own, named by its type, holding its result. Only this export was seen (the native
store, ``~/.gemini/antigravity/conversations/<uuid>.db``, holds protobuf steps and is not read);
no model or usage is written. Message ids are the step's index, so a grown export writes only
its new steps; the session id is the file's name and a hash of its first line.
"""

from __future__ import annotations

import hashlib
import re
import uuid
from collections import deque
from pathlib import Path
from typing import Any

import orjson

from ..registry import Registry
from .formats import Format, Group, Head, one_session
from .jsonl import first_raw_line, read_lines
from .session import Conversation, Json, Session, is_idle, set_output, settle_conversation, short_title, tool_part

NAME = "antigravity"
SOURCES = {"USER_EXPLICIT", "MODEL", "SYSTEM"}
REQUEST = re.compile(r"<USER_REQUEST>\s*(.*?)\s*</USER_REQUEST>", re.S)
HEADING = re.compile(r"\A(?:Created At: [^\n]*\n)?(?:Completed At: [^\n]*\n)?")
FAILED = {"ERROR", "FAILED", "CANCELED", "CANCELLED"}
TRUNCATED = re.compile(r"\A(.*)\n<truncated (\d+) bytes>\Z", re.S)  # a value the export cut


def is_step(d: Json) -> bool:
    index = d.get("step_index")
    return (
        isinstance(index, int) and not isinstance(index, bool)
        and d.get("source") in SOURCES and isinstance(d.get("type"), str) and isinstance(d.get("status"), str)
    )  # fmt: skip


def sniff(head: Head) -> bool:
    return bool(head.lines) and all(is_step(d) for d in head.lines)


def session_id(head: Head) -> str:
    """The file's name (every export is ``transcript.jsonl``) and a hash of its first line."""
    mark = hashlib.blake2b(first_raw_line(head.path).strip(), digest_size=6).hexdigest()
    return f"{head.path.stem}-{mark}"


def decoded(args: Any) -> tuple[Json, Json]:
    """A call's ``args``, each value a JSON-encoded string decoded (kept as it is if it is not one),
    and the bytes the export cut off each value it cut (``"...\n<truncated N bytes>"``): such a
    value keeps the part that was written, decoded."""
    if not isinstance(args, dict):
        return {}, {}
    found: Json = {}
    cut: Json = {}
    for key, value in args.items():
        found[key], lost = decoded_value(value)
        if lost is not None:
            cut[key] = lost
    return found, cut


def decoded_value(value: Any) -> tuple[Any, int | None]:
    if not isinstance(value, str):
        return value, None
    try:
        return orjson.loads(value), None
    except orjson.JSONDecodeError:
        pass
    found = TRUNCATED.match(value)
    if found is None:
        return value, None
    body, lost = found.group(1), int(found.group(2))
    if body.startswith('"'):  # a string cut short: what was written of it, closed
        for trim in range(8):  # an escape cut in the middle (``\``, ``\u00``) is left out
            try:
                return orjson.loads(body[: len(body) - trim] + '"'), lost
            except orjson.JSONDecodeError:
                continue
    return body, lost


def prompt_text(content: str) -> str:
    found = REQUEST.search(content)
    return found.group(1) if found else content


def result_text(content: Any) -> str:
    return HEADING.sub("", content) if isinstance(content, str) else ""


class Reader:
    """The steps of one export, in order, as a conversation."""

    def __init__(self, conv: Conversation, registry: Registry):
        self.conv = conv
        self.registry = registry
        self.waiting: deque[Json] = deque()  # the calls of the last response not answered yet

    def meta(self, d: Json) -> Json:
        meta: Json = {"source": NAME, "lineType": d["type"], "step": d["step_index"]}
        when = self.conv.last_at
        if when:
            meta["timestamp"] = when
        return meta

    def step(self, d: Json) -> None:
        self.conv.saw(d.get("created_at"))
        content = d.get("content")
        if d["type"] == "USER_INPUT":
            self.prompt(d, content)
        elif d["type"] == "PLANNER_RESPONSE":
            self.response(d, content)
        elif d["source"] == "MODEL":
            self.result(d, content)
        elif isinstance(content, str) and content.strip():  # a system step that says something
            message, _ = self.conv.message(f"s:{d['step_index']}", "system", self.meta(d))
            message["parts"].append({"type": "text", "text": content, "state": "done"})

    def prompt(self, d: Json, content: Any) -> None:
        self.waiting.clear()
        if not isinstance(content, str) or not content.strip():
            return
        text = prompt_text(content)
        message, _ = self.conv.message(f"s:{d['step_index']}", "user", self.meta(d))
        message["parts"].append({"type": "text", "text": text, "state": "done"})
        self.conv.title = self.conv.title or short_title(text)

    def response(self, d: Json, content: Any) -> None:
        message, _ = self.conv.message(f"s:{d['step_index']}", "assistant", self.meta(d))
        thinking = d.get("thinking")
        if isinstance(thinking, str) and thinking.strip():
            message["parts"].append({"type": "reasoning", "text": thinking, "state": "done"})
        if isinstance(content, str) and content.strip():
            message["parts"].append({"type": "text", "text": content, "state": "done"})
        calls = d.get("tool_calls")
        self.waiting.clear()
        for n, call in enumerate(calls if isinstance(calls, list) else []):
            if not isinstance(call, dict):
                continue
            name = str(call.get("name") or "unknown")
            args, cut = decoded(call.get("args"))
            part = tool_part(self.registry, name, f"step-{d['step_index']}-{n}", args)
            if cut:  # the export cut these arguments: said in the part, with the bytes lost
                part["toolMetadata"] = {"antigravity": {"truncated": cut}}
            message["parts"].append(part)
            self.waiting.append(part)

    def result(self, d: Json, content: Any) -> None:
        if self.waiting:
            part = self.waiting.popleft()
        else:  # a step no call asked for: a call of its own, holding its result
            message, _ = self.conv.message(f"s:{d['step_index']}", "assistant", self.meta(d))
            part = tool_part(self.registry, str(d["type"]).lower(), f"step-{d['step_index']}", {})
            message["parts"].append(part)
        status = str(d.get("status")).upper()
        if status in FAILED:
            set_output(part, result_text(content) or status.lower(), error=True)
        elif status == "DONE":
            set_output(part, result_text(content))


def parse(group: Group, registry: Registry, namespace: uuid.UUID) -> Session:
    conv = Conversation(namespace, idle=is_idle(group.main))
    reader = Reader(conv, registry)
    for d in read_lines(group.main):
        if is_step(d):
            reader.step(d)
    settle_conversation(conv, registry)
    return Session(str(group.main), NAME, group.session_id, conv, files=[str(group.main)])


def locations() -> list[Path]:
    """None: the export is written wherever its maker put it (the native store is not read)."""
    return []


FORMAT = Format(NAME, "Google Antigravity", (".jsonl",), sniff, one_session(NAME, session_id), parse, locations)
