"""The shape of a message (an AI SDK ``UIMessage``) and the checks the write door and reads run.

The write door runs :func:`check_message` with ``full=True``: the structural shape of every
part and tool state, each tool's input and output JSON Schema from the registry, and the
metadata schema of the message's role. A read runs :func:`readable_part` on each stored part:
the cheap checks only (shape, retired tools, state), never a tool's schema, so an output that
today's schema refuses is still read.

Unknown keys are kept: validation looks, it never rewrites.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from .errors import BadRequest, Invalid
from .registry import Registry

ROLES = ("system", "user", "assistant")
# How deep a message may nest (objects and arrays, the message itself counting 1): a reader adds
# a few levels around a message (a page, an event), and every encoder stops somewhere (orjson at
# 254), so the write door refuses what a read could not send.
MAX_DEPTH = 64
MAX_PARTS = 2_000  # parts in one message (docs/security.md)
NAME_MAX = 256  # code points in a tool name
NOT_IN_NAMES = re.compile("[\x00-\x1f\x7f-\x9f\ufffd]")  # control characters, U+FFFD
TEXT_STATES = ("streaming", "done")
# The version of the checks a read runs (check_shape, readable_part, the depth bound): a message
# the write door stamped with another version is checked again on every read (see
# Transcripts.read_stamp). Change it whenever those checks change.
READ_CHECKS = 1

# What a part must (or may) hold, by type: field -> (required, check).
Check = Callable[[Any], bool]


def is_str(v: Any) -> bool:
    return isinstance(v, str)


def is_obj(v: Any) -> bool:
    return isinstance(v, dict)


def is_bool(v: Any) -> bool:
    return isinstance(v, bool)


def any_value(v: Any) -> bool:
    return True


def is_parts(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(p, dict) and p.get("type") in ("text", "file") for p in v)


def is_text_state(v: Any) -> bool:
    return v in TEXT_STATES


EXPECTED: dict[Check, str] = {
    is_str: "a string",
    is_obj: "an object",
    is_bool: "true or false",
    is_text_state: "'streaming' or 'done'",
    is_parts: "an array of text and file parts",
}

PARTS: dict[str, Mapping[str, tuple[bool, Check]]] = {
    "text": {"text": (True, is_str), "state": (False, is_text_state), "providerMetadata": (False, is_obj)},
    "reasoning": {
        "text": (True, is_str),
        "id": (False, is_str),
        "state": (False, is_text_state),
        "providerMetadata": (False, is_obj),
    },
    "source-url": {
        "sourceId": (True, is_str),
        "url": (True, is_str),
        "title": (False, is_str),
        "providerMetadata": (False, is_obj),
    },
    "source-document": {
        "sourceId": (True, is_str),
        "mediaType": (True, is_str),
        "title": (True, is_str),
        "filename": (False, is_str),
        "providerMetadata": (False, is_obj),
    },
    "file": {
        "mediaType": (True, is_str),
        "url": (True, is_str),
        "filename": (False, is_str),
        "providerReference": (False, is_obj),
        "providerMetadata": (False, is_obj),
    },
    "reasoning-file": {"mediaType": (True, is_str), "url": (True, is_str), "providerMetadata": (False, is_obj)},
    "custom": {"kind": (True, is_str), "providerMetadata": (False, is_obj)},
    "step-start": {},
    # A message the user sent while the agent ran (AI SDK 7): its own text and file parts.
    "steering-message": {"id": (True, is_str), "parts": (True, is_parts)},
}

DATA_PART: Mapping[str, tuple[bool, Check]] = {"id": (False, is_str), "data": (True, any_value)}

TOOL_COMMON: dict[str, tuple[bool, Check]] = {
    "toolCallId": (True, is_str),
    "title": (False, is_str),
    "toolMetadata": (False, is_obj),
    "providerExecuted": (False, is_bool),
    "callProviderMetadata": (False, is_obj),
    "resultProviderMetadata": (False, is_obj),
}

# Tool states: which of input / output / errorText / approval each must, may or must not hold.
# "req" required, "opt" optional, absent from the row: must not be there.
# As the AI SDK's own schema (validateUIMessages) has them, intermediate states included: an input
# still streaming carries its raw text so far (``rawInput``, a string, set by every
# ``tool-input-delta`` of AI SDK 5 to 7); ``input`` and ``output`` may be any value, but must be there.
TOOL_STATES: dict[str, dict[str, str]] = {
    "input-streaming": {"input": "opt", "rawInput": "opt"},
    "input-available": {"input": "req"},
    "approval-requested": {"input": "req", "approval": "req"},
    "approval-responded": {"input": "req", "approval": "req"},
    "output-available": {"input": "req", "output": "req", "approval": "opt", "preliminary": "opt"},
    "output-error": {"input": "opt", "errorText": "req", "approval": "opt", "rawInput": "opt"},
    "output-denied": {"input": "req", "approval": "req"},
}
INPUT_ENCODINGS = ("json", "text")  # a streaming input's `inputEncoding`: JSON (the default) or plain text
STATE_FIELDS = ("input", "output", "errorText", "approval", "preliminary", "rawInput")
# States whose input is complete, so the tool's input schema applies.
INPUT_CHECKED = ("input-available", "approval-requested", "approval-responded", "output-available", "output-denied")


def tool_name(part: dict[str, Any]) -> str | None:
    """The tool a part calls (``tool-NAME``, or a ``dynamic-tool``'s ``toolName``), or ``None``."""
    kind = part.get("type")
    if kind == "dynamic-tool":
        name = part.get("toolName")
        return name if isinstance(name, str) else None
    if isinstance(kind, str) and kind.startswith("tool-"):
        return kind[5:]
    return None


# The outcome Foldline gives a tool call that never returned (a turn's end, an idle imported session):
# an error whose outcome is unknown, marked as such in a field the panel reads.
TURN_ENDED = "the turn ended before this tool returned; its outcome is unknown"
UNKNOWN_OUTCOME = {"outcome": "unknown"}


def set_unknown_outcome(part: dict[str, Any]) -> None:
    """Close an open tool call in place: ``output-error`` with :data:`TURN_ENDED`, and
    ``resultProviderMetadata.foldline.outcome == "unknown"`` so a reader need not compare text."""
    part["state"] = "output-error"
    part["errorText"] = TURN_ENDED
    meta = part.get("resultProviderMetadata")
    part["resultProviderMetadata"] = {**(meta if isinstance(meta, dict) else {}), "foldline": dict(UNKNOWN_OUTCOME)}


OPEN_STATES = ("input-streaming", "input-available", "approval-requested", "approval-responded")


def close_open_tools(parts: list[dict[str, Any]]) -> list[int]:
    """Give each open tool part the unknown outcome, in place; return their indexes."""
    ended = []
    for index, part in enumerate(parts):
        if tool_name(part) is not None and part.get("state") in OPEN_STATES:
            ended.append(index)
            set_unknown_outcome(part)
            if not (isinstance(part.get("approval"), dict) and part["approval"].get("approved") is True):
                part.pop("approval", None)
    return ended


def fail(where: str, message: str) -> Invalid:
    return Invalid(message, where=where)


def check_fields(part: dict[str, Any], spec: Mapping[str, tuple[bool, Check]], where: str) -> None:
    for name, (required, check) in spec.items():
        if name not in part:
            if required:
                raise fail(f"{where}.{name}", f"'{name}' is required")
        elif not check(part[name]):
            raise fail(f"{where}.{name}", f"'{name}' must be {EXPECTED.get(check, 'of another type')}")


def check_approval(state: str, approval: Any, where: str) -> None:
    where = f"{where}.approval"
    if not isinstance(approval, dict) or not isinstance(approval.get("id"), str):
        raise fail(where, "approval must be an object with a string 'id'")
    approved = approval.get("approved")
    if state == "approval-requested" and "approved" in approval:
        raise fail(where, "a requested approval has no answer yet")
    if state == "approval-responded" and not isinstance(approved, bool):
        raise fail(where, "a responded approval needs 'approved' true or false")
    if state in ("output-available", "output-error") and approved is not True:
        raise fail(where, "an executed tool's approval must be approved")
    if state == "output-denied" and approved is not False:
        raise fail(where, "a denied tool's approval must have 'approved': false")


def is_name(value: Any) -> bool:
    """A tool name: 1 to 256 code points, no control characters and no U+FFFD."""
    return isinstance(value, str) and 0 < len(value) <= NAME_MAX and NOT_IN_NAMES.search(value) is None


def check_tool_part(part: dict[str, Any], where: str) -> None:
    check_fields(part, TOOL_COMMON, where)
    if part["type"] == "dynamic-tool":
        if not is_name(part.get("toolName")):
            raise fail(f"{where}.toolName", "a dynamic tool needs a 'toolName' of 1 to 256 printable characters")
    elif not is_name(part["type"][5:]):
        raise fail(f"{where}.type", "a tool's name is 1 to 256 printable characters")
    state = part.get("state")
    allowed = TOOL_STATES.get(state) if isinstance(state, str) else None
    if allowed is None:
        raise fail(f"{where}.state", "unknown tool state")
    for name in STATE_FIELDS:
        rule = allowed.get(name)
        if rule is None and name in part:
            raise fail(f"{where}.{name}", f"'{name}' is not allowed in state {state}")
        if rule == "req" and name not in part:
            raise fail(f"{where}.{name}", f"'{name}' is required in state {state}")
    if state == "output-error" and not isinstance(part["errorText"], str):
        raise fail(f"{where}.errorText", "'errorText' must be a string")
    if "preliminary" in part and not isinstance(part["preliminary"], bool):
        raise fail(f"{where}.preliminary", "'preliminary' must be true or false")
    if state == "input-streaming" and "rawInput" in part and not isinstance(part["rawInput"], str):
        raise fail(f"{where}.rawInput", "'rawInput' of a streaming input must be a string")
    if state == "input-streaming" and "inputEncoding" in part and part["inputEncoding"] not in INPUT_ENCODINGS:
        raise fail(f"{where}.inputEncoding", "'inputEncoding' must be 'json' or 'text'")
    if "approval" in part:
        check_approval(str(state), part["approval"], where)


def check_shape(part: Any, where: str) -> None:
    """The structural pass for one part."""
    if not isinstance(part, dict):
        raise fail(where, "a part must be an object")
    kind = part.get("type")
    if not isinstance(kind, str):
        raise fail(f"{where}.type", "a part needs a string 'type'")
    if kind == "dynamic-tool" or (kind.startswith("tool-") and len(kind) > 5):
        check_tool_part(part, where)
    elif kind.startswith("data-") and len(kind) > 5:
        check_fields(part, DATA_PART, where)
    elif kind in PARTS:
        check_fields(part, PARTS[kind], where)
    else:
        raise fail(f"{where}.type", "unknown part type")


def check_schema(validator: Any, value: Any, where: str, what: str) -> None:
    if validator is None:
        return
    error = next(iter(validator.iter_errors(value)), None)
    if error is not None:
        path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
        # Only the schema's complaint, never the offending value.
        raise fail(f"{where}{path}", f"{what} does not match its schema ({error.validator})")


def check_tool_schemas(part: dict[str, Any], where: str, registry: Registry) -> None:
    if part["type"] == "dynamic-tool":
        return  # dynamic tools carry no schema (as in the AI SDK)
    name = part["type"][5:]
    tool = registry.tool(name)
    if tool is None:
        raise fail(f"{where}.type", "unknown tool; add it to the registry or send it as a dynamic-tool part")
    if tool.retired:
        raise fail(f"{where}.type", "this tool is retired")
    state = part["state"]
    if state in INPUT_CHECKED:
        check_schema(tool.input_validator, part["input"], f"{where}.input", "input")
    if state == "output-available":
        check_schema(tool.output_validator, part["output"], f"{where}.output", "output")


def check_message(message: Any, registry: Registry, message_id: str | None = None) -> dict[str, Any]:
    """The write door's full validation. Returns the message as stored (nothing stripped)."""
    if not isinstance(message, dict):
        raise fail("", "a message must be a JSON object")
    too_deep = deeper_than(message, MAX_DEPTH)
    if too_deep is not None:
        raise BadRequest(f"the message nests deeper than {MAX_DEPTH} levels", where=too_deep)
    found = canonical(message.get("id", message_id))
    if found is None:
        raise fail("id", "'id' must be a UUID")
    if message_id is not None and found != message_id:
        raise fail("id", "the message id must match the id in the path")
    message = {**message, "id": found}
    role = message.get("role")
    if role not in ROLES:
        raise fail("role", "'role' must be system, user or assistant")
    parts = message.get("parts")
    if not isinstance(parts, list):
        raise fail("parts", "'parts' must be an array")
    if not parts and role != "assistant":
        raise fail("parts", "a user or system message needs at least one part")
    if len(parts) > MAX_PARTS:
        raise fail("parts", f"a message holds at most {MAX_PARTS} parts")
    if "metadata" in message:
        check_schema(registry.metadata_validators.get(role), message["metadata"], "metadata", "metadata")
    for index, part in enumerate(parts):
        where = f"parts[{index}]"
        check_shape(part, where)
        if tool_name(part) is not None:
            check_tool_schemas(part, where, registry)
    checked: dict[str, Any] = message
    return checked


# A JSON integer literal long enough to fall outside 64 bits (a digit run inside a string matches
# too; such a body only takes the slow, exact look below).
LONG_INTEGER = re.compile(rb"-?\d{19,}")
INT_RANGE = (-(2**63), 2**64 - 1)  # what orjson keeps as an integer; past it, it would make a float


def inexact_integer(raw: bytes) -> str | None:
    """Where a body holds an integer that would not come back as sent (past 64 bits), or ``None``.

    orjson reads such an integer as a float (``123456789012345678901234567890`` would come back
    as ``1.2345678901234568e+29``), so the write door refuses it rather than change it."""
    if LONG_INTEGER.search(raw) is None:
        return None
    import json  # the exact reader, for the rare body that needs it

    found: list[int] = []

    def integer(text: str) -> int:
        value = int(text)
        if not INT_RANGE[0] <= value <= INT_RANGE[1]:
            found.append(value)
        return value

    try:
        value = json.loads(raw, parse_int=integer)
    except (ValueError, RecursionError):
        return None  # not JSON, or too deep: the decoder and the depth check say so
    return _path_to(value, found[0]) if found else None


def _path_to(value: Any, target: int) -> str:
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        node, where = stack.pop()
        if isinstance(node, int) and not isinstance(node, bool) and node == target:
            return where or "."
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, child in items:
            stack.append((child, f"{where}[{key}]" if isinstance(key, int) else (f"{where}.{key}" if where else key)))
    return "."


def deeper_than(value: Any, limit: int) -> str | None:
    """Where ``value`` first nests past ``limit`` levels (``parts[0].output.a[3]``), or ``None``.

    Iterative, so a value nested thousands deep is measured without recursion; the path is
    worked out only for a value that is too deep."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        children = node.values() if isinstance(node, dict) else node
        if depth > limit:
            return _path_past(value, limit)
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return None


def _path_past(value: Any, limit: int) -> str:
    """The path to the first container past ``limit`` levels (only run for a value that has one)."""
    stack: list[tuple[Any, int, str]] = [(value, 1, "")]
    while stack:
        node, depth, where = stack.pop()
        if depth > limit:
            return where[:200]
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, child in items:
            if isinstance(child, dict | list):
                path = f"{where}[{key}]" if isinstance(key, int) else (f"{where}.{key}" if where else str(key))
                stack.append((child, depth + 1, path))
    return ""


def readable_part(part: Any, registry: Registry) -> bool:
    """The read's cheap checks on one stored part: its shape and state, nesting a reader can send
    (a part sits two levels into its message), and a tool not retired."""
    try:
        check_shape(part, "")
    except Invalid:
        return False
    if deeper_than(part, MAX_DEPTH - 2) is not None:
        return False
    name = tool_name(part)
    return name is None or part["type"] == "dynamic-tool" or not registry.retired(name)


def readable_metadata(message: dict[str, Any], registry: Registry) -> bool:
    role = message.get("role")
    validator = registry.metadata_validators.get(role) if isinstance(role, str) else None
    return "metadata" not in message or validator is None or validator.is_valid(message["metadata"])


def canonical(value: Any) -> str | None:
    """``value`` as a lowercase canonical UUID (8-4-4-4-12 hex digits, any case), or ``None``.

    UUIDs are compared without regard to case, so ``8C24…`` and ``8c24…`` name one message.
    """
    if not isinstance(value, str) or len(value) != 36:
        return None
    try:
        found = str(uuid.UUID(value))
    except ValueError:
        return None
    return found if found == value.lower() else None


def is_uuid(value: Any) -> bool:
    return canonical(value) is not None
