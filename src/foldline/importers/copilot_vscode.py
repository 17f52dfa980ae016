"""Copilot Chat in VS Code (``<User>/workspaceStorage/<hash>/chatSessions/<id>.json[l]``) as Foldline messages.

Two shapes, told from the content: the session document (``version: 3``, rewritten whole) and
the newer JSONL operation log, replayed into that document: ``kind`` 0 is the whole session,
1 sets the value at the key path ``k``, 2 appends ``v``'s items to the array at ``k`` (from
index ``i`` when given), 3 deletes at ``k``. When both files of a session are there, the
``.jsonl`` is read.

Each request is one turn: a user message (``message.text``, inline images of
``variableData.variables``), then an assistant message per model round of
``result.metadata.toolCallRounds`` (its ``response`` text, its ``thinking``, its ``toolCalls``
with their results from ``toolCallResults``, whose prompt-tsx tree is read as text). A request
without rounds (an older or cancelled one) answers with the markdown of its ``response[]``.
Message ids derive from ``requestId`` and the round's ``id``, so a rewritten session writes
only what changed. There are no token counts; ``modelId`` is the model.
"""

from __future__ import annotations

import os
import re
import sys
import uuid
from pathlib import Path
from typing import Any

import orjson

from ..registry import Registry
from .document import ms_time, read_document
from .formats import Finding, Format, Group, Head
from .jsonl import read_lines
from .session import Conversation, Json, Session, is_idle, set_output, settle_conversation, short_title, tool_part

NAME = "copilot-vscode"
DOCUMENT = re.compile(rb'^\s*\{\s*"version"\s*:\s*\d+\s*,')


# -- reading the session -------------------------------------------------------------------


def replay(path: Path) -> Json | None:
    """The session a JSONL operation log leaves, applied in order."""
    doc: Any = None
    for op in read_lines(path):
        kind, keys = op.get("kind"), op.get("k")
        if kind == 0:
            doc = op.get("v")
        elif isinstance(keys, list) and keys and doc is not None:
            apply(doc, kind, keys, op)
    return doc if isinstance(doc, dict) else None


def apply(doc: Any, kind: Any, keys: list[Any], op: Json) -> None:
    target = doc
    for key in keys[:-1]:
        target = step(target, key)
        if target is None:
            return
    last = keys[-1]
    if kind == 1 and settable(target, last):
        target[last] = op.get("v")
    elif kind == 2:
        found = step(target, last)
        if found is None and isinstance(target, dict):
            found = target[last] = []
        if isinstance(found, list) and isinstance(op.get("v"), list):
            if isinstance(op.get("i"), int):
                del found[op["i"] :]
            found.extend(op["v"])
    elif kind == 3 and isinstance(target, dict):
        target.pop(last, None)
    elif kind == 3 and isinstance(target, list) and isinstance(last, int) and 0 <= last < len(target):
        del target[last]


def step(target: Any, key: Any) -> Any:
    if isinstance(target, dict) and isinstance(key, str):
        return target.get(key)
    if isinstance(target, list) and isinstance(key, int) and 0 <= key < len(target):
        return target[key]
    return None


def settable(target: Any, key: Any) -> bool:
    return isinstance(target, dict) and isinstance(key, str) or (
        isinstance(target, list) and isinstance(key, int) and 0 <= key < len(target)
    )


def load(path: Path) -> Json | None:
    if not DOCUMENT.match(Head(path).data):
        return replay(path)
    doc = read_document(path)
    return doc if isinstance(doc, dict) else None


# -- messages ------------------------------------------------------------------------------


def tree_text(node: Any) -> str:
    """The text of a serialized prompt-tsx result: its text nodes in order, a node marked
    ``lineBreakBefore`` on a line of its own."""
    out: list[str] = []
    collect(node, out)
    return "".join(out)


def collect(node: Any, out: list[str]) -> None:
    if isinstance(node, str):
        out.append(node)
    elif isinstance(node, list):
        for child in node:
            collect(child, out)
    elif isinstance(node, dict):
        text = node.get("text") if isinstance(node.get("text"), str) else node.get("value")
        if isinstance(text, str):
            if node.get("lineBreakBefore") and out and not out[-1].endswith("\n"):
                out.append("\n")
            out.append(text)
            return
        for key in ("content", "value", "node", "children"):
            collect(node.get(key), out)


def arguments(raw: Any) -> Any:
    if isinstance(raw, str):
        try:
            parsed = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return {"arguments": raw}
        return parsed if isinstance(parsed, dict) else {"arguments": parsed}
    return raw if isinstance(raw, dict) else {}


def image_part(variable: Any) -> Json | None:
    """An attached image, when the session holds it inline (a ``data:`` URL or base64 with a type)."""
    if not isinstance(variable, dict):
        return None
    value = variable.get("value")
    if isinstance(value, str) and value.startswith("data:"):
        return {"type": "file", "mediaType": value[5:].split(";", 1)[0], "url": value}
    if isinstance(value, dict) and isinstance(value.get("data"), str) and isinstance(value.get("mimeType"), str):
        media = value["mimeType"]
        return {"type": "file", "mediaType": media, "url": f"data:{media};base64,{value['data']}"}
    return None


def response_parts(response: Any, registry: Registry) -> list[Json]:
    """The parts of a ``response[]`` (for a request without rounds): its markdown as text, each
    ``toolInvocationSerialized`` as a tool part (what the UI said it did; the call's arguments are
    not kept there), in their order."""
    parts: list[Json] = []
    texts: list[str] = []
    for item in response if isinstance(response, list) else []:
        if not isinstance(item, dict):
            continue
        if item.get("kind") in (None, "markdownContent"):
            value = item.get("value") if item.get("kind") is None else item.get("content")
            value = value.get("value") if isinstance(value, dict) else value
            texts += [value] if isinstance(value, str) else []
        elif item.get("kind") == "toolInvocationSerialized" and isinstance(item.get("toolCallId"), str):
            flush(texts, parts)
            parts.append(invocation_part(item, registry))
    flush(texts, parts)
    return parts


def flush(texts: list[str], parts: list[Json]) -> None:
    text = "".join(texts)
    if text.strip():
        parts.append({"type": "text", "text": text, "state": "done"})
    texts.clear()


def invocation_part(item: Json, registry: Registry) -> Json:
    said = {key: markdown_value(item.get(key)) for key in ("invocationMessage", "pastTenseMessage")}
    part = tool_part(registry, str(item.get("toolId") or "unknown"), item["toolCallId"],
                     {k: v for k, v in said.items() if v is not None})  # fmt: skip
    if item.get("isComplete"):
        set_output(part, said["pastTenseMessage"] or "")
    return part


def markdown_value(value: Any) -> str | None:
    value = value.get("value") if isinstance(value, dict) else value
    return value if isinstance(value, str) else None


def obj(d: Json, key: str) -> Json:
    found = d.get(key)
    return found if isinstance(found, dict) else {}


def request_messages(conv: Conversation, request: Json, registry: Registry) -> str | None:
    """One request: the prompt, then the model's rounds. Returns the prompt's text."""
    rid = str(request.get("requestId") or f"request-{len(conv.messages)}")
    stamp = ms_time(request.get("timestamp"))
    conv.saw(stamp)
    meta: Json = {"source": NAME, "lineType": "request"}
    if stamp:
        meta["timestamp"] = stamp
    text = prompt_message(conv, rid, request, meta)
    answer_meta = {**meta, "lineType": "response"}
    if isinstance(request.get("modelId"), str):
        answer_meta["model"] = request["modelId"]
    if request.get("isCanceled"):
        answer_meta["canceled"] = True
    answers(conv, rid, request, answer_meta, registry)
    elapsed = obj(obj(request, "result"), "timings").get("totalElapsed")
    if isinstance(request.get("timestamp"), int | float) and isinstance(elapsed, int | float):
        conv.saw(ms_time(request["timestamp"] + elapsed))
    return text


def prompt_message(conv: Conversation, rid: str, request: Json, meta: Json) -> str | None:
    body = request.get("message")
    text = body.get("text") if isinstance(body, dict) else None
    prompt, _ = conv.message(f"u:{rid}", "user", dict(meta))
    prompt["parts"] = [{"type": "text", "text": text, "state": "done"}] if isinstance(text, str) and text else []
    variables = obj(request, "variableData").get("variables")
    for variable in variables if isinstance(variables, list) else []:
        part = image_part(variable)
        if part is not None:
            prompt["parts"].append(part)
    return text if isinstance(text, str) and text.strip() else None


def answers(conv: Conversation, rid: str, request: Json, meta: Json, registry: Registry) -> None:
    """The model's rounds of a request, or (without rounds) the markdown of its response."""
    metadata = obj(obj(request, "result"), "metadata")
    rounds = metadata.get("toolCallRounds")
    if isinstance(rounds, list) and rounds:
        results = obj(metadata, "toolCallResults")
        for index, found in enumerate(rounds):
            if isinstance(found, dict):
                add_round(conv, f"a:{rid}:{found.get('id') or index}", found, meta, results, registry)
        return
    message, _ = conv.message(f"a:{rid}", "assistant", dict(meta))
    message["parts"] = response_parts(request.get("response"), registry)


def add_round(conv: Conversation, key: str, found: Json, meta: Json, results: Json, registry: Registry) -> None:
    """One model round as an assistant message, at the time it began (newer sessions give it)."""
    started = ms_time(found.get("timestamp"))
    conv.saw(started)
    message, _ = conv.message(key, "assistant", {**meta, "timestamp": started} if started else dict(meta))
    message["parts"] = round_parts(found, results, registry)


def round_parts(found: Json, results: Json, registry: Registry) -> list[Json]:
    parts: list[Json] = []
    thinking = found.get("thinking")
    thought = thinking.get("text") if isinstance(thinking, dict) else thinking
    if isinstance(thought, list):
        thought = "".join(t for t in thought if isinstance(t, str))
    if isinstance(thought, str) and thought.strip():
        parts.append({"type": "reasoning", "text": thought, "state": "done"})
    if isinstance(found.get("response"), str) and found["response"]:
        parts.append({"type": "text", "text": found["response"], "state": "done"})
    calls = found.get("toolCalls")
    for call in calls if isinstance(calls, list) else []:
        if not isinstance(call, dict) or not isinstance(call.get("id"), str):
            continue
        part = tool_part(registry, str(call.get("name") or "unknown"), call["id"], arguments(call.get("arguments")))
        if call["id"] in results:
            set_output(part, tree_text(results[call["id"]]))
        parts.append(part)
    return parts


def parse(group: Group, registry: Registry, namespace: uuid.UUID) -> Session:
    doc = load(group.main) or {}
    conv = Conversation(namespace, idle=is_idle(group.main))
    conv.saw(ms_time(doc.get("creationDate")))
    first = None
    requests = doc.get("requests")
    for request in requests if isinstance(requests, list) else []:
        if isinstance(request, dict):
            text = request_messages(conv, request, registry)
            first = first or text
    title = doc.get("customTitle") if isinstance(doc.get("customTitle"), str) and doc["customTitle"].strip() else first
    conv.title = short_title(title) if title else None
    settle_conversation(conv, registry)
    return Session(str(group.main), NAME, group.session_id, conv, files=[str(group.main)])


# -- finding sessions ----------------------------------------------------------------------


def sniff(head: Head) -> bool:
    if DOCUMENT.match(head.data):
        named = b'"responderUsername"' in head.data or b'"requesterUsername"' in head.data
        return named and b'"requests"' in head.data
    if not head.data.lstrip().startswith(b'{"kind"'):  # the log's first line is the snapshot
        return False
    first = head.lines[0] if head.lines else {}
    return first.get("kind") == 0 and isinstance(first.get("v"), dict) and isinstance(first["v"].get("requests"), list)


def groups(head: Head, finding: Finding) -> None:
    path = head.path
    if path.suffix == ".json" and path.with_suffix(".jsonl").is_file():
        return  # the operation log that replaced it is read instead
    first = head.lines[0] if head.lines and not DOCUMENT.match(head.data) else {}
    found = first.get("v", {}).get("sessionId") if isinstance(first.get("v"), dict) else None
    # a document's own id comes after its requests (and they name other ids): its file is named by it
    finding.add(Group(NAME, path, found if isinstance(found, str) and found else path.stem))


def locations() -> list[Path]:
    """Each workspace's ``chatSessions`` folder (only those there now: the rest of
    ``workspaceStorage`` is other extensions' files) and the folders of windows without one."""
    found = []
    for user in user_folders():
        found += sorted((user / "workspaceStorage").glob("*/chatSessions"))
        found += [user / "globalStorage" / name for name in ("emptyWindowChatSessions", "transferredChatSessions")]
    return found


def user_folders() -> list[Path]:
    home = Path.home()
    if sys.platform == "darwin":
        base = home / "Library" / "Application Support"
    elif sys.platform == "win32":
        base = Path(os.environ.get("APPDATA") or home / "AppData" / "Roaming")
    else:
        base = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")
    return [base / product / "User" for product in ("Code", "Code - Insiders", "VSCodium")]


FORMAT = Format(NAME, "Copilot Chat (VS Code)", (".json", ".jsonl"), sniff, groups, parse, locations)
