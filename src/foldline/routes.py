"""The HTTP API: each route parses, calls :class:`~foldline.transcripts.Transcripts`, serialises."""

from __future__ import annotations

from typing import Annotated, Any

import orjson
from fastapi import APIRouter, Depends, Header, Request
from fastapi.responses import Response, StreamingResponse

from . import events
from .errors import BadRequest, PayloadTooLarge
from .transcripts import Transcripts

router = APIRouter(prefix="/api")
TOKEN_COOKIE = "foldline_token"

MESSAGE_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            "application/json": {
                "schema": {
                    "type": "object",
                    "description": "An AI SDK UIMessage. Unknown keys are kept.",
                    "required": ["role", "parts"],
                    "properties": {
                        "id": {"type": "string", "format": "uuid"},
                        "role": {"enum": ["system", "user", "assistant"]},
                        "metadata": {"type": "object"},
                        "parts": {"type": "array", "items": {"type": "object"}},
                    },
                }
            }
        },
    }
}
AGENT_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            "application/json": {
                "schema": {
                    "type": "object",
                    "required": ["workspace_id"],
                    "properties": {"workspace_id": {"type": "string", "format": "uuid"}, "title": {"type": "string"}},
                }
            }
        },
    }
}


def json(data: Any, status: int = 200) -> Response:
    return Response(orjson.dumps(data), status_code=status, media_type="application/json")


def transcripts(request: Request) -> Transcripts:
    t: Transcripts = request.app.state.transcripts
    return t


def account(request: Request, authorization: Annotated[str | None, Header()] = None) -> str:
    """The caller: a bearer token, or (for reads only) the panel's cookie."""
    token = None
    if authorization and authorization[:7].lower() == "bearer ":
        token = authorization[7:].strip()
    elif request.method == "GET":
        token = request.cookies.get(TOKEN_COOKIE)
    return transcripts(request).authenticate(token)


async def body(request: Request) -> Any:
    """The request's JSON, read once within the size limit and decoded once."""
    limit = transcripts(request).settings.max_body
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
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise BadRequest(json_error(raw, exc)) from None


def json_error(raw: bytes, exc: orjson.JSONDecodeError) -> str:
    """Why a body is not JSON, by position, without quoting it."""
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as bad:
        return f"the body is not UTF-8 (byte {bad.start})"
    return f"the body is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"


Account = Annotated[str, Depends(account)]
Body = Annotated[Any, Depends(body)]
T = Annotated[Transcripts, Depends(transcripts)]


def page_args(parts: str | None, limit: str | None) -> tuple[bool, int | None]:
    if parts not in (None, "cut", "whole"):
        raise BadRequest("'parts' is 'cut' or 'whole'", where="parts")
    if limit is None:
        return parts == "cut", None
    if not (limit.isascii() and limit.isdigit() and len(limit) <= 9) or not 1 <= int(limit) <= 1000:
        raise BadRequest("'limit' is a whole number from 1 to 1000", where="limit")
    return parts == "cut", int(limit)


@router.get("/me", summary="The caller and the workspaces it belongs to")
def me(t: T, who: Account) -> Response:
    return json(t.me(who))


@router.post("/agents", status_code=201, summary="Create an agent owned by the caller", openapi_extra=AGENT_BODY)
def create_agent(t: T, who: Account, data: Body) -> Response:
    if not isinstance(data, dict):
        raise BadRequest("the body must be a JSON object")
    return json(t.create_agent(who, data.get("workspace_id"), data.get("title")), 201)


@router.get("/agents", summary="The agents of a workspace, newest activity first")
def list_agents(t: T, who: Account, workspace_id: str | None = None) -> Response:
    return json(t.list_agents(who, workspace_id))


@router.get("/agents/{agent}", summary="One agent, with its subagents' call ids")
def get_agent(t: T, who: Account, agent: str) -> Response:
    return json(t.agent(who, agent))


def _put(t: Transcripts, who: str, agent: str, message: str, data: Any, call: str | None) -> Response:
    result = t.put_message(who, agent, message, data, call)
    return json(result, 201 if result["created"] else 200)


def _read(
    t: Transcripts, who: str, agent: str, call: str | None, parts: str | None, limit: str | None, before: str | None
) -> Response:
    cut, count = page_args(parts, limit)
    return json(t.messages(who, agent, call=call, cut=cut, limit=count, before=before))


def _events(
    request: Request,
    t: Transcripts,
    who: str,
    agent: str,
    call: str | None,
    since: str | None,
    last_event_id: str | None,
) -> Response:
    conv = t.conversation(who, agent, call)
    start = last_event_id or since or "0"
    if not (start.isascii() and start.isdigit()) or len(start) > 18:
        raise BadRequest("'since' (or Last-Event-ID) is a seq from an earlier read", where="since")
    hub: events.Hub = request.app.state.hub
    body = events.stream(
        lambda seq: t.changes(conv, seq),
        lambda timeout: hub.wait(conv.id, timeout),
        int(start),
        request.is_disconnected,
        t.settings.poll_seconds,
    )
    headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    return StreamingResponse(body, media_type="text/event-stream", headers=headers)


@router.put(
    "/agents/{agent}/messages/{message}",
    summary="The write door: create or replace one message",
    openapi_extra=MESSAGE_BODY,
)
def put_message(t: T, who: Account, agent: str, message: str, data: Body) -> Response:
    return _put(t, who, agent, message, data, None)


@router.post("/agents/{agent}/turn-end", summary="End the turn: open tool parts get an unknown outcome")
def turn_end(t: T, who: Account, agent: str) -> Response:
    return json(t.end_turn(who, agent))


@router.get("/agents/{agent}/messages", summary="The transcript, whole or cut, paged newest first")
def read_messages(
    t: T, who: Account, agent: str, parts: str | None = None, limit: str | None = None, before: str | None = None
) -> Response:
    return _read(t, who, agent, None, parts, limit, before)


def _part(
    t: Transcripts,
    who: str,
    agent: str,
    message: str,
    index: str,
    call: str | None,
    field: str | None,
    start: str | None,
    end: str | None,
) -> Response:
    """The whole part, or with ``field`` a slice of that field (``start``/``end`` in code points)."""
    if field is None:
        if start is not None or end is not None:
            raise BadRequest("'start' and 'end' slice a 'field'; name the field", where="field")
        return json(t.part(who, agent, message, index, call))
    return json(t.part_slice(who, agent, message, index, field, "0" if start is None else start, end, call))


@router.get("/search", summary="Search every transcript the caller may read, cut middles included")
def search(
    t: T,
    who: Account,
    q: str | None = None,
    workspace_id: str | None = None,
    agent: str | None = None,
    limit: str | None = None,
    cursor: str | None = None,
) -> Response:
    return json(t.search(who, q, workspace_id, agent, limit, cursor))


@router.get("/agents/{agent}/messages/{message}/parts/{index}", summary="One part, whole, or a slice of one field")
def read_part(
    t: T,
    who: Account,
    agent: str,
    message: str,
    index: str,
    field: str | None = None,
    start: str | None = None,
    end: str | None = None,
) -> Response:
    return _part(t, who, agent, message, index, None, field, start, end)


@router.get("/agents/{agent}/events", summary="Server-sent events: each changed message, cut")
def agent_events(
    request: Request,
    t: T,
    who: Account,
    agent: str,
    since: str | None = None,
    last_event_id: Annotated[str | None, Header()] = None,
) -> Response:
    return _events(request, t, who, agent, None, since, last_event_id)


@router.put(
    "/agents/{agent}/subagents/{call}/messages/{message}",
    summary="The write door, for a subagent's conversation",
    openapi_extra=MESSAGE_BODY,
)
def put_sub_message(t: T, who: Account, agent: str, call: str, message: str, data: Body) -> Response:
    return _put(t, who, agent, message, data, call)


@router.post("/agents/{agent}/subagents/{call}/turn-end", summary="End a subagent's turn")
def sub_turn_end(t: T, who: Account, agent: str, call: str) -> Response:
    return json(t.end_turn(who, agent, call))


@router.get("/agents/{agent}/subagents/{call}/messages", summary="A subagent's transcript")
def read_sub_messages(
    t: T,
    who: Account,
    agent: str,
    call: str,
    parts: str | None = None,
    limit: str | None = None,
    before: str | None = None,
) -> Response:
    return _read(t, who, agent, call, parts, limit, before)


@router.get(
    "/agents/{agent}/subagents/{call}/messages/{message}/parts/{index}",
    summary="One part of a subagent's message, whole, or a slice of one field",
)
def read_sub_part(
    t: T,
    who: Account,
    agent: str,
    call: str,
    message: str,
    index: str,
    field: str | None = None,
    start: str | None = None,
    end: str | None = None,
) -> Response:
    return _part(t, who, agent, message, index, call, field, start, end)


@router.get("/agents/{agent}/subagents/{call}/events", summary="Server-sent events for a subagent")
def sub_events(
    request: Request,
    t: T,
    who: Account,
    agent: str,
    call: str,
    since: str | None = None,
    last_event_id: Annotated[str | None, Header()] = None,
) -> Response:
    return _events(request, t, who, agent, call, since, last_event_id)
