"""The API's documented shapes: what the OpenAPI document says each route takes and returns.

Three parts: the message shapes (JSON Schema, from message.py's tables), the pydantic models of
what the routes return, and :func:`answers`, the ``responses=`` of each route.

Nothing here runs on a request. Routes keep answering with orjson bytes; these models and
schemas only describe them. The message shapes are derived from :mod:`foldline.message`'s
tables (the ones the write door checks with), so the document and the door cannot disagree.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, WithJsonSchema
from pydantic.json_schema import SkipJsonSchema

from . import message as shape
from .sources import SOURCES

REF = "#/components/schemas/"
Schema = dict[str, Any]


def ref(name: str) -> Schema:
    return {"$ref": REF + name}


# -- the message shape, from message.py's tables ---------------------------------------------

# The JSON Schema of each check the tables use; a check missing here fails at import.
CHECKS: dict[shape.Check, Schema] = {
    shape.is_str: {"type": "string"},
    shape.is_obj: {"type": "object"},
    shape.is_bool: {"type": "boolean"},
    shape.is_text_state: {"enum": list(shape.TEXT_STATES)},
    shape.any_value: {},
    shape.is_parts: {
        "type": "array",
        "items": {"type": "object", "required": ["type"], "properties": {"type": {"enum": ["text", "file"]}}},
    },
}

# The state fields a tool part may hold, and what each must be when it is there.
STATE_FIELDS: dict[str, Schema] = {
    "input": {"description": "checked against the tool's input schema from the registry"},
    "output": {"description": "checked against the tool's output schema from the registry"},
    "errorText": {"type": "string"},
    "approval": {"type": "object", "required": ["id"], "properties": {"id": {"type": "string"}}},
    "preliminary": {"type": "boolean"},
    "rawInput": {"description": "the input's raw text: a string while it streams (AI SDK 7)"},
}

# An approval's answer, by tool state (as check_approval checks it); False: there is none yet.
APPROVED: dict[str, Schema | bool] = {
    "approval-requested": False,
    "approval-responded": {"type": "boolean"},
    "output-available": {"const": True},
    "output-error": {"const": True},
    "output-denied": {"const": False},
}


def object_schema(kind: Schema, fields: Mapping[str, tuple[bool, shape.Check]], extra: Schema | None = None) -> Schema:
    """A part's schema from one of message.py's field tables. Unknown keys are allowed (kept)."""
    properties: Schema = {"type": kind, **{name: CHECKS[check] for name, (_, check) in fields.items()}}
    required = ["type", *(name for name, (needed, _) in fields.items() if needed)]
    return {"type": "object", "required": required, "properties": properties, **(extra or {})}


# What a state field must be in one state only: a streaming input's raw text is a string so far.
IN_STATE: dict[str, dict[str, Schema]] = {
    "input-streaming": {"rawInput": {"type": "string"}, "inputEncoding": {"enum": list(shape.INPUT_ENCODINGS)}},
}


def state_schema(state: str, rules: dict[str, str]) -> Schema:
    """One tool state: the state fields it requires, allows and refuses."""
    properties: Schema = {"state": {"const": state}}
    for name in shape.STATE_FIELDS:
        properties[name] = STATE_FIELDS[name] if name in rules else False
    properties.update(IN_STATE.get(state, {}))
    if "approval" in rules:
        approved = APPROVED[state]
        answer = {"properties": {"approved": approved}}
        required = {"required": ["approved"]} if approved is not False else {}
        properties["approval"] = {"allOf": [STATE_FIELDS["approval"], answer, required]}
    return {"properties": properties, "required": [name for name, rule in rules.items() if rule == "req"]}


def tool_part(kind: Schema, extra: dict[str, tuple[bool, shape.Check]]) -> Schema:
    states = [state_schema(state, rules) for state, rules in shape.TOOL_STATES.items()]
    schema = object_schema(kind, {**shape.TOOL_COMMON, **extra}, {"oneOf": states})
    schema["required"].append("state")
    return schema


def part_schemas() -> dict[str, Schema]:
    """Each part type the write door knows, by name."""
    schemas = {name: object_schema({"const": name}, fields) for name, fields in shape.PARTS.items()}
    schemas["data-*"] = object_schema({"type": "string", "pattern": "^data-."}, shape.DATA_PART)
    schemas["tool-*"] = tool_part({"type": "string", "pattern": "^tool-."}, {})
    schemas["dynamic-tool"] = tool_part({"const": "dynamic-tool"}, {"toolName": (True, shape.is_str)})
    for name, schema in schemas.items():
        schema["title"] = name
    return schemas


def ui_part() -> Schema:
    return {
        "description": "One part of a UIMessage, as the write door checks it. Unknown keys are kept.",
        "oneOf": list(part_schemas().values()),
    }


def ui_message() -> Schema:
    return {
        "type": "object",
        "description": "An AI SDK UIMessage, as the write door checks it. Unknown keys are kept.",
        "required": ["role", "parts"],
        "properties": {
            "id": {"type": "string", "format": "uuid", "description": "may be left out; equal to the path's id"},
            "role": {"enum": list(shape.ROLES)},
            "metadata": {"description": "checked against the registry's metadata schema for the role"},
            "parts": {"type": "array", "items": ref("UIPart")},
        },
        "if": {"properties": {"role": {"const": "assistant"}}},
        "else": {"properties": {"parts": {"minItems": 1}}},
    }


def read_message() -> Schema:
    """A message as a read returns it: as written, some parts cut, unreadable ones skipped."""
    cut_part = {
        "type": "object",
        "required": ["type"],
        "properties": {"type": {"type": "string"}},
        "description": "a part listed in cutParts: as written, less the field that was cut",
    }
    return {
        "type": "object",
        "required": ["id", "parts"],
        "properties": {
            "id": {"type": "string", "format": "uuid"},
            "role": {"enum": list(shape.ROLES)},
            "metadata": {"description": "left out when it no longer matches the role's schema"},
            "parts": {"type": "array", "items": {"anyOf": [ref("UIPart"), cut_part]}},
            "cutParts": {"type": "array", "items": ref("CutRef")},
            "skippedParts": {
                "type": "array",
                "items": {"type": "integer", "minimum": 0},
                "description": "indexes of stored parts left out because today's checks refuse them",
            },
            "createdAt": {
                "type": "string",
                "description": "cut reads and live changes: when the service first stored the message (UTC)",
            },
        },
    }


CUT_REF: Schema = {
    "type": "object",
    "description": "A field left out of a cut part: fetch the part by its index to get it whole.",
    "required": ["index", "field", "bytes", "head", "tail"],
    "properties": {
        "index": {"type": "integer", "minimum": 0},
        "field": {"type": "string"},
        "bytes": {"type": "integer", "minimum": 0},
        "head": {"type": "string"},
        "tail": {"type": "string"},
    },
}

NEW_AGENT: Schema = {
    "type": "object",
    "required": ["workspace_id"],
    "properties": {"workspace_id": {"type": "string", "format": "uuid"}, "title": {"type": "string"}},
}
NEW_SHARE: Schema = {
    "type": "object",
    "properties": {
        "expires_in": {"type": "integer", "minimum": 1, "maximum": 10 * 366 * 24 * 3600,
                       "description": "seconds until it expires; without it, it never does"},
    },
}


def components() -> dict[str, Schema]:
    """The hand-made schemas the document adds to its components (the pydantic ones come by themselves)."""
    return {
        "UIMessage": ui_message(),
        "UIPart": ui_part(),
        "Message": read_message(),
        "CutRef": CUT_REF,
        "NewAgent": NEW_AGENT,
        "ShareRequest": NEW_SHARE,
        "PartOrSlice": {"oneOf": [ref("UIPart"), Slice.model_json_schema()]},
    }


def stream_body() -> Schema:
    """``openapi_extra`` for the UI message stream's route: server-sent events, read as they come."""
    text = ("the AI SDK's UI message stream: `data: <chunk JSON>` events, then `data: [DONE]` "
            "(docs/ai-sdk.md)")  # fmt: skip
    schema = {"type": "string", "description": text}
    return {"requestBody": {"required": True, "content": {"text/event-stream": {"schema": schema}}}}


def body(name: str, required: bool = True) -> Schema:
    """``openapi_extra`` for a route whose JSON body is read by hand (routes.body)."""
    return {"requestBody": {"required": required, "content": {"application/json": {"schema": ref(name)}}}}


Message = Annotated[dict[str, Any], WithJsonSchema(ref("Message"))]
UIPart = Annotated[dict[str, Any], WithJsonSchema(ref("UIPart"))]


# -- what the routes return ------------------------------------------------------------------


class ErrorDetail(BaseModel):
    code: str = Field(description="stable, for programs: bad_request, unauthorized, not_found, …")
    message: str = Field(description="for people; never repeats the payload")
    where: str | SkipJsonSchema[None] = Field(
        default=None, description="the parameter or field at fault, e.g. limit or parts[3].output"
    )


class Error(BaseModel):
    """Every error, whatever its status."""

    error: ErrorDetail


class Workspace(BaseModel):
    id: str
    name: str
    samples: bool = Field(description="true for the workspace of the sample sessions a first run imported")


class Me(BaseModel):
    id: str
    name: str
    workspaces: list[Workspace]


class SearchIndex(BaseModel):
    pending_chunks: int = Field(description="chunks of the caller's transcripts written but not indexed yet")
    pending_code_points: int = Field(description="the text those chunks own, in code points")
    oldest_pending_seconds: float | None = Field(
        description="how long ago the oldest of them was written; null when none is pending"
    )


class Status(BaseModel):
    search_index: SearchIndex = Field(
        description="the search index's backlog (searches read the pending chunks directly)"
    )


class Usage(BaseModel):
    """Tokens and their estimated cost (genai-prices; the table is named by `prices`)."""

    input_tokens: int = Field(description="every input token, cache reads and writes included")
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    total_tokens: int = Field(description="input_tokens + output_tokens")
    cost_usd: float | None = Field(description="estimated, in US dollars; null when a model's price is not known")
    priced_cost_usd: float = Field(
        description="the estimate over the messages whose model has a price (cost_usd when every one has)"
    )
    unpriced_messages: int = Field(description="messages with tokens whose model has no known price")


class ModelUsage(Usage):
    model: str | None = Field(description="null: messages that named no model")
    messages: int = Field(description="messages that reported usage")


class Prices(BaseModel):
    """The price table the costs come from."""

    source: Literal["genai-prices"]
    version: str | None = Field(description="the installed genai-prices version, which dates its table")


class AgentFacts(BaseModel):
    id: str
    title: str | None
    created_at: str = Field(description="ISO 8601, UTC")
    updated_at: str = Field(description="ISO 8601, UTC: the last write to it or to one of its subagents")
    source: str | None = Field(
        description="who wrote it: an importer's source, else api; null until its first message",
        json_schema_extra={"enum": [*SOURCES, None]},
    )
    project: str | None = Field(description="the folder it ran in (its messages' `cwd`)")
    branch: str | None = Field(description="its git branch (`gitBranch`, or Codex's `git.branch`)")
    model: str | None = Field(description="the model of its latest assistant message that named one")
    messages: int = Field(description="its messages, its subagents' included")
    usage: Usage = Field(description="its tokens and estimated cost, its subagents' included")
    live: bool = Field(description="written to in the last 5 minutes")


class AgentSummary(AgentFacts):
    workspace_id: str
    owner_id: str


class Agent(AgentSummary):
    subagents: list[str] = Field(description="its subagents' call ids, oldest first")
    usage_by_model: list[ModelUsage] | None = Field(default=None, description="GET only: its usage, model by model")
    prices: Prices | None = Field(default=None, description="GET only: the price table")


class SharedAgent(AgentFacts):
    """An agent as a share shows it: neither its workspace nor its owner."""

    subagents: list[str] = Field(description="its subagents' call ids, oldest first")
    usage_by_model: list[ModelUsage] = Field(description="its usage, model by model")
    prices: Prices = Field(description="the price table")


class Share(BaseModel):
    """A share link: whoever holds its token reads one agent and its subagents, and nothing else."""

    id: str = Field(description="the share's id: what revokes it")
    agent_id: str
    created_at: str = Field(description="ISO 8601, UTC")
    expires_at: str | None = Field(description="ISO 8601, UTC; null: it never expires")


class NewShare(Share):
    url: str = Field(description="the panel's address of the share, /s/{token}: it opens without signing in")
    token: str = Field(description="the share's bearer secret, shown once (only its hash is kept)")


class Shares(BaseModel):
    shares: list[Share] = Field(description="oldest first; expired ones are left out")


class Opened(BaseModel):
    """What a share opens."""

    agent_id: str = Field(description="the agent the share opens (with its subagents)")
    expires_at: str | None = Field(description="ISO 8601, UTC; null: it never expires")


class Facet(BaseModel):
    value: str | None = Field(description="null: agents that do not say")
    agents: int


class Facets(BaseModel):
    sources: list[Facet]
    projects: list[Facet] = Field(description="the 200 commonest")


class AgentList(BaseModel):
    agents: list[AgentSummary]
    next: str | None = Field(
        description="pass back as cursor= (same sort and order) for the next page; null at the end",
    )
    prices: Prices
    facets: Facets | None = Field(default=None, description="first page only (no cursor): what to filter by")


class Page(BaseModel):
    messages: list[Message] = Field(description="oldest first")
    next: str | None = Field(description="pass back as before= for the page before this one; null on the first")
    seq: int = Field(description="the conversation's write counter when read: follow events from here")


class Written(BaseModel):
    id: str
    seq: int
    created: bool


class Streamed(BaseModel):
    """How a UI message stream ended, and the message it wrote."""

    id: str | None = Field(description="the message's Foldline id; null when the stream held no chunk")
    messageId: str | None = Field(  # the AI SDK's spelling
        description="the id the stream's `start` gave (the message's own id when it is a UUID, else "
        "the Foldline id is derived from it); null when no `start` named one"
    )
    seq: int | None = Field(description="the seq of the last write")
    finished: bool = Field(description="a `finish` chunk arrived; else open tool calls got the unknown outcome")
    done: bool = Field(description="the closing `data: [DONE]` arrived")
    ended: list[int] = Field(description="indexes of the tool parts given the unknown outcome")
    writes: int = Field(description="writes of the message (coalesced: a few a second at most)")


class TurnEnded(BaseModel):
    message: str | None = Field(description="the last assistant message, or null when there is none")
    ended: list[int] = Field(description="indexes of the tool parts given an unknown outcome")


class Deleted(BaseModel):
    id: str = Field(description="the agent deleted")
    deleted: bool = Field(description="always true")
    subagents: int = Field(description="its subagents, deleted with it")
    forgotten: bool = Field(description="true when an import passes its session over from now on (`forget=true`)")


class SamplesRemoved(BaseModel):
    removed: int = Field(description="the sample agents deleted (0: none were left)")
    workspace_id: str | None = Field(description="the samples' workspace, which the caller has left; null: none")


class Slice(BaseModel):
    """Code points [start, end) of one field of a part."""

    field: str = Field(description="text, output, errorText or input")
    start: int
    end: int = Field(description="exclusive, clamped to length")
    length: int = Field(description="the field's whole length in code points")
    text: str


class Span(BaseModel):
    start: int
    end: int


class Snippet(BaseModel):
    text: str = Field(description="plain text around the first match, never HTML")
    start: int = Field(description="the first match's start in text, in code points")
    end: int
    matches: list[Span] = Field(description="every match the snippet shows, in its offsets (clipped to it)")


class Match(BaseModel):
    start: int = Field(description="the match's start in the field, in code points")
    end: int = Field(description="the match's end in the field, exclusive")
    hidden: bool = Field(description="true when the match lies in the middle a cut page leaves out")


class Hit(BaseModel):
    """A result: one field of one part, with every match in it."""

    agent_id: str
    call: str | None = Field(description="the subagent's call id, or null for the agent itself")
    message_id: str
    part: int = Field(description="the part's index")
    field: str = Field(description="text, output, errorText or input")
    start: int = Field(description="the first match's start in the field, in code points")
    end: int = Field(description="the first match's end in the field, exclusive")
    hidden: bool = Field(description="true when the first match lies in the middle a cut page leaves out")
    count: int = Field(description="how many matches: len(matches)")
    more: bool = Field(description="true when the field holds more matches, listed on the next page")
    matches: list[Match] = Field(description="every match, in order of offset")
    role: str
    tool: str | None
    title: str | None = Field(description="the agent's title")
    snippet: Snippet


class SearchPage(BaseModel):
    hits: list[Hit] = Field(description="results (one field of one part each), newest first")
    next: str | None = Field(description="pass back as cursor= for the next page; null on the last")
    partial: bool = Field(
        description="true when the search ran out of its time before the page was full: the page"
        " may hold fewer hits than limit (or none) and next goes on from where it stopped"
    )


# -- what each route answers ----------------------------------------------------------------

WHEN = {
    400: "a malformed body or a refused parameter; `where` names it",
    401: "no bearer token, or an unknown one",
    403: "a member of the workspace writing to an agent it does not own",
    404: "not found: one answer for every cause, so it reveals nothing",
    409: "the last message kept changing while the turn ended; end it again",
    413: "a body over the configured limit",
    422: "the write door refused it; `where` names the field",
    429: "past the account's cap of concurrent whole-part reads, searches or event streams",
    503: "the server is at its most whole-part reads and searches at once, or the database could not answer"
    " in time; Retry-After says when to try again",
}


Shape = type[BaseModel] | dict[str, Any] | None  # a model, a schema, or nothing to say


def answers(
    ok: dict[int, tuple[Shape, str]], *errors: int, media: str = "application/json"
) -> dict[int | str, dict[str, Any]]:
    """``responses=`` for a route: its successes, the errors it can answer, and any other error.

    Errors are JSON whatever ``media`` a success is in (a route serving another type declares
    ``response_class=StreamingResponse``, whose media type is unset, so FastAPI adds none).
    """
    found: dict[int | str, dict[str, Any]] = {}
    for status, (what, text) in ok.items():
        found[status] = success(what, text, media)
    found.update({status: {"model": Error, "description": WHEN[status]} for status in errors})
    found["default"] = {"model": Error, "description": "any other error (405, 500, 503, 507), in the same shape"}
    return found


def success(what: Shape, text: str, media: str) -> dict[str, Any]:
    if isinstance(what, dict):
        return {"description": text, "content": {media: {"schema": what}}}
    return {"description": text, **({"model": what} if what else {})}


def exported(share: bool = False) -> dict[int | str, dict[str, Any]]:
    """``responses=`` of the export: a JSON document, Markdown or HTML, by ``format`` (``share``:
    a share link's, which has no 401: a share that does not open is the one not-found)."""
    statuses = (400, 404, 429, 503) if share else (400, 401, 404, 429, 503)
    found = answers({200: ({"type": "object"}, "the whole export, streamed")}, *statuses)
    found[200]["content"].update({"text/markdown": {"schema": {"type": "string"}},
                                  "text/html": {"schema": {"type": "string"}}})  # fmt: skip
    return found
