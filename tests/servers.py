"""A real Foldline server in a thread, as the tests and the browser tests run it."""

from __future__ import annotations

import socket
import threading
import time

from foldline import serving
from foldline.app import create_app
from foldline.transcripts import Transcripts


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class ServerThread:
    """A real uvicorn server in a thread, as a user would run it."""

    def __init__(self, transcripts: Transcripts) -> None:
        self.port = free_port()
        app = create_app(transcripts)
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
