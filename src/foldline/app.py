"""The ASGI app: :func:`create_app` wires the API, the panel and the one error handler."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from typing import Any, Protocol

import orjson
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from starlette.datastructures import Headers, MutableHeaders
from starlette.exceptions import HTTPException
from starlette.middleware.gzip import GZipMiddleware, GZipResponder
from starlette.routing import BaseRoute, Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from . import __version__, intake, routes, schemas, shares
from .errors import RETRY_SECONDS, FoldlineError, NotFound, Unavailable, error_body
from .events import Hub
from .limits import BodyLimit, Gate, Slots
from .mcp import http as mcp_http
from .pagereads import PageReads
from .panel import pages, sharing
from .panel.assets import Assets
from .service import Transcripts
from .service.failures import as_error
from .settings import Settings

log = logging.getLogger("foldline")


def error_response(exc: FoldlineError, headers: Mapping[str, str] | None = None) -> Response:
    if exc.status == 401:
        headers = {"WWW-Authenticate": "Bearer"}
    elif isinstance(exc, Unavailable):
        headers = {"Retry-After": str(RETRY_SECONDS)}
    return Response(
        orjson.dumps(error_body(exc)), status_code=exc.status, media_type="application/json", headers=headers
    )


async def on_foldline_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, FoldlineError)
    return error_response(exc)


async def on_validation_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RequestValidationError)
    return error_response(routes.parameter_error(list(exc.errors())))


HTTP_CODES = {405: "method_not_allowed"}


async def on_http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    if exc.status_code == 404:
        return error_response(NotFound())
    error = FoldlineError(str(exc.detail))
    error.status, error.code = exc.status_code, HTTP_CODES.get(exc.status_code, "http_error")
    headers = {"Allow": allowed(request)} if exc.status_code == 405 else exc.headers
    return error_response(error, headers)


METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE")


def allowed(request: Request) -> str:
    """Every method the path answers to, asked of each route (Starlette's own names one route's)."""
    routes = request.app.router.routes
    return ", ".join(m for m in METHODS if any(full(route, {**request.scope, "method": m}) for route in routes))


def full(route: BaseRoute, scope: dict[str, Any]) -> bool:
    return route.matches(scope)[0] is Match.FULL


class Failures:
    """ASGI middleware, the outermost of ours: an exception no handler took becomes one whole
    error response (507 for a full disk, 503 with ``Retry-After`` for a database that cannot
    answer now, 500 for the rest), logged, on a connection that stays usable. After a response
    has started, it can only be ended."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def sending(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, sending)
        except Exception as exc:
            error = as_error(exc)
            if error.status == 500:
                log.exception("unexpected error on %s %s", scope.get("method"), scope.get("path"))
            elif not isinstance(exc, FoldlineError):
                log.warning("%s %s: %s (%s)", scope.get("method"), scope.get("path"), error.message, exc)
            if not started:
                await error_response(error)(scope, receive, send)


class Background(Protocol):
    """Work that runs beside the app while it serves (such as a folder watcher)."""

    def start(self) -> None: ...

    def stop(self) -> None: ...


def body_limit(max_body: int) -> Callable[[str], int]:
    """Each path's body limit: a sign-in form is small; an API body may be up to ``max_body``; a
    UI message stream up to :data:`intake.STREAM_BODIES` times that (each chunk and the message it
    makes are held to ``max_body`` as they are read: :mod:`foldline.intake`)."""

    def limit_for(path: str) -> int:
        if path.startswith("/api/agents/") and path.endswith("/stream"):
            return max_body * intake.STREAM_BODIES
        form = (path.startswith("/agents/") and path.endswith(("/delete", "/share"))) or (
            path.startswith("/shares/") and path.endswith("/revoke")
        )
        small = path in ("/signin", "/signout") or form
        return pages.MAX_FORM if small else max_body

    return limit_for


class BoundedGZip(GZipMiddleware):
    """Starlette's gzip, except for a response whose declared length is past ``maximum_size``:
    that one is sent as it is, as it comes, instead of compressed whole in memory first."""

    def __init__(self, app: ASGIApp, maximum_size: int, minimum_size: int = 500, compresslevel: int = 9) -> None:
        super().__init__(app, minimum_size=minimum_size, compresslevel=compresslevel)
        self.maximum_size = maximum_size

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or "gzip" not in Headers(scope=scope).get("Accept-Encoding", ""):
            await super().__call__(scope, receive, send)
            return
        responder = BoundedResponder(
            self.app, self.minimum_size, compresslevel=self.compresslevel,
            thread_minimum_size=self.thread_minimum_size, exclude_content_types=self.exclude_content_types,
        )  # fmt: skip
        responder.maximum_size = self.maximum_size
        await responder(scope, receive, send)


class BoundedResponder(GZipResponder):
    maximum_size = 0
    as_is = False

    async def send_with_compression(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            length = Headers(raw=message.get("headers") or []).get("content-length", "")
            self.as_is = length.isdigit() and int(length) > self.maximum_size
            if self.as_is:
                message.setdefault("headers", [])
                MutableHeaders(scope=message).add_vary_header("Accept-Encoding")
        if self.as_is:
            await self.send(message)
            return
        await super().send_with_compression(message)


class App(FastAPI):
    def openapi(self) -> dict[str, Any]:
        """FastAPI's document, with the message shapes the routes refer to (:mod:`foldline.schemas`)."""
        if self.openapi_schema is None:
            document = super().openapi()
            document.setdefault("components", {}).setdefault("schemas", {}).update(schemas.components())
        return super().openapi()


def create_app(transcripts: Transcripts, background: Sequence[Background] = ()) -> FastAPI:
    """The app serving ``transcripts``; each of ``background`` starts and stops with it."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        stop = transcripts.listen(hub.notify)  # other processes' writes wake followers too
        poller = asyncio.create_task(hub.poll())  # and those no notice announces (SQLite)
        for work in background:
            work.start()
        checks = transcripts.seq_checks()  # kept pages checked on this loop (PostgreSQL)
        try:
            if checks is not None:
                await checks.open()
                app.state.seq_checks = checks
            yield
        finally:
            for work in reversed(background):
                work.stop()
            poller.cancel()
            stop()
            app.state.seq_checks = None
            if checks is not None:
                await checks.close()
            app.state.db_pool.shutdown(wait=False)

    hub = Hub(transcripts.seqs, transcripts.settings.poll_seconds)
    app = App(
        lifespan=lifespan,
        redirect_slashes=False,
        title="Foldline",
        version=__version__,
        summary="Transcripts of coding agents: pages weigh kilobytes, big parts travel by reference.",
        openapi_url="/api/openapi.json",
        docs_url=None,  # Swagger UI loads from a CDN; Foldline must work offline
        redoc_url=None,
    )
    transcripts.listeners.append(hub.notify)
    app.state.transcripts = transcripts
    app.state.hub = hub
    settings = transcripts.settings
    # Reads that go to the database run here, a few at a time: more threads would only take
    # turns on one interpreter lock (and each one's CPU time grows with the others').
    app.state.db_pool = ThreadPoolExecutor(settings.db_threads, thread_name_prefix="foldline-db")
    app.state.seq_checks = None  # until the lifespan opens them
    app.state.streams = Slots("event streams", settings.max_streams)
    app.state.whole_reads = Slots("whole-part reads", settings.max_whole_reads)
    app.state.searches = Slots("searches", settings.max_searches)
    # Whole reads and searches hold a pooled connection for long: bounded for the whole process,
    # so the pool never runs dry and small requests (a cut page, /api/me) keep their share.
    app.state.heavy = Gate("whole-part reads and searches", settings.max_heavy, settings.db_wait)
    app.add_exception_handler(FoldlineError, on_foldline_error)
    app.add_exception_handler(RequestValidationError, on_validation_error)
    app.add_exception_handler(HTTPException, on_http_error)
    # Transcript JSON compresses 4-10x; level 1 keeps it cheap. SSE is never compressed, nor a body
    # past settings.gzip_max (a whole 100 MB part): it would be compressed whole in memory first.
    app.add_middleware(PageReads, transcripts=transcripts, pool=app.state.db_pool)  # inside gzip
    app.add_middleware(BoundedGZip, maximum_size=settings.gzip_max, minimum_size=1024, compresslevel=1)
    app.add_middleware(BodyLimit, limit_for=body_limit(transcripts.settings.max_body))
    app.add_middleware(Assets)  # the panel's scripts and stylesheet, from memory
    app.add_middleware(Failures)  # outermost: whatever no handler took is one whole error response
    app.include_router(routes.router)
    app.include_router(shares.router)  # share links, and what one reads
    pages.mount(app)
    sharing.mount(app)
    mcp_http.mount(app, transcripts)  # the MCP server at /mcp, for agents
    return app


def from_environment() -> FastAPI:
    """The app on the settings of the environment (``FOLDLINE_*``): what each ``--workers`` process runs."""
    from .server import hand_over_often, install_log_filters, keep_freed_memory

    install_log_filters()
    keep_freed_memory()
    hand_over_often()
    return create_app(Transcripts.open(Settings()))
