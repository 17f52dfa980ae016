"""The bare ASGI app of bench/throughput.py: the same bytes from memory, under Foldline's uvicorn settings.

    python bench/bare_app.py PORT /path?query=FILE ...

Each request whose path and query match one given is answered with that file's bytes (read
once at start) as ``application/json``; anything else is a 404. It is served by
``foldline.server`` exactly as ``foldline serve`` serves the app (protocol, limits, log level).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from foldline import server as serving
from foldline.settings import Settings


def app_for(bodies: dict[str, bytes]) -> Any:
    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        query = scope.get("query_string", b"").decode()
        body = bodies.get(scope["path"] + ("?" + query if query else ""))
        status = 200 if body is not None else 404
        body = body if body is not None else b'{"error": {"code": "not_found"}}'
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    return app


def main() -> None:
    port = int(sys.argv[1])
    bodies = {}
    for arg in sys.argv[2:]:
        path, file = arg.rsplit("=", 1)
        bodies[path] = Path(file).read_bytes()
    settings = Settings()
    serving.Server(serving.config(app_for(bodies), settings, "127.0.0.1", port, log_level="info")).run()


if __name__ == "__main__":
    main()
