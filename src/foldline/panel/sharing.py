"""The panel's share links: made and revoked from a transcript's Share dialog, as the cookie's
account (any member who may read the agent, as the API lets any member). The dialog asks with a
same-origin ``fetch``, and a request from another site is refused, as the panel's other forms
are; each answers JSON, errors with the API's error body."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response

from ..errors import Forbidden, Invalid, Unauthorized
from ..pool import in_pool
from ..service import Transcripts
from .pages import cookie_account, cross_site

DAY = 86_400
# What the dialog offers: a day, a week, a month, or until revoked.
EXPIRIES: dict[str, int | None] = {"1d": DAY, "7d": 7 * DAY, "30d": 30 * DAY, "never": None}
# Without ``expires``: until revoked, as the dialog picks at first, ``foldline share create`` and
# the API's route without an expiry.
DEFAULT_EXPIRY = "never"


async def _signed_in(request: Request) -> str:
    if cross_site(request):
        raise Forbidden("share links are made and revoked from the panel's own pages")
    account = await cookie_account(request)
    if account is None:
        raise Unauthorized("sign in to the panel first")
    return account


async def create_share(request: Request) -> Response:
    """A share link of the agent, expiring as the form's ``expires`` says (never if absent):
    the share's fields, its ``token`` (shown this once) and its ``url``."""
    account = await _signed_in(request)
    raw = await request.body()  # bounded while read: the app's BodyLimit allows MAX_FORM here
    expires = (parse_qs(raw.decode("utf-8", "replace")).get("expires") or [DEFAULT_EXPIRY])[0]
    if expires not in EXPIRIES:
        raise Invalid(f"'expires' is one of {', '.join(EXPIRIES)}", where="expires")
    t: Transcripts = request.app.state.transcripts
    share = await in_pool(request, t.create_share, account, request.path_params["agent"], EXPIRIES[expires])
    url = f"{request.url.scheme}://{request.url.netloc}/s/{share['token']}"
    return JSONResponse({**share, "url": url}, status_code=201, headers={"Cache-Control": "no-store"})


async def revoke_share(request: Request) -> Response:
    """Revoke one share link of an agent the cookie's account may read."""
    account = await _signed_in(request)
    t: Transcripts = request.app.state.transcripts
    await in_pool(request, t.revoke_share, account, request.path_params["share"])
    return Response(status_code=204)


ERROR = {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}
FORM: dict[str, Any] = {
    "requestBody": {
        "required": False,
        "content": {
            "application/x-www-form-urlencoded": {
                "schema": {"type": "object", "properties": {
                    "expires": {"type": "string", "enum": list(EXPIRIES), "default": DEFAULT_EXPIRY}}}
            }
        },
    }
}


def mount(app: FastAPI) -> None:
    def param(name: str) -> dict[str, Any]:
        return {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}

    errors: dict[int | str, dict[str, Any]] = {code: {"description": what, **ERROR} for code, what in (
        (401, "not signed in"), (403, "asked from another site"), (404, "not found, one answer for every cause"),
        (413, "a form over 4 KiB"), (422, "an 'expires' not offered"))}  # fmt: skip
    made: dict[str, Any] = {"description": "the share, its token (shown once) and its link",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/NewShare"}}}}  # fmt: skip
    app.add_api_route("/agents/{agent}/share", create_share, methods=["POST"], tags=["panel"], status_code=201,
                      summary="Make a share link from the panel (its Share dialog)",
                      responses={201: made, **errors},
                      openapi_extra={"parameters": [param("agent")], **FORM})  # fmt: skip
    app.add_api_route("/shares/{share}/revoke", revoke_share, methods=["POST"], tags=["panel"], status_code=204,
                      summary="Revoke a share link from the panel (its Share dialog)",
                      responses={204: {"description": "revoked"}, **{k: v for k, v in errors.items() if k != 422}},
                      openapi_extra={"parameters": [param("share")]})  # fmt: skip
