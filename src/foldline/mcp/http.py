"""The MCP server over streamable HTTP at ``/mcp`` on the app: a Foldline bearer token signs each
request in (none or a bad one is a 401, as on the API), and each request is answered on its own
(stateless, JSON answers), so any of ``serve --workers`` may take it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import orjson
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from ..errors import FoldlineError, error_body
from ..service import Transcripts
from ..wire import bearer_token
from .server import ACCOUNT_KEY, http_caller, mcp_server

PATH = "/mcp"


class Endpoint:
    """The ASGI app at :data:`PATH`: sign the request in, then hand it to the SDK's transport."""

    def __init__(self, transcripts: Transcripts) -> None:
        self.transcripts = transcripts
        self.server = mcp_server(transcripts, http_caller)
        self.manager: StreamableHTTPSessionManager | None = None

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """The SDK's request handling, for as long as the app runs (a fresh one each run)."""
        # The token is the guard, never a cookie, so a page elsewhere cannot act for the caller:
        # the SDK's Host and Origin checks (against DNS rebinding) would only refuse remote agents.
        self.manager = StreamableHTTPSessionManager(
            app=self.server._lowlevel_server,  # the SDK's own streamable_http_app builds it so
            json_response=True,
            stateless=True,
            security_settings=TransportSecuritySettings(enable_dns_rebinding_protection=False),
            max_request_body_size=self.transcripts.settings.max_body,
        )
        async with self.manager.run():
            yield
        self.manager = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            scope[ACCOUNT_KEY] = await self.signed_in(scope)
        except FoldlineError as refused:
            await refuse(refused, send)
            return
        if self.manager is None:
            raise RuntimeError("the MCP endpoint is served only while the app's lifespan runs")
        await self.manager.handle_request(scope, receive, send)

    async def signed_in(self, scope: Scope) -> str:
        headers = [value.decode("latin-1") for key, value in scope["headers"] if key == b"authorization"]
        token = bearer_token(headers)
        account = self.transcripts.cached_account(token)
        if account is None:
            account = await run_in_threadpool(self.transcripts.authenticate, token)
        return account


async def refuse(refused: FoldlineError, send: Send) -> None:
    body = orjson.dumps(error_body(refused))
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if refused.status == 401:
        headers.append((b"www-authenticate", b"Bearer"))
    await send({"type": "http.response.start", "status": refused.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def mount(app: Starlette, transcripts: Transcripts) -> None:
    """Serve the MCP endpoint at :data:`PATH` on ``app``, started and stopped with its lifespan."""
    endpoint = Endpoint(transcripts)
    app.router.routes.append(Route(PATH, endpoint, methods=["GET", "POST", "DELETE"], include_in_schema=False))
    inner = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[Any]:
        async with endpoint.running(), inner(app) as state:
            yield state

    app.router.lifespan_context = lifespan
