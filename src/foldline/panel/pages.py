"""The panel: the app shell, sign-in and sign-out, and the static files it runs on.

The panel is plain JavaScript modules in ``static/`` (no build step). The token a person signs
in with is kept in an HttpOnly, SameSite=Strict cookie (``foldline_token``) that the API
accepts for GET requests.

A sign-in link carries its token after ``#`` (``/signin#token=…``): a fragment never reaches a
server, so no access log, proxy or ``Referer`` sees it. The sign-in page's script moves it into
the form and posts it; when the browser is already signed in, it asks first, so a link from
another site cannot silently swap a person's session. Signing in and out are same-site POSTs.

The shell loads fast. A transcript's shell (:mod:`foldline.panel.shell`) holds all its first view
needs: the stylesheet and the panel's modules joined into one script (:mod:`foldline.panel.bundle`),
allowed by their hashes in its Content-Security-Policy, then the agent and its newest page as
the API would answer the same cookie; its head is sent before the first view is read. The agents
list's shell loads the same script and stylesheet by address, answered from memory (:class:`Assets`).
"""

from __future__ import annotations

import html
import uuid
from typing import Any
from urllib.parse import parse_qs, quote, urlencode

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles

from ..errors import NotFound, Unauthorized
from ..pool import in_pool
from ..routes import TOKEN_COOKIE
from ..service import Transcripts
from .assets import STATIC, Assets, Bundle
from .shell import FIRST_PAGE, PAGE_HEADERS, shell_page, transcript_shell

COOKIE_SECONDS = 30 * 24 * 3600
MAX_FORM = 4096
__all__ = ["FIRST_PAGE", "STATIC", "Assets", "Bundle", "mount"]

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


def _canonical(agent: str | None) -> str | None:
    """The agent's id if it is written as the panel asks for it (a lower-case UUID), else ``None``."""
    try:
        return agent if agent is not None and str(uuid.UUID(agent)) == agent else None
    except ValueError:
        return None


async def cookie_account(request: Request) -> str | None:
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
    account = await cookie_account(request)
    if account is None:
        return _redirect("/signin?next=" + quote(_here(request), safe=""))
    agent = _canonical(request.path_params.get("agent"))
    return _page(shell_page()) if agent is None else transcript_shell(request, account, agent)


GONE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Not found · Foldline</title><link rel="icon" href="data:,">
<link rel="stylesheet" href="/static/panel.css"></head>
<body class="signin"><main class="signin-box">
<h1>Foldline</h1>
<p class="notice" role="alert">This share link is not valid: it was revoked, or it expired.</p>
</main></body></html>
"""


async def shared_shell(request: Request) -> Response:
    """A share link's panel (``/s/{token}``): its one agent, read-only, with no sign-in; the one
    not-found page for a share that does not open (unknown, revoked or expired)."""
    t = _transcripts(request)
    try:
        share = await in_pool(request, t.shared, request.path_params["token"])
    except NotFound:
        return HTMLResponse(GONE, status_code=404, headers={**PAGE_HEADERS, "Referrer-Policy": "no-referrer"})
    return transcript_shell(request, share.account, share.agent_id, shared=True)


async def signin(request: Request) -> Response:
    error = ERRORS.get(request.query_params.get("error") or "", "")
    return signin_page(_safe_next(request.query_params.get("next")), error, current=_current(request))


def cross_site(request: Request) -> bool:
    """A form posted from another site: its ``Origin`` is not this one, or the browser says so."""
    if request.headers.get("sec-fetch-site") in ("cross-site", "same-site"):
        return True
    origin = request.headers.get("origin")
    return origin is not None and origin != f"{request.url.scheme}://{request.url.netloc}"


async def signin_post(request: Request) -> Response:
    if cross_site(request):
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
    if cross_site(request):
        return _redirect("/")
    _transcripts(request).end_session(request.cookies.get(TOKEN_COOKIE))
    response = _redirect("/signin")
    response.delete_cookie(TOKEN_COOKIE, path="/", httponly=True, samesite="strict")
    return response


async def delete_agent(request: Request) -> Response:
    """The panel's delete, after its confirmation: a same-site form from the transcript's page,
    as the cookie's account (its owner); then the agents list. ``forget=true`` in the form: imports
    pass the session over from now on."""
    if cross_site(request):
        return _redirect("/")
    account = await cookie_account(request)
    if account is None:
        return _redirect("/signin")
    raw = await request.body()  # bounded while read: the app's BodyLimit allows MAX_FORM here
    forget = parse_qs(raw.decode("utf-8", "replace")).get("forget") == ["true"]
    agent = request.path_params["agent"]
    await in_pool(request, _transcripts(request).delete_agent, account, agent, forget)
    return _redirect("/")


async def remove_samples(request: Request) -> Response:
    """The panel's "Remove the samples", after its confirmation: a same-site form from the
    agents list, as the cookie's account; then the agents list again."""
    if cross_site(request):
        return _redirect("/")
    account = await cookie_account(request)
    if account is None:
        return _redirect("/signin")
    await in_pool(request, _transcripts(request).remove_samples, account)
    return _redirect("/")


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
DELETE_FORM = {
    "requestBody": {
        "required": False,
        "content": {
            "application/x-www-form-urlencoded": {
                "schema": {"type": "object", "properties": {"forget": {"type": "string", "enum": ["true"]}}}
            }
        },
    }
}
ERROR = {
    "description": "a member who is not the agent's owner (403); not found, one answer for every cause (404)",
    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
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
    share = {"parameters": [{"name": "token", "in": "path", "required": True, "schema": {"type": "string"}}]}
    page_route(app, "/s/{token}", shared_shell, "GET", {200: HTML, 404: HTML},
               summary="A share link: one agent's transcript, read-only, without signing in",
               openapi_extra=share)  # fmt: skip
    page_route(app, "/signin", signin, "GET", {200: HTML}, summary="The sign-in page",
               openapi_extra={"parameters": QUERY})  # fmt: skip
    page_route(app, "/signin", signin_post, "POST", {303: REDIRECT, 401: HTML, 403: HTML, 413: TOO_LARGE},
               summary="Sign in with a token (a same-site form)", openapi_extra=FORM, status_code=303)  # fmt: skip
    page_route(app, "/signout", signout_page, "GET", {200: HTML}, summary="The sign-out button")
    page_route(app, "/signout", signout, "POST", {303: REDIRECT}, summary="Sign out (a same-site form)",
               status_code=303)  # fmt: skip
    page_route(app, "/agents/{agent}/delete", delete_agent, "POST",
               {303: REDIRECT, 403: ERROR, 404: ERROR, 413: TOO_LARGE},
               summary="Delete an agent from the panel (a same-site form, after its confirmation)",
               openapi_extra={**agent, **DELETE_FORM}, status_code=303)  # fmt: skip
    page_route(app, "/samples/remove", remove_samples, "POST", {303: REDIRECT},
               summary="Remove the sample sessions from the panel (a same-site form, after its confirmation)",
               status_code=303)  # fmt: skip
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
