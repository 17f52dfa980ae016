"""A transcript's shell: one response that holds all its first view needs.

It is sent in two pieces. The head goes at once, with the panel's stylesheet and its script (the
modules joined, :mod:`foldline.panel.bundle`) written in it, so the browser reads and compiles them
while the server reads the first view; the rest holds that first view, the agent and its newest
page as the API would answer the same cookie (``<script type="application/json">``), so the
panel draws it without a request of its own. Nothing inline runs without the page's
Content-Security-Policy naming its hash, and the head is built and compressed once (again when a
module or the stylesheet changes): each response compresses only its own first view.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import logging
import re
import zlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import orjson
from fastapi import Request
from fastapi.responses import Response, StreamingResponse

from ..errors import FoldlineError
from ..pool import in_pool
from ..service import Transcripts
from ..service.shares import as_shared
from .assets import BUNDLE, STATIC

FIRST_PAGE = 15  # the newest messages a transcript opens on: static/transcript.js's PAGE
FIRST_VIEW_PLACE = "</body>"  # a transcript's first view goes in the shell just before it
SCRIPT_TAG = '<script type="module" src="/static/bundle.js"></script>'
STYLE_TAG = '<link rel="stylesheet" href="/static/panel.css">'
log = logging.getLogger("foldline")

# Defence in depth: nothing inline runs unless named by its hash, nothing is fetched from elsewhere.
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


@functools.cache
def shell_parts() -> tuple[str, str]:
    """The shell's HTML (static/index.html) before and after the place for a first view."""
    page = (STATIC / "index.html").read_text(encoding="utf-8")
    head, rest = page.split(FIRST_VIEW_PLACE, 1)
    return head, FIRST_VIEW_PLACE + rest


def first_view(t: Transcripts, account: str, agent: str, shared: bool = False) -> bytes | None:
    """What a transcript's first view draws, as the API would answer ``account``: the agent and
    its newest page (``{"agent": …, "page": …}``), or ``None`` when it may not read it (the panel
    then asks the API, which says why). ``shared``: as a share link's API answers (the agent
    without its workspace and owner).

    It goes in the shell as ``<script type="application/json">``, which runs nothing and ends only
    at ``</script``: every ``<`` is written ``\\u003c`` (the same string to ``JSON.parse``).
    """
    try:
        found = t.agent(account, agent)
        info = orjson.dumps(as_shared(found) if shared else found)
        page = t.page_json(account, agent, cut=True, limit=FIRST_PAGE)
    except FoldlineError:
        return None
    return (b'{"agent":' + info + b',"page":' + page + b"}").replace(b"<", b"\\u003c")


def held(data: bytes | None) -> bytes:
    """The first view as the shell holds it: a data block (it runs nothing), or nothing."""
    if data is None:
        return b""
    return b'<script type="application/json" id="first-view">' + data + b"</script>\n"


def source_hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


# In a script, `<!--` and `</script` would change where the HTML parser ends it; `\x3C` is the
# same `<` in the strings and regular expressions they can stand in (and in a comment, nothing).
UNSAFE_IN_SCRIPT = re.compile(r"<(!--|/script)", re.I)


def inline_script(text: str) -> str | None:
    text = UNSAFE_IN_SCRIPT.sub(r"\\x3C\1", text.replace("\r\n", "\n").replace("\r", "\n"))
    return None if "\0" in text else text


def inline_style(text: str) -> str | None:
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return None if re.search(r"</style|\0", text, re.I) else text


@dataclass(frozen=True)
class Head:
    """A transcript shell's head: as sent, compressed up to a sync flush, and its CSP."""

    raw: bytes
    packed: bytes
    zip: Any  # the compressor after the head: each response continues a copy of it
    csp: str

    @classmethod
    def build(cls, head: str, script: str, style: str) -> Head:
        csp = CSP
        js, css = inline_script(script), inline_style(style)
        if js is not None:
            head = head.replace(SCRIPT_TAG, f'<script type="module">{js}</script>')
            csp = csp.replace("script-src 'self'", "script-src 'self' " + source_hash(js))
        if css is not None:
            head = head.replace(STYLE_TAG, f"<style>{css}</style>")
            csp = csp.replace("style-src 'self'", "style-src 'self' " + source_hash(css))
        raw = head.encode()
        packer = zlib.compressobj(6, zlib.DEFLATED, 31)  # 31: the gzip format
        return cls(raw, packer.compress(raw) + packer.flush(zlib.Z_SYNC_FLUSH), packer, csp)


class Heads:
    """The head, built again when the script or the stylesheet changed."""

    def __init__(self) -> None:
        self.key: tuple[Any, ...] | None = None
        self.head: Head | None = None

    def current(self) -> Head:
        script, style = BUNDLE.current(), STATIC / "panel.css"
        stat = style.stat()
        key = (script.etag, stat.st_mtime_ns, stat.st_size)
        if self.head is None or key != self.key:
            text = style.read_text(encoding="utf-8")
            self.head, self.key = Head.build(shell_parts()[0], script.body.decode(), text), key
        return self.head


HEADS = Heads()


def shell_page(data: bytes | None = None) -> bytes:
    """The shell as one piece, its script and stylesheet by address (the agents list's)."""
    head, rest = shell_parts()
    return head.encode() + held(data) + rest.encode()


def transcript_shell(request: Request, account: str, agent: str, shared: bool = False) -> Response:
    """A transcript's shell for ``account``: the head at once, then its first view, read
    meanwhile in the database's pool (a first view that cannot be read is left out: the panel
    then reads the API, which says why). ``shared``: a share link's, whose first view is as the
    share's API answers and whose address (it holds the share's token) is sent to no other site."""
    gzipped = "gzip" in request.headers.get("accept-encoding", "")
    head, rest = HEADS.current(), shell_parts()[1].encode()
    packer = head.zip.copy() if gzipped else None
    t: Transcripts = request.app.state.transcripts

    async def pieces() -> AsyncIterator[bytes]:
        yield head.packed if packer else head.raw
        try:
            data = await in_pool(request, first_view, t, account, agent, shared)
        except Exception:
            log.exception("a transcript's first view could not be read for its shell")
            data = None
        tail = held(data) + rest
        yield packer.compress(tail) + packer.flush(zlib.Z_FINISH) if packer else tail

    headers = {**PAGE_HEADERS, "Content-Security-Policy": head.csp}
    if shared:
        headers["Referrer-Policy"] = "no-referrer"
    if gzipped:
        headers |= {"Content-Encoding": "gzip", "Vary": "Accept-Encoding"}
    return StreamingResponse(pieces(), media_type="text/html; charset=utf-8", headers=headers)
