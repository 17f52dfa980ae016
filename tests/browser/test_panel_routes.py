"""The panel's pages over plain HTTP: sign-in, the cookie, redirects, headers."""

from __future__ import annotations

import httpx

from .conftest import Panel


def client(panel: Panel) -> httpx.Client:
    return httpx.Client(base_url=panel.url, follow_redirects=False)


def test_an_old_token_link_moves_the_token_out_of_the_address_and_sets_no_cookie(panel: Panel) -> None:
    with client(panel) as http:
        r = http.get(f"/agents/some-agent?token={panel.token}")  # the token moves after "#"
        assert r.status_code == 303 and "set-cookie" not in r.headers
        assert r.headers["location"] == f"/signin?next=%2Fagents%2Fsome-agent#token={panel.token}"


def test_signing_in_sets_a_strict_http_only_cookie(panel: Panel) -> None:
    with client(panel) as http:
        r = http.post("/signin", data={"token": panel.token, "next": "/agents/some-agent"})
        assert r.status_code == 303 and r.headers["location"] == "/agents/some-agent"
        cookie = r.headers["set-cookie"]
        session = cookie.split(";")[0].removeprefix("foldline_token=")
        assert session != panel.token  # a session token of its own, for the same account
        assert panel.transcripts.authenticate(session) == panel.transcripts.authenticate(panel.token)
        assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/" in cookie
        shell = http.get("/")
        assert shell.status_code == 200
        csp = shell.headers["content-security-policy"]
        assert "script-src 'self'" in csp and "unsafe-inline" not in csp
        assert '<script type="module" src="/static/bundle.js">' in shell.text


def test_a_bad_token_is_refused_and_no_cookie_is_set(panel: Panel) -> None:
    with client(panel) as http:
        page = http.get("/signin?error=token&next=%2Fagents%2Fx")
        assert "That token is not valid." in page.text
        assert "foldline account token ACCOUNT_ID" in page.text
        assert 'class="error"' not in http.get("/signin?error=%3Cb%3Ehi").text  # only fixed messages
        r = http.post("/signin", data={"token": "fl_wrong", "next": "/"})
        assert r.status_code == 401 and "set-cookie" not in r.headers
        assert http.get("/").headers["location"] == "/signin?next=%2F"


def test_sign_in_goes_back_only_to_this_site(panel: Panel) -> None:
    with client(panel) as http:
        for target, expected in [("/agents/x", "/agents/x"), ("//evil.example", "/"), ("https://evil.example", "/")]:
            r = http.post("/signin", data={"token": panel.token, "next": target})
            assert r.status_code == 303 and r.headers["location"] == expected


def test_a_form_posted_from_another_site_is_refused(panel: Panel) -> None:
    with client(panel) as http:
        r = http.post("/signin", data={"token": panel.token}, headers={"Origin": "https://evil.example"})
        assert r.status_code == 403 and "set-cookie" not in r.headers


def test_sign_out_clears_the_cookie(panel: Panel) -> None:
    with client(panel) as http:
        http.get(f"/?token={panel.token}")
        r = http.post("/signout", headers={"Origin": panel.url})
        assert r.status_code == 303 and r.headers["location"] == "/signin"
        assert 'foldline_token=""' in r.headers["set-cookie"] or "Max-Age=0" in r.headers["set-cookie"]


def test_a_subagent_address_keeps_its_call_through_the_token_link_and_sign_in(panel: Panel) -> None:
    with client(panel) as http:
        r = http.get("/agents/x?call=toolu_1")
        assert r.headers["location"] == "/signin?next=%2Fagents%2Fx%3Fcall%3Dtoolu_1"
        r = http.get(f"/agents/x?token={panel.token}&call=toolu_1")  # an old link: the token moves after "#"
        assert r.status_code == 303
        assert r.headers["location"] == f"/signin?next=%2Fagents%2Fx%3Fcall%3Dtoolu_1#token={panel.token}"
        r = http.get("/agents/x?call=toolu_1&token=fl_wrong")  # checked by the sign-in form, not here
        assert r.headers["location"] == "/signin?next=%2Fagents%2Fx%3Fcall%3Dtoolu_1#token=fl_wrong"
        assert '<script type="module" src="/static/signin.js">' in http.get("/signin").text
