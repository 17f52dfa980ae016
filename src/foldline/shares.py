"""Share links over HTTP: members make, list and revoke them; a share link reads its one agent.

What a share link reads is under ``/api/shared/{token}``: what it opens, its agent (without its
workspace and owner), the conversation reads of :mod:`foldline.routes` served a third time with
the share as the reader (:func:`share_viewer`), and search inside the agent. Every refusal is the
one not-found: a share link is never a 401.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Request
from fastapi.responses import Response, StreamingResponse
from fastapi.routing import APIRoute
from starlette.concurrency import run_in_threadpool

from . import schemas
from .errors import BadRequest
from .limits import Gate, Slots
from .routes import (
    AgentId,
    Cursor,
    ExportFormat,
    OptionalAgent,
    OptionalBody,
    Query_,
    Reader,
    SearchLimit,
    T,
    Viewer,
    Writer,
    conversation_reads,
    exported,
    json,
    operation_id,
    subagent,
)
from .service import Transcripts
from .service.shares import as_shared

router = APIRouter(prefix="/api", generate_unique_id_function=operation_id)


ShareToken = Annotated[str, Path(description="the share's token, from its link (/s/{token})")]
SHARE_CHECK_SECONDS = 1.0  # a share's stream asks this often whether the share still opens


async def share_viewer(request: Request, token: ShareToken) -> Viewer:
    """A reader holding a share link: the agent in the path must be the share's (else the one
    not-found, as for a share that is unknown, revoked or expired)."""
    t: Transcripts = request.app.state.transcripts
    share = await run_in_threadpool(t.shared, token, request.path_params.get("agent"))
    return Viewer(share.account, "share:" + share.id, lambda agent, call: t.may_follow_share(token, agent, call),
                  SHARE_CHECK_SECONDS)  # fmt: skip


def shared_operation_id(route: APIRoute) -> str:
    return route.name if route.name.startswith("shared_") else f"shared_{route.name}"


def shared_subagent_operation_id(route: APIRoute) -> str:
    return f"shared_subagent_{route.name}"


ShareId = Annotated[str, Path(description="the share's id (a UUID)", json_schema_extra={"format": "uuid"})]


def share_url(request: Request, token: str) -> str:
    """The panel's address of a share, on the address the request came to."""
    return str(request.base_url).rstrip("/") + "/s/" + token


@router.post(
    "/agents/{agent}/shares",
    status_code=201,
    summary="Make a share link: the agent and its subagents, read-only, without signing in",
    response_model=None,
    openapi_extra=schemas.body("ShareRequest", required=False),
    tags=["shares"],
    responses=schemas.answers({201: (schemas.NewShare, "made; the token is shown once")}, 400, 401, 404, 413, 422),
)
def create_share(request: Request, t: T, who: Writer, agent: AgentId, data: OptionalBody) -> Response:
    if not isinstance(data, dict):
        raise BadRequest("the body must be a JSON object")
    made = t.create_share(who, agent, data.get("expires_in"))
    return json({**made, "url": share_url(request, made["token"])}, 201)


@router.get(
    "/agents/{agent}/shares",
    summary="The agent's share links that have not expired (never their tokens)",
    response_model=None,
    responses=schemas.answers({200: (schemas.Shares, "its shares")}, 401, 404),
    tags=["shares"],
)
def list_shares(t: T, who: Reader, agent: AgentId) -> Response:
    return json({"shares": t.shares(who, agent)})


@router.delete(
    "/shares/{share}",
    status_code=204,
    summary="Revoke a share link: it opens nothing from now on, and its open event streams end",
    response_model=None,
    responses=schemas.answers({204: (None, "revoked")}, 401, 404),
    tags=["shares"],
)
def revoke_share(t: T, who: Writer, share: ShareId) -> Response:
    t.revoke_share(who, share)
    return Response(status_code=204)


# What a share link reads: its agent, the agent's three conversation reads (and its subagents'),
# and search inside it; nothing else. Each is the one not-found for a share that does not open.
shared = APIRouter(prefix="/shared/{token}", tags=["shared"], generate_unique_id_function=shared_operation_id)


@shared.get(
    "",
    summary="What a share link opens",
    response_model=None,
    responses=schemas.answers({200: (schemas.Opened, "the share's agent")}, 404),
)
def shared_opens(t: T, token: ShareToken) -> Response:
    share = t.shared(token)
    return json({"agent_id": share.agent_id, "expires_at": share.expires_at})


@shared.get(
    "/agents/{agent}",
    summary="The shared agent, with its subagents' call ids and its usage by model",
    response_model=None,
    responses=schemas.answers({200: (schemas.SharedAgent, "the agent")}, 404),
)
def shared_agent(t: T, who: Annotated[Viewer, Depends(share_viewer)], agent: AgentId) -> Response:
    return json(as_shared(t.agent(who.account, agent)))


@shared.get(
    "/agents/{agent}/export",
    summary="The shared agent whole, its subagents included, as JSON, Markdown or one HTML file",
    response_class=StreamingResponse,
    responses=schemas.exported(share=True),
)
def shared_export(
    request: Request, t: T, who: Annotated[Viewer, Depends(share_viewer)], agent: AgentId,
    format: ExportFormat = "json",
) -> Response:  # fmt: skip
    return exported(request, who.slot, lambda: t.export(who.account, agent, format, shared=True))


@shared.get(
    "/search",
    summary="Search the shared agent and its subagents, cut middles included",
    response_model=None,
    responses=schemas.answers({200: (schemas.SearchPage, "hits, newest first")}, 400, 404, 429, 503),
)
def shared_search(
    request: Request,
    t: T,
    token: ShareToken,
    q: Query_ = None,
    agent: OptionalAgent = None,
    limit: SearchLimit = None,
    cursor: Cursor = None,
) -> Response:
    share = t.shared(token, agent)
    heavy: Gate = request.app.state.heavy
    searches: Slots = request.app.state.searches
    with heavy.taken(Gate.EVERYONE), searches.taken("share:" + share.id):
        found = t.search(share.account, q, None, share.agent_id, limit, cursor)
    return json(found)


shared_reads = conversation_reads(share_viewer, auth=())
shared.include_router(shared_reads, prefix="/agents/{agent}")
shared.include_router(shared_reads, prefix="/agents/{agent}/subagents/{call}", dependencies=[Depends(subagent)],
                      generate_unique_id_function=shared_subagent_operation_id)  # fmt: skip

router.include_router(shared)
