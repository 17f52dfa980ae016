"""The panel's scripts and stylesheet, answered from memory (:class:`Assets`), and its modules
joined into one script when first asked for (:class:`Bundle`, ``/static/bundle.js``)."""

from __future__ import annotations

import gzip
import hashlib
import logging
import os
from dataclasses import dataclass
from email.utils import formatdate
from importlib import resources
from pathlib import Path

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from .bundle import BundleError, bundle

STATIC = Path(str(resources.files("foldline") / "static"))
STATIC_ROUTE = "/static/"
BUNDLE_ROUTE = STATIC_ROUTE + "bundle.js"
log = logging.getLogger("foldline")

ASSET_TYPES = {".js": b"text/javascript; charset=utf-8", ".css": b"text/css; charset=utf-8"}
GZIP_MIN = 1024  # as the app's own gzip: smaller bodies are sent as they are


@dataclass(frozen=True)
class Asset:
    """One static file as sent: its bytes, gzipped once, and the headers a cache needs."""

    stamp: tuple[int, int]  # the file's (mtime_ns, size) when read
    body: bytes
    gzipped: bytes | None
    headers: list[tuple[bytes, bytes]]
    etag: bytes

    @classmethod
    def read(cls, path: Path) -> Asset:
        stat = path.stat()
        return cls.of(path.read_bytes(), ASSET_TYPES[path.suffix], stat.st_mtime, (stat.st_mtime_ns, stat.st_size))

    @classmethod
    def of(cls, body: bytes, kind: bytes, mtime: float, stamp: tuple[int, int]) -> Asset:
        packed = gzip.compress(body, compresslevel=9, mtime=0) if len(body) >= GZIP_MIN else None
        etag = b'"' + hashlib.blake2b(body, digest_size=16).hexdigest().encode() + b'"'
        headers = [
            (b"content-type", kind),
            (b"etag", etag),
            (b"last-modified", formatdate(mtime, usegmt=True).encode()),
            (b"cache-control", b"no-cache"),  # kept, but asked again each time: a new version is seen at once
            (b"vary", b"Accept-Encoding"),
        ]
        return cls(stamp, body, packed if packed and len(packed) < len(body) else None, headers, etag)


class Bundle:
    """``/static/bundle.js``: ``app.js`` and every module it imports as one script
    (:mod:`foldline.panel.bundle`), joined when first asked for and again when one of them changes.

    A module the bundler cannot take leaves a one-line script that imports ``app.js`` itself
    (the modules load one by one, as they are), and a warning in the log.
    """

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.names: list[str] = []
        self.built: tuple[tuple[int, int], ...] | None = None
        self.asset: Asset | None = None

    def stamps(self) -> tuple[tuple[int, int], ...] | None:
        try:
            return tuple((s.st_mtime_ns, s.st_size) for s in (os.stat(self.directory / n) for n in self.names))
        except OSError:
            return None

    def current(self) -> Asset:
        stamps = self.stamps()
        if self.asset is None or stamps is None or stamps != self.built:
            self.asset = self.build()
        return self.asset

    def build(self) -> Asset:
        try:
            text, self.names = bundle(self.directory)
        except (BundleError, OSError) as error:
            log.warning("the panel's modules load one by one: %s", error)
            text, self.names = f'import "{STATIC_ROUTE}app.js";\n', ["app.js"]
        self.built = self.stamps()
        newest = max((ns for ns, _ in self.built or ()), default=0)
        return Asset.of(text.encode(), ASSET_TYPES[".js"], newest / 1e9, (newest, len(text)))


class Assets:
    """ASGI middleware: ``GET /static/…`` of the panel's scripts and stylesheet, from memory.

    A first view loads thirteen scripts and the stylesheet at once; through Starlette's
    ``StaticFiles``, the routing and the app's gzip each took milliseconds of the one event loop.
    Here a file is read (and gzipped at level 9) once, and again only when its modification
    time or size changes; ``If-None-Match`` gets a 304. Any other path goes on to the app.
    """

    def __init__(self, app: ASGIApp, directory: Path = STATIC) -> None:
        self.app = app
        self.paths = {
            f"/static/{p.relative_to(directory).as_posix()}": p
            for p in directory.rglob("*")
            if p.suffix in ASSET_TYPES and p.is_file()
        }
        self.cache: dict[str, Asset] = {}
        self.bundle = BUNDLE if directory == STATIC else Bundle(directory)

    def asset(self, route: str) -> Asset | None:
        if route == BUNDLE_ROUTE:
            return self.bundle.current()
        path = self.paths.get(route)
        if path is None:
            return None
        try:
            stat = os.stat(path)
        except OSError:
            return None
        found = self.cache.get(route)
        if found is None or found.stamp != (stat.st_mtime_ns, stat.st_size):
            found = self.cache[route] = Asset.read(path)
        return found

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        asset = None
        if scope["type"] == "http" and scope["method"] in ("GET", "HEAD"):
            asset = self.asset(scope["path"])
        if asset is None:
            await self.app(scope, receive, send)
            return
        asked = Headers(scope=scope)
        if asked.get("if-none-match") == asset.etag.decode():
            headers = [(k, v) for k, v in asset.headers if k in (b"etag", b"cache-control", b"vary")]
            await send({"type": "http.response.start", "status": 304, "headers": headers})
            await send({"type": "http.response.body", "body": b""})
            return
        body, headers = asset.body, list(asset.headers)
        if asset.gzipped is not None and "gzip" in asked.get("accept-encoding", ""):
            body = asset.gzipped
            headers.append((b"content-encoding", b"gzip"))
        headers.append((b"content-length", b"%d" % len(body)))
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": b"" if scope["method"] == "HEAD" else body})


BUNDLE = Bundle(STATIC)  # the panel's, which the shell also holds (foldline/panel/shell.py)
