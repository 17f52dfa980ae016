"""The ASGI app: :func:`create_app` wires the API, the panel and the one error handler."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any, Protocol

import orjson
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.gzip import GZipMiddleware
from fastapi.responses import Response
from starlette.exceptions import HTTPException

from . import __version__, panel, routes
from .errors import BadRequest, FoldlineError, NotFound, error_body
from .events import Hub
from .limits import BodyLimit
from .settings import Settings
from .transcripts import Transcripts

log = logging.getLogger("foldline")


def error_response(exc: FoldlineError) -> Response:
    headers = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else None
    return Response(
        orjson.dumps(error_body(exc)), status_code=exc.status, media_type="application/json", headers=headers
    )


async def on_foldline_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, FoldlineError)
    return error_response(exc)


async def on_validation_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RequestValidationError)
    first: dict[str, Any] = exc.errors()[0] if exc.errors() else {}
    where = ".".join(str(p) for p in first.get("loc", ()))
    return error_response(BadRequest("the request's parameters are not valid", where=where or None))


HTTP_CODES = {405: "method_not_allowed"}


async def on_http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    if exc.status_code == 404:
        return error_response(NotFound())
    error = FoldlineError(str(exc.detail))
    error.status, error.code = exc.status_code, HTTP_CODES.get(exc.status_code, "http_error")
    return error_response(error)


async def on_unexpected(request: Request, exc: Exception) -> Response:
    log.exception("unexpected error on %s %s", request.method, request.url.path)
    return error_response(FoldlineError("the server failed; the error is logged"))


class Background(Protocol):
    """Work that runs beside the app while it serves (such as a folder watcher)."""

    def start(self) -> None: ...

    def stop(self) -> None: ...


def body_limit(max_body: int) -> Callable[[str], int]:
    """Each path's body limit: a sign-in form is small; an API body may be up to ``max_body``."""

    def limit_for(path: str) -> int:
        return panel.MAX_FORM if path in ("/signin", "/signout") else max_body

    return limit_for


def create_app(transcripts: Transcripts, background: Sequence[Background] = ()) -> FastAPI:
    """The app serving ``transcripts``; each of ``background`` starts and stops with it."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        stop = transcripts.listen(hub.notify)  # other processes' writes wake followers too
        poller = asyncio.create_task(hub.poll())  # and those no notice announces (SQLite)
        for work in background:
            work.start()
        try:
            yield
        finally:
            for work in reversed(background):
                work.stop()
            poller.cancel()
            stop()

    hub = Hub(transcripts.seqs, transcripts.settings.poll_seconds)
    app = FastAPI(
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
    app.add_exception_handler(FoldlineError, on_foldline_error)
    app.add_exception_handler(RequestValidationError, on_validation_error)
    app.add_exception_handler(HTTPException, on_http_error)
    app.add_exception_handler(Exception, on_unexpected)
    # Transcript JSON compresses 4-10x; level 1 keeps a whole 100 MB read cheap. SSE is never compressed.
    app.add_middleware(GZipMiddleware, minimum_size=1024, compresslevel=1)
    app.add_middleware(BodyLimit, limit_for=body_limit(transcripts.settings.max_body))
    app.include_router(routes.router)
    panel.mount(app)
    return app


def from_environment() -> FastAPI:
    """The app on the settings of the environment (``FOLDLINE_*``): what each ``--workers`` process runs."""
    from .serving import install_log_filters

    install_log_filters()
    return create_app(Transcripts.open(Settings()))
