"""The HTTP API: each route parses, calls :class:`~foldline.transcripts.Transcripts`, serialises.

The five conversation routes are written once (:data:`conversation`) and served under two
prefixes: an agent's (``/api/agents/{agent}``) and a subagent's
(``/api/agents/{agent}/subagents/{call}``). Parameters are declared with their real types; a
refused one is a 400 whose ``where`` names it (:func:`parameter_error`). Bodies are read by hand,
once, within the size limit (:func:`body`); :mod:`foldline.schemas` documents them and every answer.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Annotated, Any, Literal, TypeVar
from urllib.parse import parse_qsl

import orjson
from annotated_types import Interval
from fastapi import APIRouter, Depends, Header, Path, Query, Request
from fastapi.responses import Response, StreamingResponse
from fastapi.routing import APIRoute
from fastapi.security import APIKeyCookie, HTTPAuthorizationCredentials, HTTPBearer
from pydantic import AfterValidator, BeforeValidator, StringConstraints
from pydantic.json_schema import SkipJsonSchema
from starlette.concurrency import run_in_threadpool
from starlette.requests import cookie_parser

from . import events, schemas
from .errors import BadRequest, Invalid, PayloadTooLarge
from .limits import Slots
from .message import inexact_integer
from .transcripts import Transcripts

TOKEN_COOKIE = "foldline_token"


def json(data: Any, status: int = 200) -> Response:
    return Response(orjson.dumps(data), status_code=status, media_type="application/json")


R = TypeVar("R")


async def in_pool(request: Request, work: Callable[..., R], *args: Any, **kwargs: Any) -> R:
    """Run database work (and the encoding beside it) in the app's one bounded pool of threads."""
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(request.app.state.db_pool, functools.partial(work, *args, **kwargs))


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
    authorization = request.headers.get("authorization", "")
    if authorization[:7].lower() == "bearer ":
        return authorization[7:].strip()
    return request.cookies.get(TOKEN_COOKIE)


async def signed_in(request: Request, token: str | None) -> str:
    t: Transcripts = request.app.state.transcripts
    account = t.cached_account(token)
    if account is None:
        account = await run_in_threadpool(t.authenticate, token)
    return account


async def writer(request: Request, credentials: Bearer) -> str:
    """The caller of a write: a bearer token, never the cookie (a forged cross-site form changes nothing)."""
    return await signed_in(request, credentials.credentials.strip() if credentials else None)


async def reader(request: Request, credentials: Bearer, panel: Annotated[str | None, Depends(cookie)]) -> str:
    """The caller of a read: a bearer token, or the panel's cookie."""
    return await signed_in(request, credentials.credentials.strip() if credentials else panel)


async def body(request: Request) -> Any:
    """The request's JSON, read once within the size limit and decoded once."""
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


Reader = Annotated[str, Depends(reader)]
Writer = Annotated[str, Depends(writer)]
Body = Annotated[Any, Depends(body)]
T = Annotated[Transcripts, Depends(transcripts)]
At = Annotated[Address, Depends(address)]

# -- parameters -------------------------------------------------------------------------------


def digits(most: int) -> BeforeValidator:
    """Only ASCII digits, at most ``most`` of them (no sign, space, ``_``, or other scripts' digits)."""

    def check(value: Any) -> Any:
        if isinstance(value, str) and not (value.isascii() and value.isdigit() and len(value) <= most):
            raise ValueError("not a whole number")
        return value

    return BeforeValidator(check)


def no_empty(value: Any) -> Any:
    return None if value == "" else value


# The store keeps positions and seqs in 32-bit INTEGER columns: a cursor past them was never given.
MAX_COUNTER = 2**31 - 1


def position(value: str) -> str:
    if int(value) > MAX_COUNTER:
        raise ValueError("past any position")
    return value


# Bounds go inside the type, before the digits check, so the document shows them as JSON Schema.
Seq = Annotated[int, Interval(ge=0, le=MAX_COUNTER), digits(10)]
Limit = Annotated[
    Annotated[int, Interval(ge=1, le=1000), digits(4)] | SkipJsonSchema[None],
    Query(description="the newest N messages; without it, all of them"),
]
Parts = Annotated[
    Literal["cut", "whole"] | SkipJsonSchema[None],
    Query(description="cut: big fields of some parts replaced by a reference (see cutParts)"),
]
Before = Annotated[
    Annotated[str, StringConstraints(pattern="^[0-9]{1,10}$"), AfterValidator(position)] | SkipJsonSchema[None],
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

Field = Annotated[
    Literal["text", "output", "errorText", "input"] | SkipJsonSchema[None],
    Query(description="with it, a slice of that field of the part instead of the whole part"),
]
Offset = Annotated[
    str | SkipJsonSchema[None],
    Query(description="a code-point offset in the field (`start` from 0; `end` exclusive, clamped to its length)",
          json_schema_extra={"pattern": "^[0-9]{1,16}$"}),
]
Query_ = Annotated[
    str | SkipJsonSchema[None],
    Query(description="words that must all match (case-insensitive substrings); \"quoted phrases\" as written; "
          "at most 256 characters"),
]
SearchLimit = Annotated[
    str | SkipJsonSchema[None],
    Query(description="hits per page, 1 to 100 (default 20)", json_schema_extra={"pattern": "^[0-9]{1,3}$"}),
]
Cursor = Annotated[str | SkipJsonSchema[None], Query(description="a previous page's `next`")]
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
    Query(description="activity (default), messages, tokens, cost or title",
          json_schema_extra={"enum": ["activity", "messages", "tokens", "cost", "title"]}),
]
AgentOrder = Annotated[
    str | SkipJsonSchema[None],
    Query(description="asc or desc (default: desc, but asc for title)", json_schema_extra={"enum": ["asc", "desc"]}),
]
AgentSource = Annotated[
    str | SkipJsonSchema[None],
    Query(description="only agents of this source", json_schema_extra={"enum": ["claude-code", "codex", "api"]}),
]
AgentProject = Annotated[
    str | SkipJsonSchema[None], Query(description="only agents that ran in this folder (as `project` gives it)")
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
conversation = APIRouter()  # served twice, below


@router.get(
    "/me",
    summary="The caller and the workspaces it belongs to",
    response_model=None,
    responses=schemas.answers({200: (schemas.Me, "the caller")}, 401),
    tags=["accounts"],
)
def me(t: T, who: Reader) -> Response:
    return json(t.me(who))


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
    limit: AgentLimit = None,
    cursor: Cursor = None,
) -> Response:
    return json(t.list_agents(who, workspace_id, sort=sort, order=order, source=source, project=project,
                              limit=limit, cursor=cursor))  # fmt: skip


@router.get(
    "/agents/{agent}",
    summary="One agent, with its subagents' call ids and its usage by model",
    response_model=None,
    responses=schemas.answers({200: (schemas.Agent, "the agent")}, 401, 404),
    tags=["agents"],
)
def get_agent(t: T, who: Reader, agent: AgentId) -> Response:
    return json(t.agent(who, agent))


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


@conversation.get(
    "/messages",
    summary="The transcript, whole or cut, paged newest first",
    response_model=None,
    responses=schemas.answers({200: (schemas.Page, "a page, oldest first")}, 400, 401, 404),
)
async def read_messages(
    request: Request, t: T, who: Reader, at: At, parts: Parts = None, limit: Limit = None, before: Before = None
) -> Response:
    # One hop to the database pool: the page is read in one transaction and sent as stored.
    page = await in_pool(request, t.page_json, who, at.agent, call=at.call, cut=parts == "cut", limit=limit,
                         before=before)  # fmt: skip
    return Response(page, media_type="application/json")


@conversation.get(
    "/messages/{message}/parts/{index}",
    summary="One part, whole, or a slice of one of its fields",
    response_model=None,
    responses=schemas.answers(
        {200: (schemas.ref("PartOrSlice"), "the part, whole; with `field`, a slice of that field")}, 400, 401, 404, 429
    ),
)
def read_part(
    request: Request,
    t: T,
    who: Reader,
    at: At,
    message: MessageId,
    index: Index,
    field: Field = None,
    start: Offset = None,
    end: Offset = None,
) -> Response:
    if field is not None:  # a slice costs the same whatever the part's size
        return json(t.part_slice(who, at.agent, message, index, field, "0" if start is None else start, end, at.call))
    if start is not None or end is not None:
        raise BadRequest("'start' and 'end' slice a 'field'; name the field", where="field")
    whole_reads: Slots = request.app.state.whole_reads
    whole_reads.acquire(who)  # held until the last byte is sent (or the client goes)
    try:
        size, chunks = t.part_stream(who, at.agent, message, index, at.call)
        sending = held_until_sent(chunks, lambda: whole_reads.release(who))
        first = next(sending)  # started: from here on, closing it gives the slot back
    except BaseException:
        whole_reads.release(who)
        raise
    headers = {"Content-Length": str(size)}
    return StreamingResponse(itertools.chain((first,), sending), media_type="application/json", headers=headers)


def held_until_sent(chunks: Iterator[bytes], release: Callable[[], None]) -> Iterator[bytes]:
    """``chunks``, then ``release()``: at their end, or when the response is dropped unfinished."""
    try:
        yield b""
        yield from chunks
    finally:
        close = getattr(chunks, "close", None)
        if close is not None:
            close()
        release()


@conversation.get(
    "/events",
    summary="Server-sent events: each changed message, cut",
    response_class=StreamingResponse,
    responses=schemas.answers({200: ({"type": "string"}, EVENTS)}, 400, 401, 404, 429, media="text/event-stream"),
)
def follow_events(
    request: Request, t: T, who: Reader, at: At, since: Since = 0, last_event_id: LastEventId = None
) -> Response:
    conv = t.conversation(who, at.agent, at.call)
    hub: events.Hub = request.app.state.hub
    streams: Slots = request.app.state.streams
    token = token_of(request)
    streams.check(who)  # a 429 now; the slot itself is taken and given back by the stream
    stream = events.stream(
        lambda seq, n: t.changes(conv, seq, n),
        lambda timeout: hub.wait(conv.id, timeout),
        since if last_event_id is None else last_event_id,
        request.is_disconnected,
        lambda: t.may_follow(token, who, at.agent, at.call),
        on_open=lambda: streams.add(who),
        on_close=lambda: streams.release(who),
    )
    headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    return StreamingResponse(stream, media_type="text/event-stream", headers=headers)


@router.get(
    "/search",
    summary="Search every transcript the caller may read, cut middles included",
    response_model=None,
    responses=schemas.answers({200: (schemas.SearchPage, "hits, newest first")}, 400, 401, 404),
)
def search(
    t: T,
    who: Reader,
    q: Query_ = None,
    workspace_id: OptionalWorkspace = None,
    agent: OptionalAgent = None,
    limit: SearchLimit = None,
    cursor: Cursor = None,
) -> Response:
    return json(t.search(who, q, workspace_id, agent, limit, cursor))


router.include_router(conversation, prefix="/agents/{agent}", tags=["conversation"])
router.include_router(
    conversation,
    prefix="/agents/{agent}/subagents/{call}",
    tags=["subagent conversation"],
    dependencies=[Depends(subagent)],
    generate_unique_id_function=subagent_operation_id,
)


# -- the page read's short way in -------------------------------------------------------------

PAGE_PATH = re.compile(r"/api/agents/([^/]+)(?:/subagents/([^/]+))?/messages")
PAGE_QUERY = {"parts", "limit", "before"}
CUT_OR_WHOLE = {"cut": True, "whole": False}


class PageReads:
    """ASGI middleware: a transcript read in its common form, answered without FastAPI's
    per-request machinery (route matching over every route, the dependency graph, parameter
    models), which cost a cut page as much as the page itself.

    It answers only a plain ``GET …/messages`` that :func:`read_messages` would answer the same
    way: each parameter at most once and valid as the route declares it, and a token this
    process has authenticated in the last few seconds. Anything else, and any refusal (401,
    404, 400), goes on to the route itself, which stays the one that documents and decides.
    """

    def __init__(self, app: Any, transcripts: Transcripts, pool: Any) -> None:
        self.app, self.transcripts, self.pool = app, transcripts, pool
        self.on_loop = transcripts.reads_are_local

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["method"] == "GET":
            found = PAGE_PATH.fullmatch(scope["path"])
            if found is not None:
                page = await self._page(scope, found.group(1), found.group(2))
                if page is not None:
                    headers = [(b"content-length", b"%d" % len(page)), (b"content-type", b"application/json")]
                    await send({"type": "http.response.start", "status": 200, "headers": headers})
                    await send({"type": "http.response.body", "body": page})
                    return
        await self.app(scope, receive, send)

    async def _page(self, scope: dict[str, Any], agent: str, call: str | None) -> bytes | None:
        query = parse_qsl(scope["query_string"].decode("latin-1"), keep_blank_values=True)
        params = dict(query)
        if len(params) != len(query) or not PAGE_QUERY.issuperset(params):
            return None
        cut = CUT_OR_WHOLE.get(params.get("parts", "whole"))
        limit, before = params.get("limit"), params.get("before")
        if cut is None:
            return None
        if limit is not None and not (limit.isascii() and limit.isdigit() and len(limit) <= 4):
            return None
        if limit is not None and not 1 <= int(limit) <= 1000:
            return None
        if before is not None and not (BEFORE.fullmatch(before) and int(before) <= MAX_COUNTER):
            return None
        account = self.transcripts.cached_account(token_in(scope))
        if account is None:
            return None
        work = functools.partial(
            self.transcripts.page_json, account, agent, call=call, cut=cut,
            limit=None if limit is None else int(limit), before=before,
        )  # fmt: skip
        checks = scope["app"].state.seq_checks
        try:
            if self.on_loop and cut and limit is not None and int(limit) <= ON_LOOP_MOST:
                page: bytes | None = work()
            else:
                page = None if checks is None else await self.transcripts.kept_page(checks, *work.args, **work.keywords)
                if page is None:
                    read = work if checks is None else functools.partial(work, reread=True)
                    page = await asyncio.get_running_loop().run_in_executor(self.pool, read)
        except Exception:  # the route says why, in its own words
            return None
        return page


BEFORE = re.compile("[0-9]{1,10}")
# A cut page of at most this many messages read from a local SQLite file takes a millisecond or
# two (50 messages of 50 tool parts each: 1.4 ms), less than handing it to a thread and back
# costs once the interpreter lock is shared: such a read runs on the event loop itself.
ON_LOOP_MOST = 200


def token_in(scope: dict[str, Any]) -> str | None:
    """The token :func:`reader` would take from a request: a bearer token, else the panel's cookie."""
    authorization: str | None = None
    cookies: str | None = None
    for name, value in scope["headers"]:
        if name == b"authorization":
            authorization = value.decode("latin-1")
        elif name == b"cookie":
            cookies = value.decode("latin-1")
    if authorization is not None:
        scheme, _, credentials = authorization.partition(" ")
        if scheme.lower() == "bearer" and credentials:
            return credentials.strip()
    found: str | None = cookie_parser(cookies).get(TOKEN_COOKIE) if cookies else None
    return found
