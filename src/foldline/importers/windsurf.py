"""Windsurf Cascade transcripts (``~/.windsurf/transcripts/<trajectory_id>.jsonl``) as Foldline
messages.

One step a line, ``{type, status, <type>: {…}}``: ``user_input.user_response`` is a prompt,
``planner_response.response`` the model's text, and every other step is a tool call that holds its
own result: a tool part named by the step's type, its fields as input, and as output its
``output`` or ``content`` (the other fields when it has neither); ``status: error`` (or a
``user_rejected`` command) is an ``output-error``, a ``run_command``'s ``exit_code`` is kept in
``toolMetadata.windsurf``. The file has no ids, times, models or tokens: ids are the line's
place, and the session is dated by the file's modification time.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from pathlib import Path

from ..registry import Registry
from .formats import Format, Group, Head, one_session
from .jsonl import read_lines
from .session import Conversation, Json, Session, is_idle, set_output, settle_conversation, short_title, tool_part

NAME = "windsurf"
RESULTS = ("output", "content")


def is_step(d: Json) -> bool:
    kind = d.get("type")
    return isinstance(kind, str) and isinstance(d.get(kind), dict) and isinstance(d.get("status"), str)


def sniff(head: Head) -> bool:
    steps = [d for d in head.lines if is_step(d)]
    return bool(steps) and len(steps) == len(head.lines) and any(d["type"] == "user_input" for d in steps)


def step_call(registry: Registry, number: int, d: Json) -> Json:
    body: Json = d[d["type"]]
    result = next((body[k] for k in RESULTS if isinstance(body.get(k), str)), None)
    inputs = {k: v for k, v in body.items() if k not in RESULTS}
    part = tool_part(registry, str(d["type"]), f"step-{number}", inputs)
    failed = d.get("status") == "error" or body.get("user_rejected") is True
    if failed:
        set_output(part, result or str(d.get("status")), error=True)
    elif d.get("status") == "done":
        set_output(part, result if result is not None else inputs)
    if isinstance(body.get("exit_code"), int):
        part["toolMetadata"] = {"windsurf": {"exit_code": body["exit_code"]}}
    return part


def parse(group: Group, registry: Registry, namespace: uuid.UUID) -> Session:
    conv = Conversation(namespace, idle=is_idle(group.main))
    conv.saw(datetime.fromtimestamp(group.main.stat().st_mtime, UTC).isoformat())
    current: Json | None = None
    for number, d in enumerate(read_lines(group.main)):
        if not is_step(d):
            continue
        body = d[d["type"]]
        if d["type"] == "user_input":
            said = body.get("user_response")
            message, _ = conv.message(f"s:{number}", "user", {"source": NAME, "lineType": "user_input"})
            if isinstance(said, str) and said:
                message["parts"].append({"type": "text", "text": said, "state": "done"})
                conv.title = conv.title or short_title(said)
            current = None
            continue
        if current is None:
            current, _ = conv.message(f"s:{number}", "assistant", {"source": NAME, "lineType": str(d["type"])})
        if d["type"] == "planner_response":
            text = body.get("response")
            if isinstance(text, str) and text:
                current["parts"].append({"type": "text", "text": text, "state": "done"})
        else:
            current["parts"].append(step_call(registry, number, d))
    settle_conversation(conv, registry)
    return Session(str(group.main), NAME, group.session_id, conv, files=[str(group.main)])


def locations() -> list[Path]:
    return [Path.home() / ".windsurf" / "transcripts"]


FORMAT = Format(NAME, "Windsurf", (".jsonl",), sniff, one_session(NAME, lambda head: head.path.stem), parse, locations)
