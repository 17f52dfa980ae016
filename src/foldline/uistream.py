"""The AI SDK's UI message stream: its ``data:`` events read, each chunk checked, and the assistant
message assembled from them exactly as the SDK's own ``readUIMessageStream`` assembles it.

:class:`Events` reads server-sent events from the body as it arrives (``data: {chunk}`` and the
closing ``data: [DONE]``; comments and other fields are skipped, as a browser skips them).
:func:`check_chunk` is the SDK's chunk schema (``uiMessageChunkSchema``: extra keys allowed).
:class:`Assembly` holds the message and the SDK's streaming state (the open text and reasoning
parts, the tool calls whose input streams) and applies one chunk at a time; each application
says how urgently the new state wants storing (:class:`Urgency`): a delta can wait, a part's end
cannot. What the SDK leaves ``undefined`` is no key at all here (:data:`ABSENT`), so the parts
are what ``JSON.stringify`` makes of the SDK's.

Deltas are not joined one by one: a streaming text keeps its pieces and a streaming tool input its
raw text, and both are put into the part only when the state is taken (:meth:`Assembly.snapshot`)
or another chunk needs them; so a long text costs linear time, and a long tool input is read as
partial JSON once per stored state rather than once per delta (as the SDK does).

Storage-free: the service writes what :meth:`Assembly.snapshot` gives through the write door.
"""

from __future__ import annotations

import codecs
import copy
import enum
from collections.abc import Callable, Iterator
from typing import Any

import orjson

from .errors import BadRequest, PayloadTooLarge
from .message import close_open_tools, inexact_integer
from .partialjson import ABSENT, read_partial

Json = dict[str, Any]
DONE = "[DONE]"
FINISH_REASONS = ("stop", "length", "content-filter", "tool-calls", "error", "interrupted", "other", "unknown")


class Urgency(enum.IntEnum):
    """How much a chunk's new state wants storing: not at all, within the coalescing window, now."""

    NONE = 0
    LATER = 1
    NOW = 2


# -- the wire: server-sent events -------------------------------------------------------------


class Events:
    """Server-sent events read from bytes as they come: each complete event's data, in order.

    Lines end in LF, CRLF or CR; an event ends at a blank line; its ``data:`` lines are joined
    by LF (one leading space dropped); other fields and ``:`` comments are skipped. An event
    still open when the body ends is dropped, as a browser drops it (the client went away
    mid-line). ``limit`` bounds one event's data, in bytes of UTF-8."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.decoder = codecs.getincrementaldecoder("utf-8")()
        self.line = ""  # the current line, not ended yet
        self.data: list[str] | None = None  # the open event's data lines
        self.size = 0
        self.count = 0  # events given so far (the next one's index)
        self.cr = False  # the last character seen was CR (a LF right after it ends nothing)

    def feed(self, raw: bytes) -> Iterator[str]:
        try:
            text = self.decoder.decode(raw)
        except UnicodeDecodeError as bad:
            # The events before the bad byte are given first, so the refusal names its event.
            self.decoder.reset()
            yield from self.lines(raw[: bad.start].decode("utf-8", errors="ignore"))
            raise BadRequest("the stream is not UTF-8", where=f"chunks[{self.count}]") from None
        yield from self.lines(text)

    def lines(self, text: str) -> Iterator[str]:
        start = 0
        for at, char in enumerate(text):
            if char not in "\r\n":
                continue
            if char == "\n" and self.cr and at == start:
                self.cr = False
                start = at + 1
                continue
            self.cr = char == "\r"
            yield from self.line_ended(self.line + text[start:at])
            self.line, start = "", at + 1
        if start < len(text):
            self.cr = False
            self.line += text[start:]
            if len(self.line) > self.limit:
                raise PayloadTooLarge(f"a chunk is over the limit of {self.limit} bytes", where=f"chunks[{self.count}]")

    def line_ended(self, line: str) -> Iterator[str]:
        if line == "":
            if self.data is not None:
                data, self.data, self.size = "\n".join(self.data), None, 0
                self.count += 1
                yield data
            return
        if line.startswith(":"):
            return
        name, colon, value = line.partition(":")
        if name != "data":
            return
        value = value[1:] if colon and value.startswith(" ") else value
        self.size += len(value.encode())
        if self.size > self.limit:
            raise PayloadTooLarge(f"a chunk is over the limit of {self.limit} bytes", where=f"chunks[{self.count}]")
        self.data = [*(self.data or []), value]


def decode_chunk(data: str, index: int) -> Json:
    """One event's data as a chunk (checked), or a 400 naming it."""
    where = f"chunks[{index}]"
    try:
        chunk = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise BadRequest(f"a chunk is not valid JSON: {exc.msg}", where=where) from None
    check_chunk(chunk, where)
    inexact = inexact_integer(data.encode())
    if inexact is not None:
        raise BadRequest("an integer past 64 bits would not be kept exactly; send it as a string",
                         where=f"{where}.{inexact}")  # fmt: skip
    checked: Json = chunk
    return checked


# -- the chunks' shape (uiMessageChunkSchema) -------------------------------------------------

Check = Callable[[Any], bool]
Fields = dict[str, tuple[bool, Check]]


def is_str(v: Any) -> bool:
    return isinstance(v, str)


def is_bool(v: Any) -> bool:
    return isinstance(v, bool)


def is_obj(v: Any) -> bool:
    return isinstance(v, dict)


def is_records(v: Any) -> bool:  # providerMetadata: provider -> record
    return isinstance(v, dict) and all(isinstance(x, dict) for x in v.values())


def is_list_of_obj(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(x, dict) for x in v)


def any_value(v: Any) -> bool:
    return True


def is_encoding(v: Any) -> bool:
    return v in ("json", "text")


def is_finish_reason(v: Any) -> bool:
    return v in FINISH_REASONS


EXPECTED: dict[Check, str] = {
    is_str: "a string", is_bool: "true or false", is_obj: "an object", is_records: "an object of objects",
    is_list_of_obj: "an array of objects", is_encoding: "'json' or 'text'",
    is_finish_reason: "one of " + ", ".join(FINISH_REASONS),
}  # fmt: skip

PM: Fields = {"providerMetadata": (False, is_records)}
TOOL_CALL: Fields = {
    "toolCallId": (True, is_str), "toolName": (True, is_str), "providerExecuted": (False, is_bool),
    **PM, "toolMetadata": (False, is_obj), "dynamic": (False, is_bool), "title": (False, is_str),
}  # fmt: skip
TOOL_RESULT: Fields = {
    "toolCallId": (True, is_str), "providerExecuted": (False, is_bool), **PM,
    "toolMetadata": (False, is_obj), "dynamic": (False, is_bool),
}  # fmt: skip
BLOCK: Fields = {"id": (True, is_str), **PM}
DELTA: Fields = {**BLOCK, "delta": (True, is_str)}
CHUNKS: dict[str, Fields] = {
    "text-start": BLOCK,
    "text-delta": DELTA,
    "text-end": {**BLOCK, "citations": (False, is_list_of_obj)},
    "reasoning-start": BLOCK,
    "reasoning-delta": DELTA,
    "reasoning-end": BLOCK,
    "error": {"errorText": (True, is_str)},
    "tool-input-start": {**TOOL_CALL, "inputEncoding": (False, is_encoding)},
    "tool-input-delta": {"toolCallId": (True, is_str), "inputTextDelta": (True, is_str)},
    "tool-input-available": {**TOOL_CALL, "input": (False, any_value)},
    "tool-input-error": {**TOOL_CALL, "input": (False, any_value), "errorText": (True, is_str)},
    "tool-approval-request": {
        "approvalId": (True, is_str),
        "toolCallId": (True, is_str),
        "reason": (False, is_str),
        "isAutomatic": (False, is_bool),
        "signature": (False, is_str),
    },  # fmt: skip
    "tool-approval-response": {
        "approvalId": (True, is_str),
        "approved": (True, is_bool),
        "reason": (False, is_str),
        "providerExecuted": (False, is_bool),
        **PM,
    },  # fmt: skip
    "tool-output-available": {**TOOL_RESULT, "output": (False, any_value), "preliminary": (False, is_bool)},
    "tool-output-error": {**TOOL_RESULT, "errorText": (True, is_str)},
    "tool-output-denied": {"toolCallId": (True, is_str)},
    "custom": {"kind": (True, is_str), **PM},
    "source-url": {"sourceId": (True, is_str), "url": (True, is_str), "title": (False, is_str), **PM},
    "source-document": {
        "sourceId": (True, is_str),
        "mediaType": (True, is_str),
        "title": (True, is_str),
        "filename": (False, is_str),
        **PM,
    },  # fmt: skip
    "file": {"url": (True, is_str), "mediaType": (True, is_str), **PM},
    "reasoning-file": {"url": (True, is_str), "mediaType": (True, is_str), **PM},
    "steering-message": {"id": (True, is_str), "parts": (True, is_list_of_obj)},
    "start-step": {},
    "finish-step": {},
    "reset-step": {},
    "start": {"messageId": (False, is_str)},
    "finish": {"finishReason": (False, is_finish_reason)},
    "abort": {"reason": (False, is_str)},
    "message-metadata": {},
}
DATA_CHUNK: Fields = {"id": (False, is_str), "transient": (False, is_bool)}


def check_chunk(chunk: Any, where: str) -> None:
    """The SDK's chunk schema: a known type and its fields' types (other keys are allowed)."""
    if not isinstance(chunk, dict):
        raise BadRequest("a chunk must be a JSON object", where=where)
    kind = chunk.get("type")
    if not isinstance(kind, str):
        raise BadRequest("a chunk needs a string 'type'", where=f"{where}.type")
    spec = DATA_CHUNK if kind.startswith("data-") else CHUNKS.get(kind)
    if spec is None:
        raise BadRequest("unknown chunk type", where=f"{where}.type")
    for name, (required, check) in spec.items():
        if name not in chunk:
            if required:
                raise BadRequest(f"'{name}' is required", where=f"{where}.{name}")
        elif not check(chunk[name]):
            raise BadRequest(f"'{name}' must be {EXPECTED.get(check, 'of another type')}", where=f"{where}.{name}")


# -- the assembly (processUIMessageStream) ----------------------------------------------------


def given(chunk: Json, key: str) -> Any:
    """The chunk's value for ``key``, or :data:`ABSENT` (JSON's null is a value, as in the SDK)."""
    return chunk.get(key, ABSENT)


def nullish(value: Any) -> bool:
    return value is ABSENT or value is None


def either(value: Any, fallback: Any) -> Any:
    """JavaScript's ``value ?? fallback``."""
    return fallback if nullish(value) else value


def assign(part: Json, key: str, value: Any) -> None:
    """``part[key] = value``, where an absent value leaves no key."""
    if value is ABSENT:
        part.pop(key, None)
    else:
        part[key] = value


def merged(base: Any, overrides: Any) -> Any:
    """The SDK's ``mergeObjects``: objects merged deeply, anything else replaced."""
    if not isinstance(base, dict) or not isinstance(overrides, dict):
        return overrides
    result = dict(base)
    for key, value in overrides.items():
        if key in ("__proto__", "constructor", "prototype"):
            continue
        result[key] = merged(result[key], value) if isinstance(result.get(key), dict) else value
    return result


def is_static(part: Json) -> bool:
    """A ``tool-{name}`` part (the SDK's ``isStaticToolUIPart``)."""
    kind = part.get("type")
    return isinstance(kind, str) and kind.startswith("tool-")


def is_tool(part: Json) -> bool:
    return is_static(part) or part.get("type") == "dynamic-tool"


class StreamError(BadRequest):
    """A chunk that does not fit the message so far (the SDK's ``UIMessageStreamError``)."""


class Assembly:
    """One assistant message as the SDK assembles it from the stream's chunks."""

    def __init__(self, message_id: str = "", last: Json | None = None) -> None:
        self.restart(message_id, last)

    def restart(self, message_id: str, last: Json | None = None) -> None:
        """Start over on ``message_id``: empty, or going on from ``last`` (a stored assistant
        message of that id), as the SDK's ``createStreamingUIMessageState`` does."""
        self.message: Json = copy.deepcopy(last) if last else {"id": message_id, "role": "assistant", "parts": []}
        self.texts: dict[str, tuple[Json, list[str]]] = {}  # open text parts: part, pieces
        self.thoughts: dict[str, tuple[Json, list[str]]] = {}  # open reasoning parts
        self.calls: dict[str, Json] = {}  # tool calls whose input streams: their raw text's pieces, facts
        self.unread: dict[int, tuple[Json, Json, bool]] = {}  # id(part) -> (part, call, raw kept): not parsed yet
        self.finished = False
        self.where = ""
        self.finish_reason: str | None = None
        parts = self.message["parts"]
        static = 0
        for part in parts[self.step_start() :]:
            if not is_tool(part):
                continue
            index = static
            static += part["type"] != "dynamic-tool"
            if part.get("state") == "input-streaming":
                self.calls[part["toolCallId"]] = {
                    "pieces": [part["rawInput"]] if isinstance(part.get("rawInput"), str) else [],
                    "encoding": part.get("inputEncoding", ABSENT), "index": index,
                    "name": part["toolName"] if part["type"] == "dynamic-tool" else part["type"][5:],
                    "dynamic": part["type"] == "dynamic-tool", "title": part.get("title", ABSENT),
                    "toolMetadata": part.get("toolMetadata", ABSENT),
                }  # fmt: skip

    @property
    def id(self) -> str:
        message_id: str = self.message["id"]
        return message_id

    # -- the state as stored ------------------------------------------------------------------

    def settle(self) -> None:
        """Put the pending deltas into their parts: open texts joined, streaming inputs parsed."""
        for part, pieces in (*self.texts.values(), *self.thoughts.values()):
            if len(pieces) > 1:
                pieces[:] = ["".join(pieces)]
            part["text"] = pieces[0] if pieces else part["text"]
        for part, call, raw in self.unread.values():
            text = raw_text(call)
            assign(part, "input", text if call["encoding"] == "text" else read_partial(text))
            if raw:
                part["rawInput"] = text
        self.unread.clear()

    def snapshot(self) -> Json:
        """The message as it stands (a copy, to store while the stream goes on)."""
        self.settle()
        copied: Json = orjson.loads(orjson.dumps(self.message))
        return copied

    def abandoned(self) -> Json:
        """The message of a stream that ended without ``finish``: what arrived, and every tool
        call still open given the unknown outcome, as the turn-end gives it."""
        message = self.snapshot()
        close_open_tools(message["parts"])
        return message

    # -- one chunk ----------------------------------------------------------------------------

    def apply(self, chunk: Json, where: str) -> Urgency:
        """Apply one checked chunk; how urgently the new state wants storing."""
        kind = chunk["type"]
        if kind not in ("text-delta", "reasoning-delta", "tool-input-delta"):
            self.settle()
        self.where = where
        if kind.startswith("data-"):
            return self.data(chunk)
        handler = HANDLERS[kind]
        return handler(self, chunk)

    def fail(self, message: str, field: str) -> StreamError:
        return StreamError(message, where=f"{self.where}.{field}")

    def step_start(self) -> int:
        """Where the current step's parts begin (after the last ``step-start``)."""
        parts = self.message["parts"]
        for index in range(len(parts) - 1, -1, -1):
            if parts[index].get("type") == "step-start":
                return index + 1
        return 0

    def step_parts(self) -> list[Json]:
        parts: list[Json] = self.message["parts"]
        return parts[self.step_start() :]

    def invocation(self, call_id: str) -> Json:
        """The tool part of ``call_id``: in the current step, else the latest in the message."""
        for part in self.step_parts():
            if is_tool(part) and part.get("toolCallId") == call_id:
                return part
        parts: list[Json] = self.message["parts"]
        for part in reversed(parts):
            if is_tool(part) and part.get("toolCallId") == call_id:
                return part
        raise self.fail("no tool call has this id", "toolCallId")

    def metadata(self, value: Any) -> None:
        if nullish(value):
            return
        current = self.message.get("metadata")
        self.message["metadata"] = value if current is None else merged(current, value)

    # text and reasoning

    def block_start(self, chunk: Json, kind: str, into: dict[str, tuple[Json, list[str]]]) -> Urgency:
        part: Json = {"type": kind}
        if kind == "reasoning":
            part["id"] = chunk["id"]
        part["text"] = ""
        assign(part, "providerMetadata", given(chunk, "providerMetadata"))
        part["state"] = "streaming"
        into[chunk["id"]] = (part, [])
        self.message["parts"].append(part)
        return Urgency.LATER

    def block_delta(self, chunk: Json, into: dict[str, tuple[Json, list[str]]]) -> Urgency:
        found = into.get(chunk["id"])
        if found is None:
            raise self.fail(f"a {chunk['type']} for a part not started (no {chunk['type'][:-6]}-start)", "id")
        part, pieces = found
        pieces.append(chunk["delta"])
        assign(part, "providerMetadata", either(given(chunk, "providerMetadata"), part.get("providerMetadata", ABSENT)))
        return Urgency.LATER

    def block_end(self, chunk: Json, into: dict[str, tuple[Json, list[str]]]) -> Urgency:
        found = into.pop(chunk["id"], None)
        if found is None:
            raise self.fail(f"a {chunk['type']} for a part not started (no {chunk['type'][:-4]}-start)", "id")
        part = found[0]
        part["state"] = "done"
        if not nullish(given(chunk, "citations")):
            part["citations"] = chunk["citations"]
        assign(part, "providerMetadata", either(given(chunk, "providerMetadata"), part.get("providerMetadata", ABSENT)))
        return Urgency.NOW

    # tools

    def tool_update(self, options: Json, dynamic: bool, existing: Json | None = None) -> Json:
        """The SDK's ``updateToolPart`` / ``updateDynamicToolPart``: the call's part changed in
        place (found in the current step unless given), or a new one pushed."""
        call_id, name, state = options["toolCallId"], options["toolName"], options["state"]
        part = existing
        if part is None:
            part = self.step_call(call_id, dynamic)
        value = options.get
        result = state in ("output-available", "output-error")
        meta = value("providerMetadata", ABSENT)
        if part is None:
            part = {"type": "dynamic-tool", "toolName": name} if dynamic else {"type": f"tool-{name}"}
            fields = {
                "toolCallId": call_id, "state": state, "title": value("title", ABSENT),
                "toolMetadata": value("toolMetadata", ABSENT), "input": value("input", ABSENT),
                "inputEncoding": ABSENT if nullish(value("inputEncoding", ABSENT)) else options["inputEncoding"],
                "output": value("output", ABSENT), "rawInput": ABSENT if dynamic else value("rawInput", ABSENT),
                "errorText": value("errorText", ABSENT), "providerExecuted": value("providerExecuted", ABSENT),
                "preliminary": value("preliminary", ABSENT),
                "resultProviderMetadata" if result else "callProviderMetadata": ABSENT if nullish(meta) else meta,
            }  # fmt: skip
            for key, field_value in fields.items():
                assign(part, key, field_value)
            self.message["parts"].append(part)
            return part
        self.unread.pop(id(part), None)
        part["state"] = state
        if dynamic:
            part["toolName"] = name
        else:
            part["type"] = f"tool-{name}"
        for key in ("input", "output", "errorText", "rawInput"):
            assign(part, key, value(key, ABSENT))
        assign(part, "inputEncoding", ABSENT if nullish(value("inputEncoding", ABSENT)) else options["inputEncoding"])
        assign(part, "preliminary", value("preliminary", ABSENT))
        for key in ("title", "toolMetadata"):
            if value(key, ABSENT) is not ABSENT:
                part[key] = options[key]
        executed = either(value("providerExecuted", ABSENT), part.get("providerExecuted", ABSENT))
        assign(part, "providerExecuted", executed)
        if not nullish(meta):
            part["resultProviderMetadata" if result else "callProviderMetadata"] = meta
        return part

    def step_call(self, call_id: str, dynamic: bool) -> Json | None:
        """The current step's part of ``call_id``, of the kind asked (dynamic or static)."""
        for part in self.step_parts():
            kind = part.get("type") == "dynamic-tool" if dynamic else is_static(part)
            if kind and part.get("toolCallId") == call_id:
                return part
        return None

    def call_options(self, chunk: Json, state: str, *keys: str) -> Json:
        options: Json = {"toolCallId": chunk["toolCallId"], "toolName": chunk["toolName"], "state": state}
        for key in keys:
            if key in chunk:
                options[key] = chunk[key]
        return options

    def tool_input_start(self, chunk: Json) -> Urgency:
        dynamic = chunk.get("dynamic") is True
        static = sum(1 for p in self.step_parts() if is_static(p))
        self.calls[chunk["toolCallId"]] = {
            "pieces": [], "encoding": given(chunk, "inputEncoding"), "name": chunk["toolName"], "index": static,
            "dynamic": dynamic, "title": given(chunk, "title"), "toolMetadata": given(chunk, "toolMetadata"),
        }  # fmt: skip
        keys = ("inputEncoding", "providerExecuted", "title", "toolMetadata", "providerMetadata")
        self.tool_update(self.call_options(chunk, "input-streaming", *keys), dynamic)
        return Urgency.NOW

    def tool_input_delta(self, chunk: Json) -> Urgency:
        call = self.calls.get(chunk["toolCallId"])
        if call is None:
            raise self.fail("a tool-input-delta for a call not started (no tool-input-start)", "toolCallId")
        call["pieces"].append(chunk["inputTextDelta"])
        options: Json = {"toolCallId": chunk["toolCallId"], "toolName": call["name"], "state": "input-streaming"}
        for key, fact in (("inputEncoding", "encoding"), ("title", "title"), ("toolMetadata", "toolMetadata")):
            if call[fact] is not ABSENT:
                options[key] = call[fact]
        # The input and its raw text are put in when the state is taken (settle); a dynamic
        # call's part pushed by a delta has no raw text, as in the SDK.
        dynamic = call["dynamic"]
        raw = not dynamic or self.step_call(chunk["toolCallId"], dynamic) is not None
        part = self.tool_update(options, dynamic)
        self.unread[id(part)] = (part, call, raw)
        return Urgency.LATER

    def tool_input_available(self, chunk: Json) -> Urgency:
        keys = ("input", "providerExecuted", "providerMetadata", "title", "toolMetadata")
        self.tool_update(self.call_options(chunk, "input-available", *keys), chunk.get("dynamic") is True)
        return Urgency.NOW

    def tool_input_error(self, chunk: Json) -> Urgency:
        existing = next(
            (p for p in self.step_parts() if is_tool(p) and p.get("toolCallId") == chunk["toolCallId"]), None
        )
        dynamic = existing["type"] == "dynamic-tool" if existing is not None else chunk.get("dynamic") is True
        keys = ("input", "errorText", "providerExecuted", "providerMetadata", "toolMetadata")
        self.tool_update(self.call_options(chunk, "output-error", *keys), dynamic)
        return Urgency.NOW

    def approval_request(self, chunk: Json) -> Urgency:
        part = self.invocation(chunk["toolCallId"])
        part["state"] = "approval-requested"
        approval: Json = {"id": chunk["approvalId"]}
        if not nullish(given(chunk, "approvalDescriptor")):
            approval["descriptor"] = chunk["approvalDescriptor"]
        if "inputSchemaInput" in chunk:
            approval["inputSchemaInput"] = chunk["inputSchemaInput"]
        if not nullish(given(chunk, "reason")):
            approval["requestReason"] = chunk["reason"]
        if chunk.get("isAutomatic") is True:
            approval["isAutomatic"] = True
        if not nullish(given(chunk, "signature")):
            approval["signature"] = chunk["signature"]
        part["approval"] = approval
        return Urgency.NOW

    def approval_response(self, chunk: Json) -> Urgency:
        approval_id = chunk["approvalId"]
        part = next(
            (p for p in self.message["parts"] if is_tool(p) and isinstance(p.get("approval"), dict)
             and p["approval"].get("id") == approval_id),
            None,
        )  # fmt: skip
        if part is None:
            raise self.fail("no tool call asked for this approval", "approvalId")
        part["state"] = "approval-responded"
        answer = {**part["approval"], "id": approval_id, "approved": chunk["approved"]}
        if not nullish(given(chunk, "reason")):
            answer["reason"] = chunk["reason"]
        part["approval"] = answer
        if not nullish(given(chunk, "providerExecuted")):
            part["providerExecuted"] = chunk["providerExecuted"]
        if not nullish(given(chunk, "providerMetadata")):
            part["callProviderMetadata"] = chunk["providerMetadata"]
        return Urgency.NOW

    def output_denied(self, chunk: Json) -> Urgency:
        part = self.invocation(chunk["toolCallId"])
        part["state"] = "output-denied"
        answered(part, False)
        return Urgency.NOW

    def tool_result(self, chunk: Json, state: str) -> Urgency:
        part = self.invocation(chunk["toolCallId"])
        dynamic = part["type"] == "dynamic-tool"
        options: Json = {
            "toolCallId": chunk["toolCallId"], "state": state,
            "toolName": part["toolName"] if dynamic else part["type"][5:],
            "input": part.get("input", ABSENT), "title": part.get("title", ABSENT),
            "toolMetadata": either(given(chunk, "toolMetadata"), part.get("toolMetadata", ABSENT)),
        }  # fmt: skip
        if state == "output-available":
            options["output"] = given(chunk, "output")
            options["preliminary"] = given(chunk, "preliminary")
        else:
            options["errorText"] = chunk["errorText"]
            if not dynamic:
                options["rawInput"] = part.get("rawInput", ABSENT)
        for key in ("providerExecuted", "providerMetadata"):
            options[key] = given(chunk, key)
        options = {k: v for k, v in options.items() if v is not ABSENT}
        self.tool_update(options, dynamic, existing=part)
        answered(part, True)
        # A preliminary output is replaced by the next one: it can wait like a delta.
        return Urgency.LATER if state == "output-available" and chunk.get("preliminary") is True else Urgency.NOW

    # the rest

    def pushed(self, part: Json) -> Urgency:
        self.message["parts"].append({k: v for k, v in part.items() if v is not ABSENT})
        return Urgency.NOW

    def data(self, chunk: Json) -> Urgency:
        if chunk.get("transient") is True:
            return Urgency.NONE
        if not nullish(given(chunk, "id")):
            for part in self.message["parts"]:
                if part.get("type") == chunk["type"] and part.get("id") == chunk["id"]:
                    assign(part, "data", given(chunk, "data"))
                    return Urgency.LATER  # an update of a part already stored
        return self.pushed(dict(chunk))

    def step(self) -> Urgency:
        self.message["parts"].append({"type": "step-start"})
        return Urgency.LATER

    def reset_step(self) -> Urgency:
        self.texts, self.thoughts, self.calls, self.unread = {}, {}, {}, {}
        start = self.step_start()
        if start == len(self.message["parts"]):
            return Urgency.NONE
        del self.message["parts"][start:]
        return Urgency.NOW

    def start(self, chunk: Json) -> Urgency:
        """A ``start`` naming another message is taken by the caller (:meth:`restart`) first."""
        if not nullish(given(chunk, "messageId")):
            self.message["id"] = chunk["messageId"]
        self.metadata(given(chunk, "messageMetadata"))
        named = not nullish(given(chunk, "messageId")) or not nullish(given(chunk, "messageMetadata"))
        return Urgency.NOW if named else Urgency.NONE

    def finish(self, chunk: Json) -> Urgency:
        self.finished = True
        if not nullish(given(chunk, "finishReason")):
            self.finish_reason = chunk["finishReason"]
        self.metadata(given(chunk, "messageMetadata"))
        return Urgency.NOW

    def message_metadata(self, chunk: Json) -> Urgency:
        self.metadata(given(chunk, "messageMetadata"))
        return Urgency.NONE if nullish(given(chunk, "messageMetadata")) else Urgency.LATER


def answered(part: Json, approved: bool) -> None:
    """An approval still unanswered when its call's outcome arrives was answered ``approved`` (the
    tool ran, or was denied): AI SDK 6 sends the answer in the next request's messages only, never
    in the stream (``tool-approval-response`` is 7's), so the chat that reads the stream holds it,
    from its ``addToolApprovalResponse``, and the stored message must too (an outcome's approval
    without its answer is no valid message)."""
    approval = part.get("approval")
    if isinstance(approval, dict) and "approved" not in approval:
        part["approval"] = {**approval, "approved": approved}


def raw_text(call: Json) -> str:
    """A streaming call's raw input so far (its pieces joined once)."""
    pieces: list[str] = call["pieces"]
    if len(pieces) > 1:
        pieces[:] = ["".join(pieces)]
    return pieces[0] if pieces else ""


def _source(chunk: Json, *keys: str) -> Json:
    return {"type": chunk["type"], **{key: given(chunk, key) for key in keys}}


def _file(chunk: Json) -> Json:
    part = {"type": chunk["type"], "mediaType": chunk["mediaType"], "url": chunk["url"]}
    if not nullish(given(chunk, "providerMetadata")):
        part["providerMetadata"] = chunk["providerMetadata"]
    return part


A = Assembly
HANDLERS: dict[str, Callable[[Assembly, Json], Urgency]] = {
    "text-start": lambda a, c: a.block_start(c, "text", a.texts),
    "text-delta": lambda a, c: a.block_delta(c, a.texts),
    "text-end": lambda a, c: a.block_end(c, a.texts),
    "reasoning-start": lambda a, c: a.block_start(c, "reasoning", a.thoughts),
    "reasoning-delta": lambda a, c: a.block_delta(c, a.thoughts),
    "reasoning-end": lambda a, c: a.block_end(c, a.thoughts),
    "tool-input-start": A.tool_input_start,
    "tool-input-delta": A.tool_input_delta,
    "tool-input-available": A.tool_input_available,
    "tool-input-error": A.tool_input_error,
    "tool-approval-request": A.approval_request,
    "tool-approval-response": A.approval_response,
    "tool-output-denied": A.output_denied,
    "tool-output-available": lambda a, c: a.tool_result(c, "output-available"),
    "tool-output-error": lambda a, c: a.tool_result(c, "output-error"),
    "custom": lambda a, c: a.pushed(_source(c, "kind", "providerMetadata")),
    "source-url": lambda a, c: a.pushed(_source(c, "sourceId", "url", "title", "providerMetadata")),
    "source-document": lambda a, c: a.pushed(
        _source(c, "sourceId", "mediaType", "title", "filename", "providerMetadata")
    ),
    "file": lambda a, c: a.pushed(_file(c)),
    "reasoning-file": lambda a, c: a.pushed(_file(c)),
    "steering-message": lambda a, c: a.pushed({"type": "steering-message", "id": c["id"], "parts": c["parts"]}),
    "start-step": lambda a, c: a.step(),
    "finish-step": lambda a, c: Urgency.NONE,
    "reset-step": lambda a, c: a.reset_step(),
    "start": A.start,
    "finish": A.finish,
    "message-metadata": A.message_metadata,
    "abort": lambda a, c: Urgency.NONE,
    "error": lambda a, c: Urgency.NONE,
}
