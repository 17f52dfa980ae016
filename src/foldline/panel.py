"""The panel: the app shell, sign-in and sign-out, and the static files it runs on.

The panel is plain JavaScript modules in ``static/`` (no build step). The token a person signs
in with is kept in an HttpOnly, SameSite=Strict cookie (``foldline_token``) that the API
accepts for GET requests.

A sign-in link carries its token after ``#`` (``/signin#token=…``): a fragment never reaches a
server, so no access log, proxy or ``Referer`` sees it. The sign-in page's script moves it into
the form and posts it; when the browser is already signed in, it asks first, so a link from
another site cannot silently swap a person's session. Signing in and out are same-site POSTs.

The shell loads fast: it names every module with ``<link rel="modulepreload">``, so the browser
fetches them all at once instead of finding each import only after its importer arrived, and a
transcript's shell names the reads its first view needs (the agent and the newest page) with
``<link rel="preload" as="fetch">``, so they run while the modules load; the panel's own
``fetch`` of the same address is answered from them. The scripts and the stylesheet are answered
from memory, compressed once (:class:`Assets`), before the app's routing and middleware.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import html
import logging
import os
import uuid
import zlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from email.utils import formatdate
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, urlencode

import orjson
from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response, StreamingResponse
from fastapi.staticfiles import StaticFiles
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from .bundle import BundleError, bundle
from .errors import FoldlineError, Unauthorized
from .routes import TOKEN_COOKIE, in_pool
from .transcripts import Transcripts

STATIC = Path(str(resources.files("foldline") / "static"))
STATIC_ROUTE = "/static/"
BUNDLE_ROUTE = STATIC_ROUTE + "bundle.js"
FIRST_VIEW_PLACE = "</body>"  # a transcript's first view goes in the shell just before it
FIRST_PAGE = 15  # the newest messages a transcript opens on: static/transcript.js's PAGE
COOKIE_SECONDS = 30 * 24 * 3600
log = logging.getLogger("foldline")
MAX_FORM = 4096

# Defence in depth: nothing inline runs, nothing is fetched from elsewhere.
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
PAGE_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}

SIGNIN = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign in · Foldline</title><link rel="icon" href="data:,"><link rel="stylesheet" href="/static/panel.css">
<script type="module" src="/static/signin.js"></script></head>
<body class="signin"><main class="signin-box">
<h1>Foldline</h1>
<form method="post" action="/signin" id="signin">
{current}
<label for="token">Token</label>
<input id="token" name="token" type="password" autocomplete="current-password" required autofocus>
<input type="hidden" name="next" value="{next}">
<button type="submit">Sign in</button>
</form>
{error}
<p class="hint"><code>foldline serve</code> prints a link that signs you in. Or make a token:
<code>foldline account token ACCOUNT_ID</code> prints a new one (<code>foldline account list</code>
lists the account ids).</p>
</main></body></html>
"""


# Messages the sign-in page shows for ``?error=``: fixed texts, never anything from the address.
ERRORS = {"token": "That token is not valid."}

SIGNOUT = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign out · Foldline</title><link rel="icon" href="data:,"><link rel="stylesheet" href="/static/panel.css"></head>
<body class="signin"><main class="signin-box">
<h1>Foldline</h1>
<form method="post" action="/signout"><button type="submit" id="signout">Sign out</button></form>
<p class="hint"><a href="/">Back to the panel</a></p>
</main></body></html>
"""


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
    (:mod:`foldline.bundle`), joined when first asked for and again when one of them changes.

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
        self.bundle = Bundle(directory)

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


def _transcripts(request: Request) -> Transcripts:
    t: Transcripts = request.app.state.transcripts
    return t


def _valid(request: Request, token: str | None) -> bool:
    try:
        _transcripts(request).authenticate(token)
    except Unauthorized:
        return False
    return True


def _safe_next(value: str | None) -> str:
    """A path on this site to go back to after signing in; anything else becomes ``/``."""
    if not value or not value.startswith("/") or value.startswith("//") or "\\" in value:
        return "/"
    return value


def _page(content: str | bytes, status: int = 200) -> Response:
    return HTMLResponse(content, status_code=status, headers=PAGE_HEADERS)


def _redirect(to: str) -> RedirectResponse:
    return RedirectResponse(to, status_code=303, headers={"Cache-Control": "no-store"})


def _set_cookie(request: Request, response: Response, token: str) -> None:
    response.set_cookie(
        TOKEN_COOKIE,
        token,
        max_age=COOKIE_SECONDS,
        path="/",
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )


def signin_page(next_path: str = "/", error: str = "", status: int = 200, current: str | None = None) -> Response:
    """The sign-in form; ``current`` names the account this browser is already signed in as."""
    note = f'<p class="error" role="alert">{html.escape(error)}</p>' if error else ""
    signed_in = ""
    if current is not None:
        name = html.escape(current or "an account")
        signed_in = (
            f'<p class="current" data-current="{name}">This browser is signed in as <strong>{name}</strong>. '
            'Signing in with another token replaces that session. <a href="/">Stay signed in</a></p>'
        )
    page = SIGNIN.format(next=html.escape(next_path, quote=True), error=note, current=signed_in)
    return _page(page, status)


def _current(request: Request) -> str | None:
    """The name of the account this browser's cookie signs in as, if it is valid."""
    t = _transcripts(request)
    try:
        account = t.authenticate(request.cookies.get(TOKEN_COOKIE))
    except Unauthorized:
        return None
    return str(t.me(account).get("name") or "")


def _here(request: Request) -> str:
    """This page's path and query (a subagent's ``?call=``), the token taken out.

    The fragment (where in the transcript) never reaches the server: a browser keeps it across
    a redirect whose address has none, and the sign-in page's script puts it back in ``next``.
    """
    kept = [(k, v) for k, v in request.query_params.multi_items() if k != "token"]
    return request.url.path + ("?" + urlencode(kept) if kept else "")


@functools.cache
def _shell() -> tuple[str, str]:
    """The shell's HTML before and after the place for a transcript's first view."""
    page = (STATIC / "index.html").read_text(encoding="utf-8")
    head, rest = page.split(FIRST_VIEW_PLACE, 1)
    return head, FIRST_VIEW_PLACE + rest


def first_view(t: Transcripts, account: str, agent: str) -> bytes | None:
    """What a transcript's first view draws, as the API would answer ``account``: the agent and
    its newest page (``{"agent": …, "page": …}``), or ``None`` when it may not read it (the panel
    then asks the API, which says why).

    It goes in the shell as ``<script type="application/json">``, which runs nothing and ends only
    at ``</script``: every ``<`` is written ``\\u003c`` (the same string to ``JSON.parse``).
    """
    try:
        info = orjson.dumps(t.agent(account, agent))
        page = t.page_json(account, agent, cut=True, limit=FIRST_PAGE)
    except FoldlineError:
        return None
    return (b'{"agent":' + info + b',"page":' + page + b"}").replace(b"<", b"\\u003c")


def shell_page(data: bytes | None = None) -> bytes:
    """The app shell; for a transcript, its first view's data in it (:func:`first_view`)."""
    head, rest = _shell()
    return head.encode() + held(data) + rest.encode()


def held(data: bytes | None) -> bytes:
    """The first view as the shell holds it: a data block (it runs nothing), or nothing."""
    if data is None:
        return b""
    return b'<script type="application/json" id="first-view">' + data + b"</script>\n"


class Packer:
    """Compress a page sent in pieces: each piece goes out whole (a sync flush), so the browser
    reads the head, and asks for the scripts it names, before the rest is written."""

    def __init__(self, gzipped: bool) -> None:
        self.zip = zlib.compressobj(6, zlib.DEFLATED, 31) if gzipped else None  # 31: the gzip format

    def __call__(self, piece: bytes, last: bool = False) -> bytes:
        if self.zip is None:
            return piece
        return self.zip.compress(piece) + self.zip.flush(zlib.Z_FINISH if last else zlib.Z_SYNC_FLUSH)


def streamed_shell(request: Request, account: str, agent: str) -> Response:
    """A transcript's shell, sent in two pieces: the head at once (the browser starts on the
    script and the stylesheet), then the first view, read meanwhile in the database's pool."""
    gzipped = "gzip" in request.headers.get("accept-encoding", "")
    pack = Packer(gzipped)
    head, rest = _shell()

    async def pieces() -> AsyncIterator[bytes]:
        yield pack(head.encode())
        try:
            data = await in_pool(request, first_view, _transcripts(request), account, agent)
        except Exception:  # the page still works: the panel reads the API, which tells what failed
            log.exception("a transcript's first view could not be read for its shell")
            data = None
        yield pack(held(data) + rest.encode(), last=True)

    headers = {**PAGE_HEADERS, **({"Content-Encoding": "gzip", "Vary": "Accept-Encoding"} if gzipped else {})}
    return StreamingResponse(pieces(), media_type="text/html; charset=utf-8", headers=headers)


def _canonical(agent: str | None) -> str | None:
    """The agent's id if it is written as the panel asks for it (a lower-case UUID), else ``None``."""
    try:
        return agent if agent is not None and str(uuid.UUID(agent)) == agent else None
    except ValueError:
        return None


async def _account(request: Request) -> str | None:
    """The account the request's cookie signs in as (the API's readers take the same cookie)."""
    t = _transcripts(request)
    token = request.cookies.get(TOKEN_COOKIE)
    account = t.cached_account(token)
    if account is not None:
        return account
    try:
        return await in_pool(request, t.authenticate, token)
    except Unauthorized:
        return None


async def shell(request: Request) -> Response:
    """The app shell for ``/`` and ``/agents/{agent}``; a transcript's holds its first view.

    The shell is sent only to a request whose cookie the API would take (else the sign-in page),
    and what it holds is what the API would answer that cookie, read in the same pool of threads.
    An old-style link with ``?token=`` is sent on to the sign-in page with the token moved
    after ``#`` (the ``Location`` header is not logged; the access log redacts the first request).
    """
    token = request.query_params.get("token")
    if token is not None:
        return _redirect("/signin?next=" + quote(_here(request), safe="") + "#token=" + quote(token, safe=""))
    account = await _account(request)
    if account is None:
        return _redirect("/signin?next=" + quote(_here(request), safe=""))
    agent = _canonical(request.path_params.get("agent"))
    return _page(shell_page()) if agent is None else streamed_shell(request, account, agent)


async def signin(request: Request) -> Response:
    error = ERRORS.get(request.query_params.get("error") or "", "")
    return signin_page(_safe_next(request.query_params.get("next")), error, current=_current(request))


def _cross_site(request: Request) -> bool:
    """A form posted from another site: its ``Origin`` is not this one, or the browser says so."""
    if request.headers.get("sec-fetch-site") in ("cross-site", "same-site"):
        return True
    origin = request.headers.get("origin")
    return origin is not None and origin != f"{request.url.scheme}://{request.url.netloc}"


async def signin_post(request: Request) -> Response:
    if _cross_site(request):
        return signin_page("/", "Sign in from this page.", 403)
    raw = await request.body()  # bounded while read: the app's BodyLimit allows MAX_FORM here
    form = parse_qs(raw.decode("utf-8", "replace"))
    token = (form.get("token") or [""])[0].strip()
    next_path = _safe_next((form.get("next") or ["/"])[0])
    if not _valid(request, token):
        return signin_page(next_path, "That token is not valid.", 401)
    response = _redirect(next_path)
    # The browser keeps a session token of its own (30 days), never the token typed or linked;
    # signing out revokes it, so a copy of the cookie stops working too.
    _set_cookie(request, response, _transcripts(request).start_session(token))
    return response


async def signout_page(request: Request) -> Response:
    """Signing out is a POST: a link (from another site, say) only shows the button."""
    return _page(SIGNOUT)


async def signout(request: Request) -> Response:
    if _cross_site(request):
        return _redirect("/")
    _transcripts(request).end_session(request.cookies.get(TOKEN_COOKIE))
    response = _redirect("/signin")
    response.delete_cookie(TOKEN_COOKIE, path="/", httponly=True, samesite="strict")
    return response


# The panel's pages in the OpenAPI document (so they are fuzzed like the API): HTML, or a redirect.
HTML = {"description": "a page", "content": {"text/html": {"schema": {"type": "string"}}}}
REDIRECT = {"description": "to the sign-in page, or on to the page asked for"}
TOO_LARGE = {
    "description": "a form over 4 KiB",
    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
}
QUERY = [
    {"name": "next", "in": "query", "required": False, "schema": {"type": "string"}},
    {"name": "error", "in": "query", "required": False, "schema": {"type": "string"}},
]
FORM = {
    "requestBody": {
        "required": True,
        "content": {
            "application/x-www-form-urlencoded": {
                "schema": {"type": "object", "properties": {"token": {"type": "string"}, "next": {"type": "string"}}}
            }
        },
    }
}


Statuses = dict[int | str, dict[str, Any]]


def page_route(app: FastAPI, path: str, endpoint: Any, method: str, statuses: Statuses, **extra: Any) -> None:
    # A POST answers with a redirect (no body) first: its documented default has no content type.
    kind = RedirectResponse if method == "POST" else HTMLResponse
    app.add_api_route(
        path, endpoint, methods=[method], response_class=kind, tags=["panel"], responses=statuses, **extra
    )


def mount(app: FastAPI) -> None:
    pages: Statuses = {200: HTML, 303: REDIRECT}
    agent = {"parameters": [{"name": "agent", "in": "path", "required": True, "schema": {"type": "string"}}]}
    page_route(app, "/", shell, "GET", pages, summary="The panel")
    page_route(app, "/agents/{agent}", shell, "GET", pages, summary="One transcript in the panel", openapi_extra=agent)
    page_route(app, "/signin", signin, "GET", {200: HTML}, summary="The sign-in page",
               openapi_extra={"parameters": QUERY})  # fmt: skip
    page_route(app, "/signin", signin_post, "POST", {303: REDIRECT, 401: HTML, 403: HTML, 413: TOO_LARGE},
               summary="Sign in with a token (a same-site form)", openapi_extra=FORM, status_code=303)  # fmt: skip
    page_route(app, "/signout", signout_page, "GET", {200: HTML}, summary="The sign-out button")
    page_route(app, "/signout", signout, "POST", {303: REDIRECT}, summary="Sign out (a same-site form)",
               status_code=303)  # fmt: skip
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
