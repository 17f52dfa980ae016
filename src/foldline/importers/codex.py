"""Codex CLI rollouts (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``) as Foldline messages.

``response_item`` lines are the conversation. The ``event_msg`` duplicates are used only where
they add something: ``user_message`` tells real prompts from injected context (AGENTS.md,
environment), ``exec_command_end`` gives an exit code. Calls (``function_call``,
``custom_tool_call``, ``local_shell_call``) are paired with their outputs by ``call_id``; MCP
calls are ``dynamic-tool`` parts named ``mcp__server__tool``. Reasoning summaries become
``reasoning`` (encrypted content is never shown). A model response is one assistant message:
a new one starts when the model speaks again after a tool output. The exit code of a shell-like
call is kept in ``toolMetadata.codex.exit_code`` wherever the log gives it: ``exec_command_end``,
the 0.4x output's ``metadata``, or the output's own heading ("Exit code: N", "Process exited
with code N", "sandbox denied exec error, exit code: N"). Each ``token_count`` event's growth of
``total_token_usage`` is added to the assistant message it follows as ``metadata.usage`` (the AI
SDK's shape); ``session_meta``'s ``model_provider`` is kept as ``metadata.provider``.
"""

from __future__ import annotations

import os
import re
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from ..registry import Registry
from .formats import Format, Group, Head, one_session
from .jsonl import read_lines
from .session import (
    Conversation,
    Json,
    Session,
    add_usage,
    is_idle,
    lift_images,
    set_output,
    settle_conversation,
    short_title,
    tool_part,
    usage_of,
)

INJECTED = ("<environment_context>", "<user_instructions>", "# AGENTS.md", "<permissions", "<INSTRUCTIONS>")
IDE_REQUEST = "## My request for Codex:"
CALLS = ("function_call", "custom_tool_call", "local_shell_call", "web_search_call", "tool_search_call")
OUTPUTS = ("function_call_output", "custom_tool_call_output", "tool_search_output")
COMPACTED = "Context compacted"  # a compaction's marker when Codex wrote no readable summary (0.14x)
SHELLS = {"shell", "shell_command", "exec_command", "write_stdin", "local_shell", "container.exec"}
# How a shell-like output states its exit code, in the heading before "Output:".
EXIT_HEADINGS = (
    re.compile(r"^Exit code: (-?\d+)$", re.M),  # shell_command (0.60)
    re.compile(r"^Process exited with code (-?\d+)$", re.M),  # exec_command, write_stdin (0.12x)
    re.compile(r"sandbox denied exec error, exit code: (-?\d+)"),  # shell refused by the sandbox
)
HEADING_MAX = 600


@dataclass
class Rollout:
    registry: Registry
    conv: Conversation
    prompts: set[str]
    spoken: set[str]  # user texts present as response items (the rest exist only as events)
    calls: dict[str, Json] = field(default_factory=dict)
    call_messages: dict[str, Json] = field(default_factory=dict)  # call id -> the message holding it
    current: Json | None = None  # the assistant message being built
    answered: bool = False  # a tool output arrived since the current message began
    context: Json = field(default_factory=dict)  # model and cwd (turn_context), git branch (session_meta)
    first_prompt: str | None = None
    parent: str | None = None
    line_no: int = 0
    used: Json | None = None  # the last token_count's total_token_usage
    unplaced: Json | None = None  # usage reported before any assistant message

    def meta(self, d: Json, kind: str) -> Json:
        meta: Json = {"source": "codex", "lineType": kind, **self.context}
        if isinstance(d.get("timestamp"), str):
            meta["timestamp"] = d["timestamp"]
        return meta

    def line(self, d: Json) -> None:
        self.conv.saw(d.get("timestamp"))
        kind, payload = d.get("type"), d.get("payload")
        if kind is None or not isinstance(payload, dict):  # mid-2025: bare items
            kind, payload = "response_item", d
        if kind == "session_meta":
            self.session_meta(payload)
        elif kind == "turn_context":
            self.context.update({k: payload[k] for k in ("model", "cwd") if isinstance(payload.get(k), str)})
        elif kind == "response_item":
            self.item(d, payload)
        elif kind == "compacted":
            said = payload.get("message")
            if isinstance(said, str) and said.strip():  # older builds: the summary, readable
                self.note(d, said, "compacted", {**COMPACTION, "compactSummary": True})
            else:
                self.note(d, COMPACTED, "compacted", COMPACTION)
        elif kind == "event_msg" and payload.get("type") == "context_compacted":
            if not self.compacted_last():  # the event repeats the compacted line before it
                self.note(d, COMPACTED, "context_compacted", COMPACTION)
        elif kind == "event_msg" and payload.get("type") == "exec_command_end":
            self.exit_code(payload)
        elif kind == "event_msg" and payload.get("type") == "user_message":
            self.event_prompt(d, payload)
        elif kind == "event_msg" and payload.get("type") == "token_count":
            self.token_count(payload)

    def session_meta(self, payload: Json) -> None:
        source = payload.get("source")
        spawn = source.get("subagent", {}) if isinstance(source, dict) else {}
        thread = spawn.get("thread_spawn") if isinstance(spawn, dict) else None
        if self.parent is None and isinstance(thread, dict) and isinstance(thread.get("parent_thread_id"), str):
            self.parent = thread["parent_thread_id"]
        for key in ("cwd", "cli_version", "originator"):
            if isinstance(payload.get(key), str) and key not in self.context:
                self.context[key] = payload[key]
        if isinstance(payload.get("model_provider"), str) and payload["model_provider"]:
            self.context.setdefault("provider", payload["model_provider"])
        git = payload.get("git")
        if isinstance(git, dict) and isinstance(git.get("branch"), str) and git["branch"]:
            self.context.setdefault("gitBranch", git["branch"])

    def item(self, d: Json, p: Json) -> None:
        kind = p.get("type")
        if kind == "message":
            self.message_item(d, p)
        elif kind == "reasoning":
            for text in reasoning_texts(p):
                self.assistant(d)["parts"].append({"type": "reasoning", "text": text, "state": "done"})
        elif kind in CALLS:
            self.call(d, p)
        elif kind in OUTPUTS:
            self.output(p)
        elif kind == "agent_message":
            self.agent_message(d, p)

    def agent_message(self, d: Json, p: Json) -> None:
        """A report between agents (a subagent's answer to its parent): shown quietly, by its author."""
        parts = content_parts(p.get("content"))
        if not parts:
            return
        self.current = None
        meta = self.meta(d, "agent_message")
        for key in ("author", "recipient"):
            if isinstance(p.get(key), str):
                meta[key] = p[key]
        meta["notice"] = f"Message from {p['author']}" if isinstance(p.get("author"), str) else "Agent message"
        message, _ = self.conv.message(f"m:{self.line_no}", "user", meta)
        message["parts"].extend(parts)

    def compacted_last(self) -> bool:
        last = self.conv.messages[-1] if self.conv.messages else None
        return last is not None and last["metadata"].get("compaction") is True

    def assistant(self, d: Json) -> Json:
        if self.current is None or self.answered:
            self.current, _ = self.conv.message(f"a:{self.line_no}", "assistant", self.meta(d, "response_item"))
            self.answered = False
            if self.unplaced is not None:
                self.current["metadata"]["usage"] = self.unplaced
                self.unplaced = None
        return self.current

    def token_count(self, p: Json) -> None:
        """A ``token_count`` event: what ``total_token_usage`` grew by since the event before goes to
        the assistant message it follows (a repeated event adds nothing)."""
        info = p.get("info")
        total = info.get("total_token_usage") if isinstance(info, dict) else None
        if not isinstance(total, dict):
            return
        keys = ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_output_tokens")
        now = {k: total[k] if isinstance(total.get(k), int) and not isinstance(total.get(k), bool) else 0 for k in keys}
        before = self.used or dict.fromkeys(keys, 0)
        grown = {k: now[k] - before[k] for k in keys}
        self.used = now
        if any(v < 0 for v in grown.values()):  # the counter started again: this event's own usage
            last = info.get("last_token_usage") if isinstance(info, dict) else None
            grown = {k: last.get(k) if isinstance(last, dict) and isinstance(last.get(k), int) else 0 for k in keys}
        if not any(grown.values()):
            return
        cached = min(grown["cached_input_tokens"], grown["input_tokens"])
        usage = usage_of(grown["input_tokens"] - cached, grown["output_tokens"], cached, 0,
                         grown["reasoning_output_tokens"])  # fmt: skip
        target = self.current or next((m for m in reversed(self.conv.messages) if m["role"] == "assistant"), None)
        if target is None:
            self.unplaced = add_usage(self.unplaced, usage)
        else:
            target["metadata"]["usage"] = add_usage(target["metadata"].get("usage"), usage)

    def message_item(self, d: Json, p: Json) -> None:
        role = p.get("role")
        parts = content_parts(p.get("content"))
        if not parts:
            return
        if role == "assistant":
            self.assistant(d)["parts"].extend(parts)
            return
        self.current = None
        meta = self.meta(d, "response_item")
        text = "\n".join(part.get("text", "") for part in parts).strip()
        real = role == "user" and self.is_prompt(text)
        if role == "developer" or not real:
            meta["injected"] = True
            meta["role"] = role
        message, _ = self.conv.message(f"m:{self.line_no}", "system" if role == "developer" else "user", meta)
        message["parts"].extend(parts)
        if real and self.first_prompt is None:
            self.first_prompt = prompt_title(text)

    def event_prompt(self, d: Json, p: Json) -> None:
        """A prompt that Codex logged only as an event (the desktop app does): shown from the event."""
        text = p.get("message")
        if not isinstance(text, str) or not text.strip() or covered(text.strip(), self.spoken):
            return
        self.current = None
        message, _ = self.conv.message(f"m:{self.line_no}", "user", self.meta(d, "event_msg"))
        message["parts"].append({"type": "text", "text": text, "state": "done"})
        for url in p.get("images") or []:
            if isinstance(url, str) and url.startswith("data:"):
                message["parts"].append({"type": "file", "mediaType": url[5:].split(";", 1)[0], "url": url})
        if self.first_prompt is None:
            self.first_prompt = prompt_title(text)

    def is_prompt(self, text: str) -> bool:
        if self.prompts:
            return covered(text, self.prompts)
        return not text.startswith(INJECTED)

    def call(self, d: Json, p: Json) -> None:
        kind = p.get("type")
        call_id = str(p.get("call_id") or p.get("id") or f"line-{self.line_no}")
        if kind == "web_search_call":
            part = tool_part(self.registry, "web_search", call_id, p.get("action") or {})
            set_output(part, {"status": p.get("status")})
        elif kind == "tool_search_call":
            part = tool_part(self.registry, "tool_search", call_id, call_input(p))
            if p.get("execution") == "server":  # searched by the server: no output comes to pair
                set_output(part, {"status": p.get("status")})
        else:
            name, args = call_name(p), call_input(p)
            part = tool_part(self.registry, name, call_id, args)
        self.calls[call_id] = part
        self.call_messages[call_id] = holder = self.assistant(d)
        holder["parts"].append(part)

    def output(self, p: Json) -> None:
        call_id = str(p.get("call_id"))
        part = self.calls.get(call_id)
        if part is None:
            return
        raw = {"tools": p.get("tools")} if p.get("type") == "tool_search_output" else p.get("output")
        output, facts = split_output(raw)
        holder = self.call_messages.get(call_id)
        if holder is not None:
            output = lift_images(holder, part, image_items(output))
        set_output(part, output)
        facts = dict(facts or {})
        if not isinstance(facts.get("exit_code"), int) and part.get("toolName", part["type"][5:]) in SHELLS:
            code = heading_exit_code(output)
            if code is not None:
                facts["exit_code"] = code
        if facts:
            found = part.setdefault("toolMetadata", {}).setdefault("codex", {})
            for key, value in facts.items():
                found.setdefault(key, value)  # an exec_command_end read before keeps its word
        self.answered = True

    def exit_code(self, p: Json) -> None:
        part = self.calls.get(str(p.get("call_id")))
        if part is not None and isinstance(p.get("exit_code"), int):
            part.setdefault("toolMetadata", {}).setdefault("codex", {})["exit_code"] = p["exit_code"]

    def note(self, d: Json, text: str, kind: str, extra: Json) -> None:
        self.current = None
        message, _ = self.conv.message(f"n:{self.line_no}", "system", {**self.meta(d, kind), **extra})
        message["parts"].append({"type": "text", "text": text, "state": "done"})


COMPACTION: Json = {"compaction": True}


def image_items(output: Any) -> Any:
    """An output list's ``input_image`` items (``view_image``'s) as media content items."""
    if not isinstance(output, list):
        return output
    items: list[Any] = []
    for item in output:
        url = item.get("image_url") if isinstance(item, dict) and item.get("type") == "input_image" else None
        if isinstance(url, str) and url.startswith("data:") and ";base64," in url:
            head, data = url[5:].split(";base64,", 1)
            items.append({"type": "media", "mediaType": head or "image/png", "data": data})
        elif isinstance(item, dict) and item.get("type") in ("input_text", "output_text"):
            items.append({"type": "text", "text": item.get("text", "")})
        else:
            items.append(item)
    return items


def call_name(p: Json) -> str:
    name = str(p.get("name") or ("local_shell" if p.get("type") == "local_shell_call" else "unknown"))
    namespace = p.get("namespace")
    if isinstance(namespace, str) and namespace:
        return namespace + name if namespace.endswith("__") else f"{namespace}__{name}"
    return name


def call_input(p: Json) -> Any:
    if p.get("type") == "local_shell_call":
        return p.get("action") or {}
    if p.get("type") == "custom_tool_call":
        return {"input": p.get("input")}
    raw = p.get("arguments")
    if isinstance(raw, str):
        try:
            parsed = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return {"arguments": raw}
        return parsed if isinstance(parsed, dict) else {"arguments": parsed}
    return raw if isinstance(raw, dict) else {}


def split_output(raw: Any) -> tuple[Any, Json | None]:
    """The text the model saw, and the metadata Codex wrapped around it (exit code, duration)."""
    if isinstance(raw, list):
        texts = [i.get("text") for i in raw if isinstance(i, dict)]
        if all(isinstance(t, str) for t in texts) and len(texts) == len(raw):
            return "\n".join(str(t) for t in texts), None
        return raw, None
    if not isinstance(raw, str):
        return raw if raw is not None else "", None
    if raw.startswith('{"output"'):
        try:
            parsed = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return raw, None
        if isinstance(parsed, dict) and isinstance(parsed.get("output"), str):
            meta = parsed.get("metadata")
            return parsed["output"], meta if isinstance(meta, dict) else None
    return raw, None


def heading_exit_code(output: Any) -> int | None:
    """The exit code a shell-like output states before its "Output:" (not one its output prints)."""
    if not isinstance(output, str):
        return None
    heading = output[:HEADING_MAX].split("\nOutput:", 1)[0]
    for pattern in EXIT_HEADINGS:
        found = pattern.search(heading)
        if found:
            return int(found.group(1))
    return None


def reasoning_texts(p: Json) -> list[str]:
    """The readable reasoning of an item: its summaries (and content, when given); never the encrypted part."""
    texts = []
    for key in ("summary", "content"):
        items = p.get(key)
        for item in items if isinstance(items, list) else []:
            if isinstance(item, dict) and isinstance(item.get("text"), str) and item["text"].strip():
                texts.append(item["text"])
    return texts


def content_parts(content: Any) -> list[Json]:
    parts: list[Json] = []
    for item in content if isinstance(content, list) else []:
        if not isinstance(item, dict):
            continue
        text = item.get("text")
        if item.get("type") in ("input_text", "output_text", "text") and isinstance(text, str) and text:
            parts.append({"type": "text", "text": text, "state": "done"})
        elif item.get("type") == "input_image" and isinstance(item.get("image_url"), str):
            url = item["image_url"]
            media = url[5:].split(";", 1)[0] if url.startswith("data:") else "image/*"
            parts.append({"type": "file", "mediaType": media, "url": url})
    return parts


def prompt_title(text: str) -> str | None:
    if IDE_REQUEST in text:
        text = text.split(IDE_REQUEST, 1)[1]
    return short_title(text)


def covered(text: str, texts: set[str]) -> bool:
    """Whether ``text`` is one of ``texts``, whole (an AGENTS.md block that happens to contain a
    short prompt is not that prompt); an IDE's request counts by the part after its heading."""
    return text in texts or (IDE_REQUEST in text and text.split(IDE_REQUEST, 1)[1].strip() in texts)


def user_texts(path: Path) -> tuple[set[str], set[str]]:
    """The prompts the user typed (events) and the user texts the response items hold."""
    prompts, spoken = set(), set()
    for d in read_lines(path):
        p = d.get("payload")
        if not isinstance(p, dict):
            continue
        if d.get("type") == "event_msg" and p.get("type") == "user_message":
            if isinstance(p.get("message"), str) and p["message"].strip():
                prompts.add(p["message"].strip())
        elif p.get("type") == "message" and p.get("role") == "user":
            text = "\n".join(part.get("text", "") for part in content_parts(p.get("content"))).strip()
            if text:
                spoken.add(text)
    return prompts, spoken


def parse_rollout(path: Path, session_id: str, registry: Registry, namespace: uuid.UUID) -> Session:
    """One rollout file, parsed whole."""
    rollout = Rollout(registry, Conversation(namespace, idle=is_idle(path)), *user_texts(path))
    for number, d in enumerate(read_lines(path)):
        rollout.line_no = number
        rollout.line(d)
    rollout.conv.title = rollout.first_prompt
    settle_conversation(rollout.conv, registry)
    session = Session(str(path), "codex", session_id, rollout.conv, files=[str(path)])
    if rollout.parent:
        session.parent = (rollout.parent, f"thread-{session_id}")
    return session


LINE_TYPES = {"session_meta", "response_item", "event_msg", "turn_context", "compacted"}


def is_codex_line(d: Json) -> bool:
    """Codex lines are ``{timestamp, type, payload}`` envelopes (or, in mid-2025 files, a bare
    ``{id, instructions}`` header and ``record_type`` lines)."""
    if isinstance(d.get("type"), str) and d["type"] in LINE_TYPES and "payload" in d:
        return True
    return "record_type" in d or ("instructions" in d and "id" in d and "type" not in d)


def sniff(head: Head) -> bool:
    return any(is_codex_line(d) for d in head.lines)


def session_id(head: Head) -> str:
    for d in head.lines:
        if d.get("type") == "session_meta" and isinstance(d.get("payload"), dict):
            found = d["payload"].get("id")
        elif "instructions" in d and "type" not in d:
            found = d.get("id")
        else:
            continue
        if isinstance(found, str):
            return found
    return head.path.stem[-36:]


def parse(group: Group, registry: Registry, namespace: uuid.UUID) -> Session:
    return parse_rollout(group.main, group.session_id, registry, namespace)


def locations() -> list[Path]:
    return [Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex") / "sessions"]


FORMAT = Format("codex", "Codex", (".jsonl",), sniff, one_session("codex", session_id), parse, locations)
