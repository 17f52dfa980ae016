"""OpenHands (V0) events as Foldline messages: a saved trajectory (one JSON list of events), an
evaluation's ``output.jsonl`` (one run a line, its events in ``history``), or a conversation's
event stream (``sessions/<sid>/events/<n>.json``, one event a file).

An event is ``{id, timestamp, source, message, action | observation, args | content + extras,
cause, tool_call_metadata}``. A user ``message`` action is a prompt (``args.image_urls`` as file
parts); an agent's action is part of the model response named in its ``tool_call_metadata``
(one assistant message per response id, with that response's ``model`` and ``usage``): its
``args.thought`` is text, and the action a tool part named by ``function_name`` with
``tool_call_id`` and the other ``args`` as input. An agent ``message`` action without a call is
text. An observation is the outcome of the action whose id is its ``cause`` (``error``: an
output-error; ``extras.metadata.exit_code`` kept in ``toolMetadata.openhands``). The ``system``
action (the system prompt) is a system message; ``recall`` pairs and ``environment`` events
(agent state changes) are status, not chat, and are not shown; an ``error`` observation with no
cause, and an evaluation's ``error``, are system notes. Times are naive local times, read as UTC.
"""

from __future__ import annotations

import hashlib
import re
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from ..registry import Registry
from .document import read_document, readable_part
from .formats import Finding, Format, Group, Head
from .jsonl import read_lines
from .session import (
    Conversation,
    Json,
    Session,
    add_usage,
    is_idle,
    set_output,
    settle_conversation,
    short_title,
    tool_part,
    usage_of,
)

NAME = "openhands"
SOURCES = {"user", "agent", "environment"}
SKIPPED_ACTIONS = {"recall", "change_agent_state", "null"}
SKIPPED_OBSERVATIONS = {"recall", "agent_state_changed", "null"}
EVENT_FILE = re.compile(r"^(\d+)\.json$")


def is_event(d: Any) -> bool:
    return (
        isinstance(d, dict) and isinstance(d.get("id"), int) and d.get("source") in SOURCES
        and ("action" in d or "observation" in d) and "timestamp" in d
    )  # fmt: skip


def is_run(d: Json) -> bool:
    return isinstance(d.get("instance_id"), str) and isinstance(d.get("history"), list)


def head_document(head: Head) -> Any:
    try:
        return orjson.loads(head.data)
    except orjson.JSONDecodeError:
        return readable_part(head.data)


def sniff(head: Head) -> bool:
    start = head.data.lstrip()[:1]
    if start == b"[":
        found = head_document(head)
        return isinstance(found, list) and bool(found) and is_event(found[0])
    if start == b"{":
        if head.lines and is_run(head.lines[0]):
            return True
        return EVENT_FILE.match(head.path.name) is not None and is_event(head_document(head))
    return False


def groups(head: Head, finding: Finding) -> None:
    path = head.path
    if head.data.lstrip()[:1] == b"[":
        first = head_document(head)[0]
        mark = hashlib.blake2b(f"{first.get('timestamp')}".encode(), digest_size=4).hexdigest()
        finding.add(Group(NAME, path, f"{path.stem}-{mark}"))
    elif head.lines and is_run(head.lines[0]):
        for run in read_lines(path):
            if is_run(run):
                finding.add(Group(NAME, path, run["instance_id"], shared=True))
    else:
        files = event_files(path.parent)
        if files and path == files[0]:
            name = path.parent.parent.name if path.parent.name == "events" else path.parent.name
            finding.add(Group(NAME, files[0], name, files[1:]))


def event_files(folder: Path) -> list[Path]:
    found = [(int(m.group(1)), p) for p in folder.iterdir() if (m := EVENT_FILE.match(p.name)) and p.is_file()]
    return [p for _, p in sorted(found)]


@dataclass
class Reader:
    registry: Registry
    conv: Conversation
    model: str | None = None
    by_event: dict[int, Json] = field(default_factory=dict)  # action id -> its tool part
    responses: dict[str, Json] = field(default_factory=dict)  # model response id -> its message
    current: Json | None = None  # the assistant message of the agent's last action

    def meta(self, e: Json, kind: str) -> Json:
        meta: Json = {"source": NAME, "lineType": kind}
        if self.conv.last_at:
            meta["timestamp"] = self.conv.last_at
        return meta

    def event(self, e: Json) -> None:
        if not is_event(e):
            return
        self.conv.saw(e.get("timestamp"))
        if "observation" in e:
            self.observation(e)
        else:
            self.action(e)

    def action(self, e: Json) -> None:
        kind, source = e.get("action"), e.get("source")
        args = e["args"] if isinstance(e.get("args"), dict) else {}
        if kind in SKIPPED_ACTIONS or source == "environment":
            return
        if kind == "system":
            self.text(e, "system", str(args.get("content") or e.get("message") or ""), {"injected": True})
        elif source == "user" and kind == "message":
            self.prompt(e, args)
        else:
            self.agent_action(e, str(kind), args)

    def text(self, e: Json, role: str, text: str, extra: Json) -> None:
        if not text.strip():
            return
        self.current = None
        message, _ = self.conv.message(f"e:{e['id']}", role, {**self.meta(e, str(e.get("action"))), **extra})
        message["parts"].append({"type": "text", "text": text, "state": "done"})

    def prompt(self, e: Json, args: Json) -> None:
        self.current = None
        text = args.get("content") if isinstance(args.get("content"), str) else e.get("message")
        message, _ = self.conv.message(f"e:{e['id']}", "user", self.meta(e, "message"))
        if isinstance(text, str) and text:
            message["parts"].append({"type": "text", "text": text, "state": "done"})
            self.conv.title = self.conv.title or short_title(text)
        for url in args.get("image_urls") or []:
            if isinstance(url, str) and url:
                media = url[5:].split(";", 1)[0] if url.startswith("data:") else "image/*"
                message["parts"].append({"type": "file", "mediaType": media or "image/*", "url": url})

    def assistant(self, e: Json, call: Json) -> Json:
        response = call.get("model_response")
        rid = response.get("id") if isinstance(response, dict) else None
        if isinstance(rid, str) and rid in self.responses:
            return self.responses[rid]
        message, _ = self.conv.message(f"r:{rid}" if isinstance(rid, str) else f"e:{e['id']}", "assistant",
                                       self.meta(e, str(e.get("action"))))  # fmt: skip
        if isinstance(response, dict):
            model = response.get("model")
            if isinstance(model, str) and model:
                message["metadata"]["model"] = model
            usage = response_usage(response.get("usage"))
            if usage:
                message["metadata"]["usage"] = add_usage(message["metadata"].get("usage"), usage)
        elif self.model:
            message["metadata"]["model"] = self.model
        if isinstance(rid, str):
            self.responses[rid] = message
        return message

    def agent_action(self, e: Json, kind: str, args: Json) -> None:
        call = e.get("tool_call_metadata") if isinstance(e.get("tool_call_metadata"), dict) else None
        message = self.assistant(e, call) if call else self.fresh(e)
        thought = args.get("thought")
        if isinstance(thought, str) and thought.strip():
            message["parts"].append({"type": "text", "text": thought, "state": "done"})
        if call is None:
            said = args.get("content") or (e.get("message") if kind in ("message", "finish") else None)
            if isinstance(said, str) and said.strip():
                message["parts"].append({"type": "text", "text": said, "state": "done"})
            return
        name = str(call.get("function_name") or kind)
        call_id = str(call.get("tool_call_id") or f"event-{e['id']}")
        inputs = {k: v for k, v in args.items() if k != "thought"}
        part = tool_part(self.registry, name, call_id, inputs)
        message["parts"].append(part)
        self.by_event[e["id"]] = part

    def fresh(self, e: Json) -> Json:
        message, _ = self.conv.message(f"e:{e['id']}", "assistant", self.meta(e, str(e.get("action"))))
        if self.model:
            message["metadata"]["model"] = self.model
        return message

    def observation(self, e: Json) -> None:
        kind = e.get("observation")
        if kind in SKIPPED_OBSERVATIONS:
            return
        part = self.by_event.get(e["cause"]) if isinstance(e.get("cause"), int) else None
        content = str(e["content"]) if isinstance(e.get("content"), str) else str(e.get("message") or "")
        if part is None:
            if kind == "error":
                self.text(e, "system", content, {"level": "error"})
            return
        set_output(part, content, error=kind == "error")
        extras: Json = e["extras"] if isinstance(e.get("extras"), dict) else {}
        meta: Json = extras["metadata"] if isinstance(extras.get("metadata"), dict) else {}
        if isinstance(meta.get("exit_code"), int):
            part.setdefault("toolMetadata", {})["openhands"] = {"exit_code": meta["exit_code"]}


def response_usage(raw: Any) -> Json | None:
    if not isinstance(raw, dict):
        return None

    def count(value: Any) -> int:
        return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0

    details: Json = raw["prompt_tokens_details"] if isinstance(raw.get("prompt_tokens_details"), dict) else {}
    read = count(raw.get("cache_read_input_tokens")) or count(details.get("cached_tokens"))
    write = count(raw.get("cache_creation_input_tokens"))
    prompt = count(raw.get("prompt_tokens"))
    # LiteLLM's prompt_tokens counts the cached tokens (and, for Anthropic, not the cache writes)
    return usage_of(max(prompt - read, 0), count(raw.get("completion_tokens")), read, write)


def events_of(group: Group) -> tuple[list[Any], Json | None]:
    """The group's events, and the evaluation run they came from (if they did)."""
    if group.shared:
        run = next((d for d in read_lines(group.main) if is_run(d) and d["instance_id"] == group.session_id), None)
        return (run["history"] if run else []), run
    if group.agents or EVENT_FILE.match(group.main.name):
        return [read_document(p) for p in group.files], None
    found = read_document(group.main)
    return (found if isinstance(found, list) else []), None


def parse(group: Group, registry: Registry, namespace: uuid.UUID) -> Session:
    conv = Conversation(namespace, idle=all(is_idle(p) for p in group.files))
    events, run = events_of(group)
    reader = Reader(registry, conv)
    if run is not None:
        config = run.get("metadata", {}).get("llm_config") if isinstance(run.get("metadata"), dict) else None
        model = config.get("model") if isinstance(config, dict) else None
        reader.model = model if isinstance(model, str) else None
    for e in events:
        reader.event(e)
    if run is not None and isinstance(run.get("error"), str) and run["error"]:
        note, _ = conv.message("run:error", "system", {"source": NAME, "lineType": "error", "level": "error"})
        note["parts"].append({"type": "text", "text": run["error"], "state": "done"})
    settle_conversation(conv, registry)
    return Session(str(group.main), NAME, group.session_id, conv, files=[str(p) for p in group.files])


def locations() -> list[Path]:
    return [Path.home() / ".openhands" / "sessions"]


FORMAT = Format(NAME, "OpenHands", (".json", ".jsonl"), sniff, groups, parse, locations)
