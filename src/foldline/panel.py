"""The panel: the app shell, sign-in and sign-out, and the static files it runs on.

The panel is plain JavaScript modules in ``static/`` (no build step). The token a person signs
in with is kept in an HttpOnly, SameSite=Strict cookie (``foldline_token``) that the API
accepts for GET requests.

A sign-in link carries its token after ``#`` (``/signin#token=…``): a fragment never reaches a
server, so no access log, proxy or ``Referer`` sees it. The sign-in page's script moves it into
the form and posts it; when the browser is already signed in, it asks first, so a link from
another site cannot silently swap a person's session. Signing in and out are same-site POSTs.
"""

from __future__ import annotations

import html
from importlib import resources
from pathlib import Path
from urllib.parse import parse_qs, quote, urlencode

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles

from .errors import Unauthorized
from .routes import TOKEN_COOKIE
from .transcripts import Transcripts

STATIC = Path(str(resources.files("foldline") / "static"))
COOKIE_SECONDS = 30 * 24 * 3600
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


async def shell(request: Request) -> Response:
    """The app shell for ``/`` and ``/agents/{agent}``.

    An old-style link with ``?token=`` is sent on to the sign-in page with the token moved
    after ``#`` (the ``Location`` header is not logged; the access log redacts the first request).
    """
    token = request.query_params.get("token")
    if token is not None:
        return _redirect("/signin?next=" + quote(_here(request), safe="") + "#token=" + quote(token, safe=""))
    if not _valid(request, request.cookies.get(TOKEN_COOKIE)):
        return _redirect("/signin?next=" + quote(_here(request), safe=""))
    return _page((STATIC / "index.html").read_bytes())


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


def mount(app: FastAPI) -> None:
    app.add_api_route("/", shell, methods=["GET"], include_in_schema=False)
    app.add_api_route("/agents/{agent}", shell, methods=["GET"], include_in_schema=False)
    app.add_api_route("/signin", signin, methods=["GET"], include_in_schema=False)
    app.add_api_route("/signin", signin_post, methods=["POST"], include_in_schema=False)
    app.add_api_route("/signout", signout_page, methods=["GET"], include_in_schema=False)
    app.add_api_route("/signout", signout, methods=["POST"], include_in_schema=False)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
