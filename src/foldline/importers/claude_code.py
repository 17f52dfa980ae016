"""Claude Code sessions (``~/.claude/projects/<project>/<session>.jsonl``) as Foldline messages.

Assistant lines are merged by ``message.id``; each ``tool_use`` is paired with its
``tool_result`` (which arrives on a later user line) into one tool part. Thinking becomes
``reasoning`` (a signature alone is dropped); images become ``file`` parts. Subagents of all
three generations become subagent conversations under the Task/Agent call that started them:
sidechain lines in the main file (linked by their prompt), ``agent-*.jsonl`` beside the session
and ``<session>/subagents/agent-*.jsonl`` (linked by the result's ``agentId``). Lines replayed
after a resume are read once (by ``uuid``). A compaction summary is kept, marked in metadata.
A Bash result's exit status ("Exit code N" heading a failed result) and ``interrupted`` flag are
kept in ``toolMetadata.claudeCode`` as ``exitCode`` and ``interrupted``. An assistant message's
``message.usage`` is kept as ``metadata.usage`` in the AI SDK's shape (the last line of the message
id, which repeats it).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from ..registry import Registry
from . import claude_files
from .claude_results import agent_link, bash_exit_code, image_block, result_output, tool_metadata, whole_output
from .formats import Format, Group
from .jsonl import read_lines
from .session import (
    Conversation,
    Json,
    Session,
    is_idle,
    lift_images,
    set_output,
    settle_conversation,
    short_title,
    tool_part,
    usage_of,
)

SPAWNERS = ("Task", "Agent")
COMPACTIONS = ("compact_boundary", "microcompact_boundary")
# The label of a user line that nobody typed (``origin.kind``, a queued command's mode), drawn quietly.
NOTICES = {"task-notification": "Task notification", "peer": "Message from another session"}


@dataclass
class Builder:
    """Turns the lines of one conversation into messages."""

    registry: Registry
    conv: Conversation
    result_dirs: list[Path]
    calls: dict[str, Json] = field(default_factory=dict)  # tool_use id -> its part
    call_messages: dict[str, Json] = field(default_factory=dict)  # tool_use id -> the message holding it
    agent_calls: dict[str, str] = field(default_factory=dict)  # subagent id -> call that started it
    first_prompt: str | None = None
    first_command: str | None = None  # a slash command, the title only when nothing else is typed
    where: Json = field(default_factory=dict)

    @property
    def title(self) -> str | None:
        return self.first_prompt or self.first_command

    def context(self, d: Json, meta: Json) -> Json:
        """Where the session ran (cwd, branch, version), on the messages where it changed."""
        here = {key: d[key] for key in ("cwd", "gitBranch", "version") if isinstance(d.get(key), str) and d[key]}
        changed = {key: value for key, value in here.items() if self.where.get(key) != value}
        self.where.update(here)
        return {**meta, **changed}

    def line(self, d: Json) -> None:
        self.conv.saw(d.get("timestamp"))
        kind = d.get("type")
        if kind == "assistant":
            self.assistant(d)
        elif kind == "user":
            self.user(d)
        elif kind == "system":
            self.system(d)
        elif kind == "attachment":
            self.attachment(d)

    def assistant(self, d: Json) -> None:
        body = d.get("message")
        if not isinstance(body, dict):
            return
        key = "a:" + str(body.get("id") or d.get("uuid"))
        meta = self.context(d, envelope(d, "assistant"))
        if isinstance(body.get("model"), str):
            meta["model"] = body["model"]
        if d.get("isApiErrorMessage"):  # retries ran out: the CLI's own words, not the model's
            meta["notice"] = "API error"
        message, _ = self.conv.message(key, "assistant", meta)
        usage = claude_usage(body.get("usage"))
        if usage is not None:  # each line of a message repeats its usage; the last one is the whole
            message["metadata"]["usage"] = usage
        content = body.get("content")
        for block in content if isinstance(content, list) else [content]:
            self.assistant_block(message, block)

    def assistant_block(self, message: Json, block: Any) -> None:
        if isinstance(block, str):
            block = {"type": "text", "text": block}
        if not isinstance(block, dict):
            return
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str) and block["text"]:
            message["parts"].append({"type": "text", "text": block["text"], "state": "done"})
        elif kind == "thinking" and isinstance(block.get("thinking"), str) and block["thinking"].strip():
            message["parts"].append({"type": "reasoning", "text": block["thinking"], "state": "done"})
        elif kind == "tool_use" and isinstance(block.get("id"), str) and block["id"] not in self.calls:
            part = tool_part(self.registry, str(block.get("name") or "unknown"), block["id"], block.get("input"))
            self.calls[block["id"]] = part
            self.call_messages[block["id"]] = message
            message["parts"].append(part)

    def user(self, d: Json) -> None:
        body = d.get("message")
        content = body.get("content") if isinstance(body, dict) else None
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if not isinstance(blocks, list):
            return
        results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
        for block in results:
            self.result(block, d.get("toolUseResult") if len(results) == 1 else None)
        parts = [p for p in (user_part(b) for b in blocks) if p is not None]
        if not parts:
            return
        meta = self.context(d, envelope(d, "user"))
        for flag, name in (("isMeta", "isMeta"), ("isCompactSummary", "compactSummary")):
            if d.get(flag):
                meta[name] = True
        origin = d.get("origin")
        kind = origin.get("kind") if isinstance(origin, dict) else None
        if isinstance(kind, str) and kind != "human":  # a background task's report, not typed
            meta["notice"] = NOTICES.get(kind, kind)
        self.prompt_message("u:" + str(d.get("uuid")), meta, parts)

    def prompt_message(self, key: str, meta: Json, parts: list[Json]) -> None:
        message, _ = self.conv.message(key, "user", meta)
        message["parts"].extend(parts)
        if self.first_prompt is None and not any(meta.get(k) for k in ("isMeta", "compactSummary", "notice")):
            title = prompt_title(parts)
            if title and title.startswith("/"):
                self.first_command = self.first_command or title
            else:
                self.first_prompt = title

    def attachment(self, d: Json) -> None:
        """A prompt typed while a turn ran: Claude Code keeps it only as a ``queued_command``
        attachment (a task's notification comes the same way, shown quietly)."""
        a = d.get("attachment")
        if not isinstance(a, dict) or a.get("type") != "queued_command" or a.get("isMeta"):
            return
        raw = a.get("prompt")
        blocks = [{"type": "text", "text": raw}] if isinstance(raw, str) else raw
        parts = [p for p in (user_part(b) for b in blocks) if p is not None] if isinstance(blocks, list) else []
        if not parts:
            return
        meta = self.context(d, envelope(d, "attachment"))
        meta["queued"] = True
        origin = a.get("origin")
        kind = origin.get("kind") if isinstance(origin, dict) else None
        mode = a.get("commandMode")
        if mode not in (None, "prompt") or (isinstance(kind, str) and kind != "human"):
            meta["notice"] = NOTICES.get(str(mode if mode not in (None, "prompt") else kind), "Queued message")
        self.prompt_message("q:" + str(d.get("uuid")), meta, parts)

    def result(self, block: Json, extra: Any) -> None:
        call_id = block.get("tool_use_id")
        part = self.calls.get(call_id) if isinstance(call_id, str) else None
        if part is None or call_id is None:
            return
        output, cut = whole_output(result_output(block.get("content")), call_id, extra, self.result_dirs)
        failed = bool(block.get("is_error"))
        if not failed:
            output = lift_images(self.call_messages[call_id], part, output)
        set_output(part, output, error=failed)
        name = part.get("toolName", part["type"][5:])
        facts = tool_metadata(extra) or {}
        if cut is not None:  # the whole output is not in the log: say so, and how big it was
            facts.update(cut)
        code = bash_exit_code(output) if name == "Bash" and failed else None  # only a failure is headed so
        if code is not None:
            facts.setdefault("exitCode", code)
        if facts:
            part["toolMetadata"] = {"claudeCode": facts}
        if name in SPAWNERS:
            agent = agent_link(block.get("content"), extra)
            if agent:
                self.agent_calls[agent] = call_id

    def system(self, d: Json) -> None:
        text = d.get("content")
        if d.get("subtype") == "api_error":
            text = api_error_text(d)
        if not isinstance(text, str) or not text.strip():
            return
        meta = envelope(d, "system")
        for key in ("subtype", "level", "compactMetadata", "microcompactMetadata"):
            if d.get(key) is not None:
                meta[key] = d[key]
        if d.get("subtype") in COMPACTIONS:
            meta["compaction"] = True
        elif d.get("subtype") == "api_error":
            meta["notice"] = "API retry"
        message, _ = self.conv.message("s:" + str(d.get("uuid")), "system", meta)
        message["parts"].append({"type": "text", "text": text, "state": "done"})


def api_error_text(d: Json) -> str:
    """An ``api_error`` retry line, in one short sentence."""
    found = d.get("error")
    error: Json = found if isinstance(found, dict) else {}
    status = error.get("status")
    body = error.get("error")
    inner = body.get("error") if isinstance(body, dict) else None
    said = inner.get("message") if isinstance(inner, dict) else None
    text = "API error" + (f" {status}" if isinstance(status, int) else "")
    text += f": {said}" if isinstance(said, str) else ""
    attempt, most, wait = d.get("retryAttempt"), d.get("maxRetries"), d.get("retryInMs")
    if isinstance(attempt, int):
        text += f"; retry {attempt}" + (f" of {most}" if isinstance(most, int) else "")
        if isinstance(wait, int | float) and not isinstance(wait, bool):
            text += f" in {wait / 1000:.1f} s"
    return text


def claude_usage(raw: Any) -> Json | None:
    """A ``message.usage`` (Anthropic's: ``input_tokens`` is what the cache did not hold) in the
    AI SDK's shape, or None when the line has none."""
    if not isinstance(raw, dict):
        return None

    def count(key: str) -> int:
        value = raw.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 10**12 else 0

    return usage_of(count("input_tokens"), count("output_tokens"), count("cache_read_input_tokens"),
                    count("cache_creation_input_tokens"))  # fmt: skip


def envelope(d: Json, kind: str) -> Json:
    meta: Json = {"source": "claude-code", "lineType": kind}
    for key in ("timestamp", "uuid"):
        if isinstance(d.get(key), str) and d[key]:
            meta[key] = d[key]
    return meta


def user_part(block: Any) -> Json | None:
    if not isinstance(block, dict):
        return None
    kind = block.get("type")
    if kind == "text" and isinstance(block.get("text"), str) and block["text"]:
        return {"type": "text", "text": block["text"], "state": "done"}
    if kind == "image":
        image = image_block(block)
        if image:
            url = f"data:{image['mediaType']};base64,{image['data']}"
            return {"type": "file", "mediaType": image["mediaType"], "url": url}
    return None


def prompt_title(parts: list[Json]) -> str | None:
    for part in parts:
        text = part.get("text")
        if not isinstance(text, str):
            continue
        if "<command-name>" in text:
            return short_title(text.split("<command-name>", 1)[1].split("</command-name>", 1)[0])
        if not text.lstrip().startswith(("<", "Caveat:", "[Request interrupted")):
            return short_title(text)
    return None


def result_dirs(main: Path) -> list[Path]:
    return [main.with_suffix("") / "tool-results"]


def unique_lines(path: Path) -> Iterator[Json]:
    """The lines of a log, each ``uuid`` once: lines replayed after a resume are passed over."""
    seen: set[str] = set()
    for d in read_lines(path):
        line_uuid = d.get("uuid")
        if isinstance(line_uuid, str):
            if line_uuid in seen:
                continue
            seen.add(line_uuid)
        yield d


def parse_session(main: Path, agents: list[Path], session_id: str, registry: Registry, namespace: uuid.UUID) -> Session:
    """A main session file and its agent files, parsed whole."""
    builder = Builder(registry, Conversation(namespace, idle=is_idle(main)), result_dirs(main))
    chains: dict[str, Builder] = {}  # first-generation subagents: root uuid -> builder
    root_of: dict[str, str] = {}
    titles: dict[str, str] = {}
    summaries: list[tuple[Any, str]] = []  # (leafUuid, summary), in file order
    uuids: set[str] = set()
    progress: dict[str, list[Json]] = {}  # call -> its subagent's messages, as agent_progress lines gave them
    for d in unique_lines(main):
        line_uuid = d.get("uuid")
        if isinstance(line_uuid, str):
            uuids.add(line_uuid)
        note_title(d, titles, summaries)
        if d.get("type") == "progress":
            note_progress(d, progress)
        elif d.get("isSidechain") and isinstance(line_uuid, str):
            builder.conv.saw(d.get("timestamp"))  # a subagent's line is the session's activity too
            sidechain(d, line_uuid, builder, chains, root_of)
        else:
            builder.line(d)
    session = Session(str(main), "claude-code", session_id, builder.conv, files=[str(main)])
    # A summary line names the leaf message it sums up; Claude Code also copies other sessions'
    # summaries into a file, so only one whose leaf is a line of this session is its title.
    own = [text for leaf, text in summaries if isinstance(leaf, str) and leaf in uuids]
    builder.conv.title = titles.get("custom") or titles.get("ai") or (own[-1] if own else None) or builder.title
    link_chains(session, builder, chains)
    for path in agents:
        add_agent_file(session, builder, path, registry)
    for call, lines in progress.items():
        if call not in session.subagents and call in builder.calls:  # no subagent file: its progress
            add_progress(session, builder, call, lines)
    settle_all(session, registry)
    return session


def note_progress(d: Json, progress: dict[str, list[Json]]) -> None:
    """An ``agent_progress`` line: one message of the subagent a call started, kept by that call."""
    data = d.get("data")
    call = d.get("parentToolUseID")
    if not isinstance(data, dict) or data.get("type") != "agent_progress" or not isinstance(call, str):
        return
    inner = data.get("message")
    if isinstance(inner, dict) and inner.get("type") in ("user", "assistant"):
        progress.setdefault(call, []).append(inner)


def add_progress(session: Session, main: Builder, call: str, lines: list[Json]) -> None:
    """A subagent known only from its parent's ``agent_progress`` lines, under the call that started it."""
    conv = Conversation(uuid.uuid5(main.conv.namespace, "progress:" + call), idle=main.conv.idle)
    chain = Builder(main.registry, conv, main.result_dirs)
    seen: set[str] = set()
    for d in lines:
        line_uuid = d.get("uuid")
        if isinstance(line_uuid, str):
            if line_uuid in seen:
                continue
            seen.add(line_uuid)
        chain.line(d)
    if conv.messages:
        conv.title = chain.title
        session.subagents[call] = conv


def note_title(d: Json, titles: dict[str, str], summaries: list[tuple[Any, str]]) -> None:
    if d.get("type") == "custom-title" and isinstance(d.get("customTitle"), str) and d["customTitle"].strip():
        titles["custom"] = d["customTitle"]  # the title a person gave the session
    elif d.get("type") == "ai-title" and isinstance(d.get("aiTitle"), str):
        titles["ai"] = d["aiTitle"]
    elif d.get("type") == "summary" and isinstance(d.get("summary"), str):
        summaries.append((d.get("leafUuid"), d["summary"]))


def sidechain(d: Json, line_uuid: str, main: Builder, chains: dict[str, Builder], root_of: dict[str, str]) -> None:
    parent = d.get("parentUuid")
    root = root_of.get(parent, line_uuid) if isinstance(parent, str) else line_uuid
    root_of[line_uuid] = root
    if root not in chains:
        conv = Conversation(uuid.uuid5(main.conv.namespace, root), idle=main.conv.idle)
        chains[root] = Builder(main.registry, conv, main.result_dirs)
    chains[root].line(d)


def link_chains(session: Session, main: Builder, chains: dict[str, Builder]) -> None:
    """First-generation subagents: a chain belongs to the Task call whose prompt it starts with."""
    prompts: dict[str, str] = {}
    for call_id, part in main.calls.items():
        prompt = part.get("input", {}).get("prompt")
        if part.get("toolName", part["type"][5:]) in SPAWNERS and isinstance(prompt, str):
            prompts.setdefault(prompt.strip(), call_id)
    for root, chain in chains.items():
        first = chain.conv.messages[0]["parts"] if chain.conv.messages else []
        text = next((p["text"] for p in first if p.get("type") == "text"), "")
        call = prompts.pop(text.strip(), None) or f"sidechain-{root}"
        chain.conv.title = chain.title
        session.subagents[call] = chain.conv


def add_agent_file(session: Session, main: Builder, path: Path, registry: Registry) -> None:
    """A second- or third-generation subagent file, under the call that started it."""
    agent_id = path.stem.removeprefix("agent-")
    conv = Conversation(uuid.uuid5(main.conv.namespace, "agent:" + agent_id), idle=is_idle(path))
    chain = Builder(registry, conv, result_dirs_of(path))
    for d in unique_lines(path):
        agent_id = str(d.get("agentId") or agent_id)
        chain.line(d)
    call = main.agent_calls.get(agent_id) or f"agent-{agent_id}"
    chain.conv.title = meta_description(path) or chain.title
    session.subagents[call] = chain.conv
    session.files.append(str(path))


def result_dirs_of(agent_file: Path) -> list[Path]:
    if agent_file.parent.name == "subagents":
        return [agent_file.parent.parent / "tool-results"]
    return []


def meta_description(agent_file: Path) -> str | None:
    try:
        meta = orjson.loads(agent_file.with_suffix(".meta.json").read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    text = meta.get("description") if isinstance(meta, dict) else None
    return short_title(text) if isinstance(text, str) else None


def parse_orphan(path: Path, session_id: str, registry: Registry, namespace: uuid.UUID) -> Session:
    """An agent file whose session is not on disk: an agent of its own."""
    builder = Builder(registry, Conversation(namespace, idle=is_idle(path)), result_dirs_of(path))
    for d in unique_lines(path):
        builder.line(d)
    builder.conv.title = meta_description(path) or builder.title
    session = Session(str(path), "claude-code", session_id, builder.conv, files=[str(path)])
    settle_all(session, registry)
    return session


def settle_all(session: Session, registry: Registry) -> None:
    settle_conversation(session.main, registry)
    for conv in session.subagents.values():
        settle_conversation(conv, registry)


def parse(group: Group, registry: Registry, namespace: uuid.UUID) -> Session:
    if group.orphan:
        return parse_orphan(group.main, group.session_id, registry, namespace)
    return parse_session(group.main, group.agents, group.session_id, registry, namespace)


FORMAT = Format(
    name=claude_files.NAME,
    label="Claude Code",
    suffixes=(".jsonl",),
    sniff=claude_files.sniff,
    groups=claude_files.groups,
    parse=parse,
    locations=claude_files.locations,
)
