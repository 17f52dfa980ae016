"""The page read's short way in: a plain ``GET …/messages`` answered without FastAPI's
per-request machinery, and a kept page sent once the database says it still holds.

Every parameter and the token are read by the same parsers as the routes' (:mod:`foldline.wire`);
anything this path does not answer the same way goes on to the route, which decides.
"""

from __future__ import annotations

import asyncio
import functools
import re
from typing import Any
from urllib.parse import parse_qsl

from starlette.requests import cookie_parser

from .errors import FoldlineError, NotFound
from .pagecache import PageKey
from .routes import TOKEN_COOKIE
from .service import Transcripts
from .service.core import canonical_uuid, is_call
from .store import SeqChecks
from .wire import bearer_token, parse_before, parse_page_limit

PAGE_PATH = re.compile(r"/api/agents/([^/]+)(?:/subagents/([^/]+))?/messages")
# A share link's page read: the share is asked of the database (never remembered), then the page.
SHARED_PAGE_PATH = re.compile(r"/api/shared/([^/]+)/agents/([^/]+)(?:/subagents/([^/]+))?/messages")
PAGE_QUERY = {"parts", "limit", "before"}
CUT_OR_WHOLE = {"cut": True, "whole": False}


class PageReads:
    """ASGI middleware: a transcript read in its common form, answered without FastAPI's
    per-request machinery (route matching over every route, the dependency graph, parameter
    models), which cost a cut page as much as the page itself.

    It answers only a plain ``GET …/messages`` that :func:`read_messages` would answer the same
    way: each parameter at most once and valid as the route declares it, and a token this
    process has authenticated in the last few seconds, or a share link's that opens the agent
    (asked of the database with the page, in one hop to the pool). Anything else, and any refusal (401,
    404, 400), goes on to the route itself, which stays the one that documents and decides.
    """

    def __init__(self, app: Any, transcripts: Transcripts, pool: Any) -> None:
        self.app, self.transcripts, self.pool = app, transcripts, pool
        self.on_loop = transcripts.reads_are_local

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["method"] == "GET":
            found = PAGE_PATH.fullmatch(scope["path"])
            shared = None if found is not None else SHARED_PAGE_PATH.fullmatch(scope["path"])
            page = None
            if found is not None:
                page = await self._page(scope, found.group(1), found.group(2))
            elif shared is not None:
                page = await self._page(scope, shared.group(2), shared.group(3), share=shared.group(1))
            if page is not None:
                headers = [(b"content-length", b"%d" % len(page)), (b"content-type", b"application/json")]
                await send({"type": "http.response.start", "status": 200, "headers": headers})
                await send({"type": "http.response.body", "body": page})
                return
        await self.app(scope, receive, send)

    async def _page(
        self, scope: dict[str, Any], agent: str, call: str | None, share: str | None = None
    ) -> bytes | None:
        query = parse_qsl(scope["query_string"].decode("latin-1"), keep_blank_values=True)
        params = dict(query)
        if len(params) != len(query) or not PAGE_QUERY.issuperset(params):
            return None
        cut = CUT_OR_WHOLE.get(params.get("parts", "whole"))
        before = params.get("before")
        try:
            limit = None if "limit" not in params else parse_page_limit(params["limit"])
            parse_before(before)
            account = None if share is not None else self.transcripts.cached_account(token_in(scope))
        except FoldlineError:  # the route says why, in its own words
            return None
        if cut is None:
            return None
        if share is not None:  # the share's reader, or the route's one not-found
            return await self._shared_page(share, agent, call, cut, limit, before)
        if account is None:
            return None
        work = functools.partial(
            self.transcripts.page_json, account, agent, call=call, cut=cut, limit=limit, before=before
        )
        checks = scope["app"].state.seq_checks
        try:
            if self.on_loop and cut and limit is not None and limit <= ON_LOOP_MOST:
                page: bytes | None = work(most=ON_LOOP_BYTES)  # a bigger one goes to the route's thread
            else:
                page = (
                    None if checks is None else await kept_page(self.transcripts, checks, *work.args, **work.keywords)
                )
                if page is None:
                    read = work if checks is None else functools.partial(work, reread=True)
                    page = await asyncio.get_running_loop().run_in_executor(self.pool, read)
        except Exception:  # the route says why, in its own words
            return None
        return page


    async def _shared_page(
        self, token: str, agent: str, call: str | None, cut: bool, limit: int | None, before: str | None
    ) -> bytes | None:
        """A share link's page: the share and the page read in the pool, one hop; any refusal
        goes on to the route."""
        t = self.transcripts

        def read() -> bytes:
            account = t.shared(token, agent).account
            return t.page_json(account, agent, call=call, cut=cut, limit=limit, before=before)

        try:
            return await asyncio.get_running_loop().run_in_executor(self.pool, read)
        except Exception:  # the route says why, in its own words
            return None


# A cut page of at most this many messages read from a local SQLite file takes a millisecond or
# two (50 messages of 50 tool parts each: 1.4 ms), less than handing it to a thread and back
# costs once the interpreter lock is shared: such a read runs on the event loop itself.
ON_LOOP_MOST = 200
# ... and of at most this many bytes of parts, each part counted as at least 1 KiB (the store's
# ROW_COST: a page of many small parts costs the loop by its rows): the read stops once past it
# (PageTooBig) and the route reads the page in a thread, so no page holds the loop for long.
ON_LOOP_BYTES = 1 << 20


def token_in(scope: dict[str, Any]) -> str | None:
    """The token :func:`reader` would take from a request: a bearer token, else the panel's cookie."""
    authorizations: list[str] = []
    cookies: str | None = None
    for name, value in scope["headers"]:
        if name == b"authorization":
            authorizations.append(value.decode("latin-1"))
        elif name == b"cookie":
            cookies = value.decode("latin-1")
    token = bearer_token(authorizations)
    if token is not None:
        return token
    found: str | None = cookie_parser(cookies).get(TOKEN_COOKIE) if cookies else None
    return found


async def kept_page(
    t: Transcripts,
    checks: SeqChecks,
    account: str,
    agent_id: str,
    *,
    call: str | None = None,
    cut: bool = False,
    limit: int | None = None,
    before: str | None = None,
) -> bytes | None:
    """The page ``t.page_json`` would send, if this process kept it and the database says it
    still holds (the account may read the conversation and it was not written since), asked on
    the event loop through ``checks``; None sends the caller to ``page_json``. A conversation the
    account may not read (the check finds nothing) is :class:`NotFound` at once, so a foreign
    agent whose page is kept costs what an agent that does not exist costs: one small statement
    here (there, ``page_json``'s), then the route's one not-found."""
    if call is not None and not is_call(call):
        return None
    try:
        key: PageKey = (canonical_uuid(agent_id), call, cut, limit, parse_before(before))
    except FoldlineError:
        return None
    kept = t.pages.get(key)
    if kept is None:
        return None
    seq = await checks.seq(account, key[0], call)
    if seq is None:
        raise NotFound()
    return kept.body if seq == kept.seq else None
