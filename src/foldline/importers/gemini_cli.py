"""Gemini CLI sessions (``~/.gemini/tmp/<project>/chats/``) as Foldline messages.

Three shapes, told from the content (Gemini writes JSON into ``.jsonl`` names too):

- the chat JSON document ``{sessionId, projectHash, startTime, lastUpdated, messages[]}``,
  rewritten whole on every turn;
- the chat JSONL log (2026 on): a metadata line, then message records (a later record with the
  same ``id`` replaces the earlier one, in its place), ``{"$set": {…}}`` (metadata; a ``messages``
  list replaces them all) and ``{"$rewindTo": id}`` (that message and all after it are gone; an
  unknown id clears them all), replayed in order as Gemini CLI does;
- the API history (``/chat save`` checkpoints): a bare list of ``{role, parts[]}`` contents,
  without ids, times or tokens.

A ``user`` message is a prompt (``displayContent`` when given: what the person typed), a
``gemini`` message an assistant message: its ``thoughts`` (subject and description) become
``reasoning``, its text, then its ``toolCalls`` with their ``functionResponse`` output (an
``error`` status or response is ``output-error``). ``info``, ``warning`` and ``error`` messages
are the CLI's notices: system messages with ``metadata.level``. ``tokens`` become
``metadata.usage`` (``input`` counts the cached tokens, ``thoughts`` are output). Message ids
derive from Gemini's own message ids, so a rewritten document writes only what changed.
Subagent chats (``chats/<parentSessionId>/<sessionId>.jsonl``, ``kind: "subagent"``) are the
session's subagents.
"""

from __future__ import annotations

import hashlib
import os
import re
import uuid
from pathlib import Path
from typing import Any

import orjson

from ..registry import Registry
from .document import file_time, read_document
from .formats import Finding, Format, Group, Head
from .jsonl import first_raw_line, read_lines
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

NAME = "gemini-cli"
DOCUMENT = re.compile(rb'^\s*\{\s*"sessionId"\s*:\s*"[^"]*"\s*,\s*"projectHash"\s*:')
HISTORY = re.compile(rb'^\s*\[\s*\{\s*"role"\s*:\s*"(user|model)"\s*,\s*"parts"\s*:')
NOTICES = ("info", "warning", "error")
FAILED = ("error", "cancelled")


def sniff(head: Head) -> bool:
    if DOCUMENT.match(head.data) or HISTORY.match(head.data):
        return True
    if not head.data.lstrip().startswith(b'{"'):  # not a JSONL line (a document's lines are not read)
        return False
    first = head.lines[0] if head.lines else {}
    return is_metadata(first)


def is_metadata(d: Json) -> bool:
    return isinstance(d.get("sessionId"), str) and isinstance(d.get("projectHash"), str) and "type" not in d


# -- reading the record --------------------------------------------------------------------


def load(path: Path) -> tuple[Json, list[Json]]:
    """The session's metadata and its messages, replayed as Gemini CLI loads them."""
    meta: Json = {}
    messages: dict[str, Json] = {}
    for d in read_lines(path) if first_line_is_json(path) else ():
        if isinstance(d.get("$rewindTo"), str):
            rewind(messages, d["$rewindTo"])
        elif isinstance(d.get("id"), str):
            messages[d["id"]] = d
        elif isinstance(d.get("$set"), dict):
            replace(meta, messages, d["$set"])
        elif is_metadata(d):
            replace(meta, messages, d)
    if not meta:  # a pretty-printed document: no line is an object
        document = read_document(path)
        if isinstance(document, dict):
            replace(meta, messages, document)
        elif isinstance(document, list):
            return {"history": True}, [c for c in document if isinstance(c, dict)]
    return meta, list(messages.values())


def first_line_is_json(path: Path) -> bool:
    """Whether the file is a JSONL log (a pretty-printed document's first line is only ``{``)."""
    line = first_raw_line(path)
    try:
        orjson.loads(line)
    except orjson.JSONDecodeError:
        return False
    return True


def rewind(messages: dict[str, Json], message_id: str) -> None:
    keys = list(messages)
    cut = keys.index(message_id) if message_id in messages else 0
    for key in keys[cut:]:
        del messages[key]


def replace(meta: Json, messages: dict[str, Json], update: Json) -> None:
    meta.update({k: v for k, v in update.items() if k != "messages"})
    found = update.get("messages")
    if isinstance(found, list) and found:
        messages.clear()
        messages.update({m["id"]: m for m in found if isinstance(m, dict) and isinstance(m.get("id"), str)})


# -- messages ------------------------------------------------------------------------------


def content_parts(content: Any) -> list[Json]:
    """A Gemini ``PartListUnion`` (a string, a part, or a list) as text and file parts."""
    items = content if isinstance(content, list) else [content]
    parts: list[Json] = []
    for item in items:
        if isinstance(item, str) and item:
            parts.append({"type": "text", "text": item, "state": "done"})
        elif isinstance(item, dict) and isinstance(item.get("text"), str) and item["text"] and not item.get("thought"):
            parts.append({"type": "text", "text": item["text"], "state": "done"})
        elif isinstance(item, dict) and file_part(item) is not None:
            parts.append(file_part(item) or {})
    return parts


def file_part(item: Json) -> Json | None:
    inline, ref = item.get("inlineData"), item.get("fileData")
    if isinstance(inline, dict) and isinstance(inline.get("data"), str):
        media = str(inline.get("mimeType") or "application/octet-stream")
        return {"type": "file", "mediaType": media, "url": f"data:{media};base64,{inline['data']}"}
    if isinstance(ref, dict) and isinstance(ref.get("fileUri"), str):
        return {"type": "file", "mediaType": str(ref.get("mimeType") or "application/octet-stream"),
                "url": ref["fileUri"]}  # fmt: skip
    return None


def response_output(result: Any, call_id: str) -> tuple[str, bool, list[Json]]:
    """A tool call's ``result`` (``functionResponse`` parts): the text the model saw, whether it is
    an error, and the images it held as ``file`` parts (the text says where each one went)."""
    texts: list[str] = []
    files: list[Json] = []
    failed = False
    for item in result if isinstance(result, list) else [result]:
        if not isinstance(item, dict):
            continue
        call = item.get("functionResponse")
        response = call.get("response") if isinstance(call, dict) else None
        if isinstance(response, dict):
            failed = failed or isinstance(response.get("error"), str)
            said = response.get("error") if isinstance(response.get("error"), str) else response.get("output")
            texts.append(said if isinstance(said, str) else str(response))
        found = file_part(item)
        if found is not None:
            files.append({**found, "providerMetadata": {"foldline": {"toolCallId": call_id}}})
            texts.append(f"[image {len(files)}: {found['mediaType']}, shown below]")
    return "\n".join(texts), failed, files


def gemini_usage(tokens: Any) -> Json | None:
    """Gemini's ``tokens`` (``input`` is the whole prompt, cached included) in the AI SDK's shape."""
    if not isinstance(tokens, dict):
        return None

    def count(key: str) -> int:
        value = tokens.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 10**12 else 0

    if not any(count(k) for k in ("input", "output", "cached", "thoughts", "tool")):
        return None
    cached = min(count("cached"), count("input"))
    return usage_of(count("input") - cached + count("tool"), count("output") + count("thoughts"), cached, 0,
                    count("thoughts"))  # fmt: skip


def thought_text(thought: Any) -> str | None:
    if not isinstance(thought, dict):
        return None
    pieces = [thought.get(k) for k in ("subject", "description")]
    text = "\n\n".join(p.strip() for p in pieces if isinstance(p, str) and p.strip())
    return text or None


def add_message(conv: Conversation, m: Json, index: int, registry: Registry) -> str | None:
    """One chat record as a message; the prompt's text when it is a typed prompt."""
    kind = m.get("type")
    conv.saw(m.get("timestamp"))
    meta: Json = {"source": NAME, "lineType": kind}
    if isinstance(m.get("timestamp"), str):
        meta["timestamp"] = m["timestamp"]
    key = f"m:{m['id']}" if isinstance(m.get("id"), str) else f"i:{index}"  # Gemini's id, else its place
    if kind == "user":
        return prompt(conv, key, meta, m)
    if kind in NOTICES:
        message, _ = conv.message(key, "system", {**meta, "level": kind})
        message["parts"] = content_parts(m.get("content"))
    elif kind == "gemini":
        model_message(conv, key, meta, m, registry)
    return None


def prompt(conv: Conversation, key: str, meta: Json, m: Json) -> str | None:
    """A user record: what was typed (``displayContent``), with the images of what the model saw."""
    shown = m.get("displayContent") if m.get("displayContent") else m.get("content")
    parts = content_parts(shown)
    if shown is not m.get("content"):
        parts += [p for p in content_parts(m.get("content")) if p["type"] == "file"]
    message, _ = conv.message(key, "user", meta)
    message["parts"] = parts
    return "\n".join(p["text"] for p in parts if p["type"] == "text") or None


def model_message(conv: Conversation, key: str, meta: Json, m: Json, registry: Registry) -> None:
    """A gemini record: its thoughts, its text, then its tool calls (their order is not recorded)."""
    if isinstance(m.get("model"), str):
        meta["model"] = m["model"]
    usage = gemini_usage(m.get("tokens"))
    if usage is not None:
        meta["usage"] = usage
    message, _ = conv.message(key, "assistant", meta)
    message["parts"] = []
    thoughts = m.get("thoughts")
    for thought in thoughts if isinstance(thoughts, list) else []:
        text = thought_text(thought)
        if text:
            message["parts"].append({"type": "reasoning", "text": text, "state": "done"})
    message["parts"] += content_parts(m.get("content"))
    calls = m.get("toolCalls")
    for call in calls if isinstance(calls, list) else []:
        if isinstance(call, dict):
            message["parts"] += call_parts(call, registry)


def call_parts(call: Json, registry: Registry) -> list[Json]:
    """A tool call's part, then the images its result held."""
    call_id = str(call.get("id") or f"{call.get('name')}-{call.get('timestamp')}")
    part = tool_part(registry, str(call.get("name") or "unknown"), call_id, call.get("args") or {})
    files: list[Json] = []
    if call.get("result") is not None:
        output, failed, files = response_output(call["result"], call_id)
        set_output(part, output, error=failed or call.get("status") in FAILED)
    elif call.get("status") in FAILED:
        set_output(part, str(call.get("resultDisplay") or call["status"]), error=True)
    if isinstance(call.get("agentId"), str) and call["agentId"]:  # the subagent this call ran
        part["toolMetadata"] = {"geminiCli": {"agentId": call["agentId"]}}
    return [part, *files]


def history(conv: Conversation, contents: list[Json], registry: Registry) -> str | None:
    """An API history: calls paired with their responses by id, else by name in order."""
    first: str | None = None
    open_calls: list[Json] = []
    for index, content in enumerate(contents):
        found = content.get("parts")
        parts: list[Any] = found if isinstance(found, list) else []
        for p in parts:
            if isinstance(p, dict) and isinstance(p.get("functionResponse"), dict):
                pair_response(open_calls, p["functionResponse"])
        role = "assistant" if content.get("role") == "model" else "user"
        message, _ = conv.message(f"h:{index}", role, {"source": NAME, "lineType": "history"})
        for p in parts if role == "assistant" else []:
            if isinstance(p, dict) and p.get("thought") and isinstance(p.get("text"), str) and p["text"].strip():
                message["parts"].append({"type": "reasoning", "text": p["text"], "state": "done"})
            elif isinstance(p, dict) and isinstance(p.get("functionCall"), dict):
                part = history_call(p["functionCall"], f"h{index}-{len(message['parts'])}", registry)
                open_calls.append(part)
                message["parts"].append(part)
            else:
                message["parts"] += content_parts([p])
        if role == "user":
            message["parts"] = content_parts(parts)
            text = "\n".join(p["text"] for p in message["parts"] if p["type"] == "text")
            if first is None and text and not text.lstrip().startswith("<"):
                first = text
    return first


def history_call(call: Json, fallback_id: str, registry: Registry) -> Json:
    return tool_part(registry, str(call.get("name") or "unknown"), str(call.get("id") or fallback_id),
                     call.get("args") or {})  # fmt: skip


def pair_response(open_calls: list[Json], response: Json) -> None:
    name, call_id = response.get("name"), response.get("id")
    match = next((p for p in open_calls if call_id and p["toolCallId"] == call_id), None)
    match = match or next((p for p in open_calls if p.get("toolName", p["type"][5:]) == name), None)
    if match is None:
        return
    open_calls.remove(match)
    output, failed, _ = response_output([{"functionResponse": response}], match["toolCallId"])
    set_output(match, output, error=failed)


def conversation(path: Path, namespace: uuid.UUID, registry: Registry) -> tuple[Conversation, Json]:
    meta, records = load(path)
    conv = Conversation(namespace, idle=is_idle(path))
    if meta.get("history"):  # no times: the file's
        first = history(conv, records, registry)
        conv.saw(file_time(path))
    else:
        first = None
        for index, m in enumerate(records):
            text = add_message(conv, m, index, registry)
            first = first or text
        conv.saw(meta.get("lastUpdated"))
    summary = meta.get("summary")
    title = summary if isinstance(summary, str) and summary.strip() else first
    conv.title = short_title(title) if title else None
    settle_conversation(conv, registry)
    return conv, meta


def parse(group: Group, registry: Registry, namespace: uuid.UUID) -> Session:
    conv, _ = conversation(group.main, namespace, registry)
    session = Session(str(group.main), NAME, group.session_id, conv, files=[str(group.main)])
    linked = {
        part["toolMetadata"]["geminiCli"]["agentId"]: part["toolCallId"]
        for m in conv.messages for part in m["parts"] if "geminiCli" in part.get("toolMetadata", {})
    }  # fmt: skip
    for path in group.agents:
        sub, sub_meta = conversation(path, uuid.uuid5(namespace, "agent:" + path.stem), registry)
        sub_id = str(sub_meta.get("sessionId") or path.stem)
        session.subagents[linked.get(sub_id) or f"agent-{sub_id}"] = sub
        session.files.append(str(path))
    return session


# -- sessions and their files --------------------------------------------------------------


def head_meta(head: Head) -> Json:
    if head.lines and is_metadata(head.lines[0]):
        return head.lines[0]
    found = re.search(rb'"sessionId"\s*:\s*"([^"]*)"', head.data[:4096])
    kind = re.search(rb'"kind"\s*:\s*"([^"]*)"', head.data[:4096])
    return {"sessionId": found.group(1).decode(errors="replace") if found else None,
            "kind": kind.group(1).decode(errors="replace") if kind else None}  # fmt: skip


def groups(head: Head, finding: Finding) -> None:
    if head.path.suffix == ".json" and head.path.with_suffix(".jsonl").is_file():
        return  # a resumed session: Gemini CLI carried it on in the .jsonl beside it, which is read
    meta = head_meta(head)
    session_id = meta.get("sessionId")
    if not isinstance(session_id, str) or not session_id:  # an API history has no id: its path is its id
        digest = hashlib.blake2b(str(head.path).encode(), digest_size=4).hexdigest()
        finding.add(Group(NAME, head.path, f"{head.path.stem}-{digest}"))
        return
    if meta.get("kind") == "subagent":
        main = parent_file(head.path)
        if main is not None:
            finding.add(Group(NAME, main, head.path.parent.name, subagent_files(main, head.path.parent.name)))
            return
    finding.add(Group(NAME, head.path, session_id, subagent_files(head.path, session_id)))


def subagent_files(main: Path, session_id: str) -> list[Path]:
    folder = main.parent / session_id
    return sorted(p for p in folder.glob("*.jsonl") if p.is_file()) if folder.is_dir() else []


def parent_file(sub: Path) -> Path | None:
    """The main chat of a subagent chat (``chats/<parentSessionId>/<id>.jsonl``), if it is there."""
    parent_id = sub.parent.name
    for candidate in sorted(sub.parent.parent.glob(f"session-*-{parent_id[:8]}.json*")):
        if candidate.is_file() and head_meta(Head(candidate)).get("sessionId") == parent_id:
            return candidate
    return None


def locations() -> list[Path]:
    home = Path(os.environ.get("GEMINI_CLI_HOME") or Path.home())
    return [home / ".gemini" / "tmp"]


FORMAT = Format(NAME, "Gemini CLI", (".json", ".jsonl"), sniff, groups, parse, locations)
