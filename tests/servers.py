"""A real Foldline server in a thread, as the tests and the browser tests run it; or the same
app in this process, with no socket (:class:`InProcess`)."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from typing import Any

import httpx

from foldline import server as serving
from foldline.app import create_app
from foldline.service import Transcripts


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class ServerThread:
    """A real uvicorn server in a thread, as a user would run it."""

    def __init__(self, transcripts: Transcripts) -> None:
        self.port = free_port()
        self.app = app = create_app(transcripts)
        config = serving.config(app, transcripts.settings, "127.0.0.1", self.port, log_level="error")
        self.server = serving.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> ServerThread:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("the server did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(10)


class InProcess(httpx.BaseTransport):
    """The real app behind ``httpx.ASGITransport``, for a synchronous ``Client``: no socket, no server.

    Requests run on one event loop in a thread of their own, as uvicorn would run them. The
    app's lifespan does not run (it only listens for other processes' writes), and a response
    is read whole, so an event stream, which never ends, needs a real server.
    """

    def __init__(self, app: Any) -> None:
        self._asgi = httpx.ASGITransport(app)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True, name="in-process-app")
        self._thread.start()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/events"):
            raise AssertionError("an event stream never ends: follow it on a real server (world.url)")

        async def send() -> httpx.Response:
            response = await self._asgi.handle_async_request(request)
            body = b"".join([chunk async for chunk in response.aiter_raw()])  # as sent (gzip too)
            return httpx.Response(response.status_code, headers=response.headers, stream=httpx.ByteStream(body))

        return asyncio.run_coroutine_threadsafe(send(), self._loop).result()

    def close(self) -> None:
        """Keeps running: one transport serves every client of the session."""

    def stop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)
        self._loop.close()
