"""The HTTP API: each route parses, calls :class:`~foldline.service.Transcripts`, serialises.

The five conversation routes are written once (:data:`conversation`) and served under two
prefixes: an agent's (``/api/agents/{agent}``) and a subagent's
(``/api/agents/{agent}/subagents/{call}``); its three reads (:func:`conversation_reads`) are
served a third time to share links, by :mod:`foldline.shares`. Parameters are declared with their real types; a
refused one is a 400 whose ``where`` names it (:func:`parameter_error`). Bodies are read by hand,
once, within the size limit (:func:`body`); :mod:`foldline.schemas` documents them and every answer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import orjson
from annotated_types import Interval
from fastapi import APIRouter, Depends, Header, Path, Query, Request
from fastapi.responses import Response, StreamingResponse
from fastapi.routing import APIRoute
from fastapi.security import APIKeyCookie, HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BeforeValidator, StringConstraints
from pydantic.json_schema import SkipJsonSchema
from starlette.concurrency import run_in_threadpool

from . import events, intake, schemas
from .errors import BadRequest, FoldlineError, Invalid, PayloadTooLarge
from .limits import Gate, HeldStream, Slots
from .message import inexact_integer
from .pool import in_pool
from .service import Transcripts
from .sources import SOURCES
from .wire import PAGE_LIMIT_MAX, SEQ_MAX, bearer_token, parse_before, parse_counter, parse_page_limit

TOKEN_COOKIE = "foldline_token"


def json(data: Any, status: int = 200) -> Response:
    return Response(orjson.dumps(data), status_code=status, media_type="application/json")


# -- what a route depends on ------------------------------------------------------------------
# Each is `async`: FastAPI runs a plain `def` dependency in a thread of its own, a hop per
# dependency per request. Only a token this process has not seen in the last few seconds sends
# one to the database (Transcripts.authenticate); every other answer comes from memory.


async def transcripts(request: Request) -> Transcripts:
    t: Transcripts = request.app.state.transcripts
    return t


bearer = HTTPBearer(auto_error=False, scheme_name="bearerAuth", description="an account's token")
cookie = APIKeyCookie(
    name=TOKEN_COOKIE, auto_error=False, scheme_name="panelCookie", description="the panel's cookie; reads only"
)
Bearer = Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]


def token_of(request: Request) -> str | None:
    """The caller's token as :func:`reader` takes it: a bearer token, or the panel's cookie."""
    return bearer_token(request.headers.getlist("authorization")) or request.cookies.get(TOKEN_COOKIE)


async def signed_in(request: Request, token: str | None) -> str:
    t: Transcripts = request.app.state.transcripts
    account = t.cached_account(token)
    if account is None:
        account = await run_in_threadpool(t.authenticate, token)
    return account


# `Bearer` and the cookie declare the schemes in the OpenAPI document; the token itself is read by
# wire.bearer_token, as the page fast path reads it (two Authorization headers: a 400).


async def writer(request: Request, _: Bearer) -> str:
    """The caller of a write: a bearer token, never the cookie (a forged cross-site form changes nothing)."""
    return await signed_in(request, bearer_token(request.headers.getlist("authorization")))


async def reader(request: Request, _: Bearer, __: Annotated[str | None, Depends(cookie)]) -> str:
    """The caller of a read: a bearer token, or the panel's cookie."""
    return await signed_in(request, token_of(request))


async def body(request: Request) -> Any:
    """The request's JSON, read once within the size limit and decoded once."""
    return await read_body(request, empty=False)


async def optional_body(request: Request) -> Any:
    """:func:`body`, where no body at all is the empty object."""
    return await read_body(request, empty=True)


async def read_body(request: Request, empty: bool) -> Any:
    limit = request.app.state.transcripts.settings.max_body
    length = request.headers.get("content-length", "")
    if length.isascii() and length.isdigit() and int(length) > limit:
        raise PayloadTooLarge(f"the body is over the limit of {limit} bytes")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise PayloadTooLarge(f"the body is over the limit of {limit} bytes")
        chunks.append(chunk)
    raw = b"".join(chunks)
    if empty and not raw.strip():
        return {}
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise BadRequest(json_error(raw, exc)) from None
    inexact = inexact_integer(raw)
    if inexact is not None:
        raise Invalid("an integer past 64 bits would not be kept exactly; send it as a string", where=inexact)
    return data


def json_error(raw: bytes, exc: orjson.JSONDecodeError) -> str:
    """Why a body is not JSON, by position, without quoting it."""
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as bad:
        return f"the body is not UTF-8 (byte {bad.start})"
    return f"the body is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"


@dataclass(frozen=True, slots=True)
class Address:
    """Which conversation a route is about: an agent's, or (with ``call``) one of its subagents'."""

    agent: str
    call: str | None


AgentId = Annotated[str, Path(description="the agent's id (a UUID)", json_schema_extra={"format": "uuid"})]
CallId = Annotated[str, Path(description="the tool call id that started the subagent, as the agent wrote it")]


async def address(request: Request, agent: AgentId) -> Address:
    return Address(agent, request.path_params.get("call"))


async def subagent(call: CallId) -> None:
    """Declares ``call`` on the subagent prefix; :func:`address` reads it."""


@dataclass(frozen=True, slots=True)
class Viewer:
    """Who reads a conversation: an account, or a share link (which reads as the member who made
    it may, narrowed to its one agent).

    ``account`` is whose access the read goes by; ``slot`` whom its caps count against (a share
    has caps of its own, so its readers cannot use up its maker's); ``still(agent, call)``
    says whether an event stream may go on; ``check_seconds``, how often a stream asks."""

    account: str
    slot: str
    still: Callable[[str, str | None], bool]
    check_seconds: float = events.HEARTBEAT_SECONDS


async def account_viewer(request: Request, _: Bearer, __: Annotated[str | None, Depends(cookie)]) -> Viewer:
    """A reader signed in with a bearer token or the panel's cookie."""
    token = token_of(request)
    account = await signed_in(request, token)
    t: Transcripts = request.app.state.transcripts
    return Viewer(account, account, lambda agent, call: t.may_follow(token, account, agent, call))


Reader = Annotated[str, Depends(reader)]
Writer = Annotated[str, Depends(writer)]
Body = Annotated[Any, Depends(body)]
OptionalBody = Annotated[Any, Depends(optional_body)]
T = Annotated[Transcripts, Depends(transcripts)]
At = Annotated[Address, Depends(address)]

# -- parameters -------------------------------------------------------------------------------


def parsed(parse: Callable[[str], Any], keep: bool = False) -> BeforeValidator:
    """A parameter read by its one parser in :mod:`foldline.wire` (as the service and the page fast
    path read it); ``keep``: pass the text on as it came (the service parses it again)."""

    def check(value: Any) -> Any:
        if not isinstance(value, str):
            return value
        try:
            found = parse(value)
        except FoldlineError as refused:
            raise ValueError(str(refused)) from None
        return value if keep else found

    return BeforeValidator(check)


def no_empty(value: Any) -> Any:
    return None if value == "" else value


# Bounds go inside the type, before the digits check, so the document shows them as JSON Schema.
Seq = Annotated[int, Interval(ge=0, le=SEQ_MAX), parsed(lambda text: parse_counter(text, "since", "a seq"))]
Limit = Annotated[
    Annotated[int, Interval(ge=1, le=PAGE_LIMIT_MAX), parsed(parse_page_limit)] | SkipJsonSchema[None],
    Query(description="the newest N messages; without it, all of them"),
]
Parts = Annotated[
    Literal["cut", "whole"] | SkipJsonSchema[None],
    Query(description="cut: big fields of some parts replaced by a reference (see cutParts)"),
]
Before = Annotated[
    Annotated[str, StringConstraints(pattern="^[0-9]{1,10}$"), parsed(parse_before, keep=True)] | SkipJsonSchema[None],
    Query(description="a previous page's `next`: the messages before it"),
]
Since = Annotated[Seq, Query(description="a `seq` from an earlier read: the writes after it")]
LastEventId = Annotated[
    Seq | SkipJsonSchema[None],
    Header(description="sent by a reconnecting EventSource; wins over `since`"),
    BeforeValidator(no_empty),
]
WorkspaceId = Annotated[str, Query(description="the workspace's id (a UUID)", json_schema_extra={"format": "uuid"})]
MessageId = Annotated[str, Path(description="the message's id (a UUID)", json_schema_extra={"format": "uuid"})]
Index = Annotated[
    str, Path(description="the part's index, from 0; any other is not found", json_schema_extra={"pattern": "^[0-9]+$"})
]

ExportFormat = Annotated[
    Literal["json", "md", "html"],
    Query(description="json (the messages as a whole read sends them), md (Markdown) or html (one file)"),
]
Field = Annotated[
    Literal["text", "output", "errorText", "input"] | SkipJsonSchema[None],
    Query(description="with it, a slice of that field of the part instead of the whole part"),
]
Offset = Annotated[
    str | SkipJsonSchema[None],
    Query(
        description="a code-point offset in the field (`start` from 0; `end` exclusive, clamped to its length)",
        json_schema_extra={"pattern": "^[0-9]{1,16}$"},
    ),
]
Query_ = Annotated[
    str | SkipJsonSchema[None],
    Query(
        description='words that must all match (case-insensitive substrings); "quoted phrases" as written; '
        "at most 256 characters"
    ),
]
SearchLimit = Annotated[
    str | SkipJsonSchema[None],
    Query(description="hits per page, 1 to 100 (default 20)", json_schema_extra={"pattern": "^[0-9]{1,3}$"}),
]
Cursor = Annotated[str | SkipJsonSchema[None], Query(description="a previous page's `next`")]
Forget = Annotated[
    Literal["true", "false"] | SkipJsonSchema[None],
    Query(description="true: an import passes the agent's session over from now on (else a re-import brings it back)"),
]
OptionalWorkspace = Annotated[
    str | SkipJsonSchema[None],
    Query(description="only this workspace (a UUID)", json_schema_extra={"format": "uuid"}),
]
OptionalAgent = Annotated[
    str | SkipJsonSchema[None],
    Query(description="only this agent and its subagents (a UUID)", json_schema_extra={"format": "uuid"}),
]

AgentSort = Annotated[
    str | SkipJsonSchema[None],
    Query(
        description="activity (default), messages, tokens, cost or title",
        json_schema_extra={"enum": ["activity", "messages", "tokens", "cost", "title"]},
    ),
]
AgentOrder = Annotated[
    str | SkipJsonSchema[None],
    Query(description="asc or desc (default: desc, but asc for title)", json_schema_extra={"enum": ["asc", "desc"]}),
]
AgentSource = Annotated[
    str | SkipJsonSchema[None],
    Query(description="only agents of this source", json_schema_extra={"enum": list(SOURCES)}),
]
AgentProject = Annotated[
    str | SkipJsonSchema[None], Query(description="only agents that ran in this folder (as `project` gives it)")
]
AgentNoProject = Annotated[
    Literal["true", "false"] | SkipJsonSchema[None],
    Query(description="true: only agents that name no folder (`project` null); not with `project`"),
]
AgentLimit = Annotated[
    str | SkipJsonSchema[None],
    Query(description="agents per page, 1 to 200 (default 50)", json_schema_extra={"pattern": "^[0-9]{1,3}$"}),
]

# What a refused parameter is told, by the name in `where`.
PARAMETER_ERRORS = {
    "limit": "'limit' is a whole number from 1 to 1000",
    "parts": "'parts' is 'cut' or 'whole'",
    "before": "'before' must be a cursor from a previous page's 'next'",
    "since": "'since' (or Last-Event-ID) is a seq from an earlier read",
    "workspace_id": "workspace_id is required",
    "field": "'field' is text, output, errorText or input",
    "format": "'format' is json, md or html",
    "forget": "'forget' is true or false",
    "no_project": "'no_project' is true or false",
}
WHERE = {"last-event-id": "since"}  # one cursor, two spellings


def parameter_error(errors: list[Any]) -> BadRequest:
    """The 400 for a refused parameter (FastAPI's validation), naming it in ``where``."""
    loc: tuple[Any, ...] = tuple(errors[0].get("loc", ())) if errors else ()
    name = str(loc[1]) if len(loc) > 1 else ""  # (where, name, and for a union which member)
    where = WHERE.get(name, name)
    return BadRequest(PARAMETER_ERRORS.get(where, "the request's parameters are not valid"), where=where or None)


# -- the routes -------------------------------------------------------------------------------


def operation_id(route: APIRoute) -> str:
    return route.name


def subagent_operation_id(route: APIRoute) -> str:
    return f"subagent_{route.name}"


EVENTS = "each write after `since`: `id: <seq>`, `event: message`, `data: <a Message, cut>`; then live"
router = APIRouter(prefix="/api", generate_unique_id_function=operation_id)
conversation = APIRouter()  # served twice, below; its reads a third time, to share links


@router.get(
    "/me",
    summary="The caller and the workspaces it belongs to",
    response_model=None,
    responses=schemas.answers({200: (schemas.Me, "the caller")}, 401),
    tags=["accounts"],
)
def me(t: T, who: Reader) -> Response:
    return json(t.me(who))


@router.get(
    "/status",
    summary="What the search index has not reached yet, of what the caller may read",
    response_model=None,
    responses=schemas.answers({200: (schemas.Status, "the backlog")}, 401),
)
def status(t: T, who: Reader) -> Response:
    return json({"search_index": t.backlog(who)})


@router.post(
    "/agents",
    status_code=201,
    summary="Create an agent owned by the caller",
    response_model=None,
    openapi_extra=schemas.body("NewAgent"),
    tags=["agents"],
    responses=schemas.answers({201: (schemas.Agent, "created")}, 400, 401, 404, 413, 422),
)
def create_agent(t: T, who: Writer, data: Body) -> Response:
    if not isinstance(data, dict):
        raise BadRequest("the body must be a JSON object")
    return json(t.create_agent(who, data.get("workspace_id"), data.get("title")), 201)


@router.get(
    "/agents",
    summary="A page of a workspace's agents: sorted, filtered by source and project",
    response_model=None,
    responses=schemas.answers({200: (schemas.AgentList, "the agents")}, 400, 401, 404),
    tags=["agents"],
)
def list_agents(
    t: T,
    who: Reader,
    workspace_id: WorkspaceId,
    sort: AgentSort = None,
    order: AgentOrder = None,
    source: AgentSource = None,
    project: AgentProject = None,
    no_project: AgentNoProject = None,
    limit: AgentLimit = None,
    cursor: Cursor = None,
) -> Response:
    return json(t.list_agents(who, workspace_id, sort=sort, order=order, source=source, project=project,
                              no_project=no_project, limit=limit, cursor=cursor))  # fmt: skip


@router.get(
    "/agents/{agent}",
    summary="One agent, with its subagents' call ids and its usage by model",
    response_model=None,
    responses=schemas.answers({200: (schemas.Agent, "the agent")}, 401, 404),
    tags=["agents"],
)
def get_agent(t: T, who: Reader, agent: AgentId) -> Response:
    return json(t.agent(who, agent))


@router.get(
    "/agents/{agent}/export",
    summary="The whole agent, its subagents included, as JSON, Markdown or one HTML file",
    response_class=StreamingResponse,
    responses=schemas.exported(),
    tags=["agents"],
)
def export_agent(request: Request, t: T, who: Reader, agent: AgentId, format: ExportFormat = "json") -> Response:
    return exported(request, who, lambda: t.export(who, agent, format))


def exported(request: Request, slot: str, export: Callable[[], tuple[str, str, Iterator[bytes]]]) -> Response:
    """An export streamed as it is read, under a whole read's slot of ``slot`` (an account, or a
    share) and the process's heavy gate."""
    whole_reads: Slots = request.app.state.whole_reads
    heavy: Gate = request.app.state.heavy
    named: list[tuple[str, str]] = []

    def start() -> tuple[int, Iterator[bytes]]:
        media, name, chunks = export()
        named.append((media, name))
        return 0, chunks

    _, chunks = heavy.streamed(Gate.EVERYONE, lambda: whole_reads.streamed(slot, start))
    media, name = named[0]
    headers = {"Content-Disposition": f'attachment; filename="{name}"', "Cache-Control": "no-store"}
    return HeldStream(chunks, media_type=media, headers=headers)


@router.delete(
    "/agents/{agent}",
    summary="Delete an agent owned by the caller, with its subagents and everything stored of them",
    response_model=None,
    responses=schemas.answers({200: (schemas.Deleted, "deleted; its followers are told")}, 400, 401, 403, 404),
    tags=["agents"],
)
def delete_agent(t: T, who: Writer, agent: AgentId, forget: Forget = None) -> Response:
    return json(t.delete_agent(who, agent, forget == "true"))


@router.delete(
    "/samples",
    summary="Remove the sample sessions a first run imported: every agent of the caller's Samples workspace",
    response_model=None,
    responses=schemas.answers({200: (schemas.SamplesRemoved, "removed, or none were left")}, 401),
    tags=["agents"],
)
def remove_samples(t: T, who: Writer) -> Response:
    return json(t.remove_samples(who))


@conversation.put(
    "/messages/{message}",
    summary="The write door: create or replace one message",
    response_model=None,
    openapi_extra=schemas.body("UIMessage"),
    responses=schemas.answers(
        {200: (schemas.Written, "replaced"), 201: (schemas.Written, "created")}, 400, 401, 403, 404, 413, 422
    ),
)
def put_message(t: T, who: Writer, at: At, message: MessageId, data: Body) -> Response:
    result = t.put_message(who, at.agent, message, data, at.call)
    return json(result, 201 if result["created"] else 200)


@conversation.post(
    "/turn-end",
    summary="End the turn: open tool parts get an unknown outcome",
    response_model=None,
    responses=schemas.answers({200: (schemas.TurnEnded, "the turn ended")}, 401, 403, 404, 409, 422),
)
def end_turn(t: T, who: Writer, at: At) -> Response:
    return json(t.end_turn(who, at.agent, at.call))


@conversation.post(
    "/stream",
    summary="Take in an AI SDK UI message stream: the message written as it grows",
    response_model=None,
    openapi_extra=schemas.stream_body(),
    responses=schemas.answers(
        {200: (schemas.Streamed, "the stream ended; its message as stored")}, 400, 401, 403, 404, 413, 422
    ),
)
async def take_stream(request: Request, t: T, who: Writer, at: At) -> Response:
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "text/event-stream":
        raise BadRequest("a UI message stream is sent as text/event-stream", where="content-type")
    return json(await intake.take(request, t, who, at.agent, at.call))


def conversation_reads(view: Callable[..., Any], auth: tuple[int, ...] = (401,)) -> APIRouter:
    """The three reads of a conversation, for readers that ``view`` finds: written once, served
    to accounts (under the agent and the subagent prefix) and to share links. ``auth``: the
    status a refused caller gets (a share link never gets a 401: it is found or not)."""
    reads = APIRouter()
    # A default, not an annotation: this module's annotations are strings, read in its globals.
    who_is = Depends(view)

    @reads.get(
        "/messages",
        summary="The transcript, whole or cut, paged newest first",
        response_model=None,
        responses=schemas.answers({200: (schemas.Page, "a page, oldest first")}, 400, *auth, 404),
    )
    async def read_messages(
        request: Request, t: T, at: At, who: Viewer = who_is, parts: Parts = None, limit: Limit = None,
        before: Before = None,
    ) -> Response:
        # One hop to the database pool: the page is read in one transaction and sent as stored.
        page = await in_pool(request, t.page_json, who.account, at.agent, call=at.call, cut=parts == "cut",
                             limit=limit, before=before)  # fmt: skip
        return Response(page, media_type="application/json")

    @reads.get(
        "/messages/{message}/parts/{index}",
        summary="One part, whole, or a slice of one of its fields",
        response_model=None,
        responses=schemas.answers(
            {200: (schemas.ref("PartOrSlice"), "the part, whole; with `field`, a slice of that field")},
            *(400, *auth, 404, 429, 503),
        ),
    )
    def read_part(
        request: Request,
        t: T,
        at: At,
        message: MessageId,
        index: Index,
        who: Viewer = who_is,
        field: Field = None,
        start: Offset = None,
        end: Offset = None,
    ) -> Response:
        account = who.account
        if field is not None:  # a slice costs the same whatever the part's size
            return json(t.part_slice(account, at.agent, message, index, field, "0" if start is None else start, end,
                                     at.call))  # fmt: skip
        if start is not None or end is not None:
            raise BadRequest("'start' and 'end' slice a 'field'; name the field", where="field")
        whole_reads: Slots = request.app.state.whole_reads
        heavy: Gate = request.app.state.heavy
        # The account's slot is held until the part is sent; the process-wide one only while
        # the part is read from the database (a client slow to take the bytes holds none).
        size, chunks = whole_reads.streamed(
            who.slot, lambda: heavy.while_read(lambda: t.part_stream(account, at.agent, message, index, at.call))
        )
        return HeldStream(chunks, paced_by=heavy, media_type="application/json", headers={"Content-Length": str(size)})

    @reads.get(
        "/events",
        summary="Server-sent events: each changed message, cut",
        response_class=StreamingResponse,
        responses=schemas.answers({200: ({"type": "string"}, EVENTS)}, 400, *auth, 404, 429,
                                  media="text/event-stream"),  # fmt: skip
    )
    def follow_events(
        request: Request, t: T, at: At, who: Viewer = who_is, since: Since = 0, last_event_id: LastEventId = None
    ) -> Response:
        stream = events.follow(
            t, request.app.state.hub, request.app.state.streams, who.account, at.agent, at.call,
            since=since if last_event_id is None else last_event_id, slot=who.slot,
            allowed=lambda: who.still(at.agent, at.call), check_seconds=who.check_seconds,
            disconnected=request.is_disconnected,
        )  # fmt: skip
        headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
        return StreamingResponse(stream, media_type="text/event-stream", headers=headers)

    return reads


conversation.include_router(conversation_reads(account_viewer))


@router.get(
    "/search",
    summary="Search every transcript the caller may read, cut middles included",
    response_model=None,
    responses=schemas.answers({200: (schemas.SearchPage, "hits, newest first")}, 400, 401, 404, 429, 503),
)
def search(
    request: Request,
    t: T,
    who: Reader,
    q: Query_ = None,
    workspace_id: OptionalWorkspace = None,
    agent: OptionalAgent = None,
    limit: SearchLimit = None,
    cursor: Cursor = None,
) -> Response:
    heavy: Gate = request.app.state.heavy
    searches: Slots = request.app.state.searches
    with heavy.taken(Gate.EVERYONE), searches.taken(who):
        found = t.search(who, q, workspace_id, agent, limit, cursor)
    return json(found)


router.include_router(conversation, prefix="/agents/{agent}", tags=["conversation"])
router.include_router(
    conversation,
    prefix="/agents/{agent}/subagents/{call}",
    tags=["subagent conversation"],
    dependencies=[Depends(subagent)],
    generate_unique_id_function=subagent_operation_id,
)
