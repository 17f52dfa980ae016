"""Sign-in and sign-out cannot be forced from another site, and a sign-in link's token never
travels to the server in an address."""

from __future__ import annotations

import re

import httpx
from playwright.sync_api import Page, Request, expect

from .conftest import Panel, settle


def cookie(page: Page) -> str | None:
    found = [c["value"] for c in page.context.cookies() if c["name"] == "foldline_token"]
    return found[0] if found else None


def signed_in_as(page: Page, panel: Panel) -> str | None:
    """The name of the account the browser's cookie signs in as (None: signed out)."""
    session = cookie(page)
    if session is None:
        return None
    transcripts = panel.transcripts
    return str(transcripts.me(transcripts.authenticate(session))["name"])


def test_a_sign_in_link_keeps_its_token_out_of_every_request(page: Page, panel: Panel) -> None:
    sent: list[str] = []
    page.on("request", lambda r: sent.append(r.url))
    page.goto(f"/signin#token={panel.token}")
    page.wait_for_selector("body[data-ready]")
    assert signed_in_as(page, panel) == "alice" and cookie(page) != panel.token  # a session token
    assert not [url for url in sent if panel.token in url]
    assert "#" not in page.url


def test_a_link_from_another_site_does_not_swap_a_session_without_asking(signed_in: Page, panel: Panel) -> None:
    mallory = panel.transcripts.create_account("mallory")
    posted: list[Request] = []
    signed_in.on("request", lambda r: posted.append(r) if r.method == "POST" else None)
    signed_in.goto(f"/signin#token={mallory['token']}")
    expect(signed_in.locator("[data-current]")).to_contain_text("signed in as alice")
    settle(signed_in)  # the page's scripts have run all they queued: none submitted (it must not)
    assert posted == [] and signed_in_as(signed_in, panel) == "alice"
    assert "#" not in signed_in.url  # the token left the address bar all the same
    signed_in.click("button[type=submit]")  # the person confirms: now, and only now, mallory
    signed_in.wait_for_selector("body[data-ready]")
    assert signed_in_as(signed_in, panel) == "mallory"


def test_sign_in_and_sign_out_posted_from_another_site_are_refused(panel: Panel) -> None:
    evil = {"Origin": "http://evil.example", "Content-Type": "application/x-www-form-urlencoded"}
    signin = httpx.post(f"{panel.url}/signin", content=f"token={panel.token}", headers=evil)
    assert signin.status_code == 403 and "foldline_token" not in signin.cookies
    cross = {"Sec-Fetch-Site": "cross-site", "Content-Type": "application/x-www-form-urlencoded"}
    signin = httpx.post(f"{panel.url}/signin", content=f"token={panel.token}", headers=cross)
    assert signin.status_code == 403 and "foldline_token" not in signin.cookies
    signout = httpx.post(f"{panel.url}/signout", headers=evil, cookies={"foldline_token": panel.token})
    assert signout.status_code == 303 and "foldline_token" not in signout.headers.get("set-cookie", "")


def test_a_link_to_sign_out_only_shows_the_button(signed_in: Page, panel: Panel) -> None:
    signed_in.goto("/signout")
    session = cookie(signed_in)
    assert signed_in_as(signed_in, panel) == "alice"
    signed_in.click("#signout")
    expect(signed_in).to_have_url(re.compile(r"/signin"))
    assert cookie(signed_in) is None
    # signed out for good: a copy of the cookie no longer works, while the account's token does
    copied = httpx.get(f"{panel.url}/api/me", cookies={"foldline_token": str(session)})
    assert copied.status_code == 401
    assert httpx.get(f"{panel.url}/api/me", headers={"Authorization": f"Bearer {panel.token}"}).status_code == 200


def test_a_sign_in_link_opened_on_the_sign_in_page_itself_signs_in(signed_in: Page, panel: Panel) -> None:
    # Signing out lands on /signin; the link pasted there differs from it only after "#", so the
    # browser does not load the page again: the page must still take the token.
    signed_in.goto("/signout")
    signed_in.click("#signout")
    expect(signed_in).to_have_url(re.compile(r"/signin$"))
    assert cookie(signed_in) is None
    signed_in.goto(f"/signin#token={panel.token}")
    signed_in.wait_for_selector("body[data-ready]")
    assert signed_in_as(signed_in, panel) == "alice"
    assert "#" not in signed_in.url
