"""GitHub Copilot CLI sessions (``~/.copilot/session-state/<id>/events.jsonl``) as Foldline messages.

Every line is an event ``{type, data, id, timestamp, parentId}``. ``user.message`` is a prompt
(its ``content``: what the person typed; ``transformedContent`` is what the model saw, with
injected context). Each ``assistant.message`` is one assistant message: ``reasoningText`` as
``reasoning`` (``reasoningOpaque`` is encrypted and never shown), ``content`` as text, and a tool
part per ``toolRequests[]``. ``tool.execution_complete`` gives the call with the same
``toolCallId`` its outcome: ``result.content`` (what the model saw), or ``error.message`` as an
``output-error``. Events of a subagent (``data.parentToolCallId``, or an envelope ``agentId``: the
first event of an agent belongs to the oldest ``subagent.started`` call not yet heard from) are
the subagent conversation under that call.
Usage: each ``session.shutdown`` holds the run's totals per model (``modelMetrics``), put on the
last assistant message of that model before it; a run that did not shut down cleanly has only
each message's ``outputTokens``. Hooks, permissions and the system prompt are not shown.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..registry import Registry
from .formats import Format, Group, Head, one_session
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

NAME = "copilot-cli"
NOTICES = {"system.notification", "session.error", "session.info", "session.warning", "abort"}
COMPACTION = "session.compaction_complete"


def count(raw: Json, key: str) -> int:
    value = raw.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 10**12 else 0


def metrics_usage(raw: Any) -> Json | None:
    """A model's ``usage`` in ``session.shutdown`` (``inputTokens`` counts the cached) in the AI SDK's shape."""
    if not isinstance(raw, dict):
        return None
    read, write = count(raw, "cacheReadTokens"), count(raw, "cacheWriteTokens")
    fresh = max(count(raw, "inputTokens") - read - write, 0)
    return usage_of(fresh, count(raw, "outputTokens"), read, write, count(raw, "reasoningTokens"))


@dataclass
class Events:
    registry: Registry
    main: Conversation
    subagents: dict[str, Conversation] = field(default_factory=dict)
    calls: dict[str, Json] = field(default_factory=dict)
    agents: dict[str, str] = field(default_factory=dict)  # a subagent's agentId -> the call that started it
    pending: list[str] = field(default_factory=list)  # calls that started a subagent not heard from yet
    context: Json = field(default_factory=dict)  # version, cwd, branch: on the first message
    model: str | None = None
    run: list[Json] = field(default_factory=list)  # assistant messages since the last shutdown
    first_prompt: str | None = None
    number: int = 0

    def conv(self, d: Json) -> Conversation:
        data = d["data"]
        call = data.get("parentToolCallId")
        agent = d.get("agentId")
        if not isinstance(call, str) and isinstance(agent, str) and d.get("type") != "subagent.started":
            if agent not in self.agents:  # a subagent first heard of: the oldest started one not yet heard
                self.agents[agent] = self.pending.pop(0) if self.pending else f"agent-{agent}"
            call = self.agents[agent]
        if not isinstance(call, str) or not call:
            return self.main
        if call not in self.subagents:
            self.subagents[call] = Conversation(uuid.uuid5(self.main.namespace, "call:" + call), idle=self.main.idle)
        return self.subagents[call]

    def meta(self, d: Json) -> Json:
        meta: Json = {"source": NAME, "lineType": d.get("type")}
        if isinstance(d.get("timestamp"), str):
            meta["timestamp"] = d["timestamp"]
        if self.context:
            meta.update(self.context)
            self.context = {}
        return meta

    def event(self, d: Json) -> None:
        kind, data = d.get("type"), d.get("data")
        if not isinstance(kind, str) or not isinstance(data, dict):
            return
        conv = self.conv(d)
        conv.saw(d.get("timestamp"))
        if conv is not self.main:
            self.main.saw(d.get("timestamp"))
        if kind == "session.start":
            self.start(data)
        elif kind == "session.model_change" and isinstance(data.get("newModel"), str):
            self.model = data["newModel"]
        elif kind == "subagent.started" and isinstance(data.get("toolCallId"), str):
            if isinstance(data.get("agentId"), str):
                self.agents[data["agentId"]] = data["toolCallId"]
            else:
                self.pending.append(data["toolCallId"])
        elif kind == "user.message":
            self.prompt(conv, d, data)
        elif kind == "assistant.message":
            self.assistant(conv, d, data)
        elif kind == "tool.execution_start":
            self.started(conv, d, data)
        elif kind == "tool.execution_complete":
            self.completed(data)
        elif kind == "session.shutdown":
            self.shutdown(data)
        elif kind in NOTICES or kind == COMPACTION:
            self.notice(conv, d, data)

    def start(self, data: Json) -> None:
        if isinstance(data.get("copilotVersion"), str):
            self.context["version"] = data["copilotVersion"]
        found = data.get("context")
        where: Json = found if isinstance(found, dict) else {}
        for key, name in (("cwd", "cwd"), ("branch", "gitBranch")):
            if isinstance(where.get(key), str) and where[key]:
                self.context[name] = where[key]
        if isinstance(data.get("selectedModel"), str):
            self.model = data["selectedModel"]

    def prompt(self, conv: Conversation, d: Json, data: Json) -> None:
        text = data.get("content")
        message, _ = conv.message(f"u:{d.get('id') or self.number}", "user", self.meta(d))
        if isinstance(text, str) and text:
            message["parts"].append({"type": "text", "text": text, "state": "done"})
            if self.first_prompt is None and conv is self.main:
                self.first_prompt = text
        attachments = data.get("attachments")
        named = []
        for item in attachments if isinstance(attachments, list) else []:
            part = attachment_part(item)
            if part is not None:
                message["parts"].append(part)
            elif isinstance(item, dict) and isinstance(item.get("displayName") or item.get("path"), str):
                named.append(item.get("displayName") or item["path"])  # a file by its path: its name only
        if named:
            message["metadata"]["attachments"] = named

    def assistant(self, conv: Conversation, d: Json, data: Json) -> None:
        meta = self.meta(d)
        model = data.get("model") if isinstance(data.get("model"), str) else self.model
        if model:
            meta["model"] = model
        if count(data, "outputTokens"):
            meta["usage"] = usage_of(0, count(data, "outputTokens"))
        message, new = conv.message(f"a:{data.get('messageId') or d.get('id') or self.number}", "assistant", meta)
        if new:  # a message id written again adds only the calls it did not have
            if isinstance(data.get("reasoningText"), str) and data["reasoningText"].strip():
                message["parts"].append({"type": "reasoning", "text": data["reasoningText"], "state": "done"})
            if isinstance(data.get("content"), str) and data["content"]:
                message["parts"].append({"type": "text", "text": data["content"], "state": "done"})
        requests = data.get("toolRequests")
        for request in requests if isinstance(requests, list) else []:
            if isinstance(request, dict) and isinstance(request.get("toolCallId"), str):
                self.call(message, request["toolCallId"], request.get("name"), request.get("arguments"))
        if new:
            self.run.append(message)

    def call(self, message: Json, call_id: str, name: Any, arguments: Any) -> None:
        if call_id in self.calls:
            return
        part = tool_part(self.registry, str(name or "unknown"), call_id, arguments if arguments is not None else {})
        self.calls[call_id] = part
        message["parts"].append(part)

    def started(self, conv: Conversation, d: Json, data: Json) -> None:
        """A call the model did not request in a message of this log (one started by the CLI)."""
        call_id = data.get("toolCallId")
        if not isinstance(call_id, str) or call_id in self.calls:
            return
        message = next((m for m in reversed(conv.messages) if m["role"] == "assistant"), None)
        if message is None:
            message, _ = conv.message(f"t:{call_id}", "assistant", self.meta(d))
        self.call(message, call_id, data.get("toolName"), data.get("arguments"))

    def completed(self, data: Json) -> None:
        part = self.calls.get(str(data.get("toolCallId")))
        if part is None:
            return
        result, error = data.get("result"), data.get("error")
        if data.get("success") is False or (result is None and error is not None):
            text = error.get("message") if isinstance(error, dict) else error
            set_output(part, text if isinstance(text, str) else str(error or "failed"), error=True)
        elif isinstance(result, dict):
            set_output(part, result.get("content") if result.get("content") is not None else "")
        else:
            set_output(part, result if result is not None else "")

    def shutdown(self, data: Json) -> None:
        """The run's totals replace the per-message output counts of its messages."""
        metrics = data.get("modelMetrics")
        if not isinstance(metrics, dict) or not self.run:
            return
        for message in self.run:
            message["metadata"].pop("usage", None)
        for model, found in metrics.items():
            usage = metrics_usage(found.get("usage") if isinstance(found, dict) else None)
            if usage is None:
                continue
            said = [m for m in self.run if m["parts"]] or self.run
            target = next((m for m in reversed(said) if m["metadata"].get("model") == model), said[-1])
            target["metadata"]["usage"] = add_usage(target["metadata"].get("usage"), usage)
            if not target["parts"]:  # an answer the log left empty: kept, so its tokens are counted
                target["parts"].append({"type": "step-start"})
        self.run = []

    def notice(self, conv: Conversation, d: Json, data: Json) -> None:
        said = [data[k] for k in ("content", "message", "summary", "reason") if isinstance(data.get(k), str)]
        text = said[0] if said else None
        meta = {**self.meta(d), "level": "notice"}
        if d.get("type") == COMPACTION:
            meta["compaction"] = True
            text = text or "The conversation was compacted."
        if not text:
            return
        message, _ = conv.message(f"n:{d.get('id') or self.number}", "system", meta)
        message["parts"].append({"type": "text", "text": text, "state": "done"})


def attachment_part(item: Any) -> Json | None:
    """An attachment given inline (a ``blob``: base64 ``data`` and its ``mimeType``)."""
    if not isinstance(item, dict) or not isinstance(item.get("data"), str):
        return None
    named = [item[k] for k in ("mimeType", "mediaType") if isinstance(item.get(k), str)]
    media = named[0] if named else "application/octet-stream"
    return {"type": "file", "mediaType": media, "url": f"data:{media};base64,{item['data']}"}


def parse(group: Group, registry: Registry, namespace: uuid.UUID) -> Session:
    events = Events(registry, Conversation(namespace, idle=is_idle(group.main)))
    for number, d in enumerate(read_lines(group.main)):
        events.number = number
        events.event(d)
    events.main.title = short_title(events.first_prompt) if events.first_prompt else None
    settle_conversation(events.main, registry)
    for conv in events.subagents.values():
        settle_conversation(conv, registry)
    session = Session(str(group.main), NAME, group.session_id, events.main, files=[str(group.main)])
    session.subagents = events.subagents
    return session


def is_event(d: Json) -> bool:
    kind = d.get("type")
    return isinstance(kind, str) and "." in kind and isinstance(d.get("data"), dict) and "parentId" in d


def sniff(head: Head) -> bool:
    return bool(head.lines) and is_event(head.lines[0]) and any(
        d.get("type") in ("session.start", "user.message", "assistant.message") for d in head.lines
    )


def session_id(head: Head) -> str:
    for d in head.lines:
        found = d.get("data", {}).get("sessionId") if d.get("type") == "session.start" else None
        if isinstance(found, str) and found:
            return found
    return head.path.parent.name if head.path.name == "events.jsonl" else head.path.stem


def locations() -> list[Path]:
    return [Path(os.environ.get("COPILOT_HOME") or Path.home() / ".copilot") / "session-state"]


FORMAT = Format(NAME, "GitHub Copilot CLI", (".jsonl",), sniff, one_session(NAME, session_id), parse, locations)
