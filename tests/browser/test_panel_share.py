"""A share link in a real browser: /s/{token} opens one agent read-only without signing in (its
transcript, a fold read whole, a subagent, find inside it, live follow), shows nothing a share
cannot do, and a revoked link is the one not-found."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

import orjson
import pytest
from playwright.sync_api import Browser, Page, expect

from .conftest import Panel, settle
from .test_panel import BIG, MIDDLE, bash, conversation, open_agent
from .test_panel_axe import serious

pytestmark = pytest.mark.browser


def test_a_share_link_opens_the_agent_read_only_without_signing_in(page: Page, panel: Panel) -> None:
    agent, mid = conversation(panel, "shared build")
    task = {"type": "tool-Task", "toolCallId": "toolu_shared_1", "state": "output-available",
            "input": {"description": "look around", "prompt": "list"}, "output": "done"}  # fmt: skip
    panel.put(agent, "assistant", [task])
    panel.client.put_message(agent, {"id": str(uuid.uuid4()), "role": "assistant",
                                     "parts": [{"type": "text", "text": "worker in the share"}]},
                             call="toolu_shared_1")  # fmt: skip
    other = panel.agent("not shared")
    panel.put(other, "user", [{"type": "text", "text": "Run the tests elsewhere"}])
    share = panel.client.create_share(agent)
    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url))

    page.goto(f"/s/{share['token']}")  # a browser that never signed in
    page.wait_for_selector(".live[data-state=live]")
    expect(page.locator("#crumb h1")).to_have_text("shared build")
    expect(page.locator(".part.text").first).to_contain_text("Run the tests, please.")
    assert page.url.endswith(f"/s/{share['token']}")  # no sign-in page on the way
    assert not page.context.cookies()  # and no session

    # A cut fold is read whole when opened.
    fold = page.locator(f'details[data-message="{mid}"][data-part="2"]')
    assert MIDDLE not in fold.inner_text()
    fold.locator("summary").click()
    expect(fold.locator("pre.out").last).to_contain_text(MIDDLE)
    # A subagent opens too.
    sub = page.locator('details.subagent[data-call="toolu_shared_1"]')
    sub.locator("summary").click()
    expect(sub.locator(".part.text")).to_have_text("worker in the share")

    # Find inside it: only this agent's hits.
    page.locator(".find-input").fill("tests")
    expect(page.locator(".find-count")).to_contain_text("1")

    # Live follow.
    later = panel.put(agent, "assistant", [{"type": "text", "text": "written after the link was opened"}])
    expect(page.locator(f'[data-message="{later}"][data-part="0"]')).to_contain_text("after the link")

    # What a share cannot do is not there: no agents list, no search across the workspace, no
    # account, no sign-out; every read went under the share's own API.
    expect(page.locator("a.brand")).to_have_count(0)
    expect(page.locator(".search-open")).to_have_count(0)
    expect(page.locator("#signout")).to_have_count(0)
    expect(page.locator(".share-agent")).to_have_count(0)  # sharing is a member's
    # The export is there, under the share: whole, the subagent in it, no workspace named.
    with page.expect_download() as done:
        page.locator(".toolbar a.download-json").click()
    exported = orjson.loads(Path(done.value.path()).read_bytes())
    assert exported["agent"] == {"id": agent, "title": "shared build"}
    assert "toolu_shared_1" in exported["subagents"]
    (output,) = [p["output"] for m in exported["messages"] for p in m["parts"] if p["type"] == "tool-bash"]
    assert output == BIG  # whole, never cut
    markdown = page.request.get(f"/api/shared/{share['token']}/agents/{agent}/export?format=md")
    assert markdown.status == 200 and "Run the **tests**, please." in markdown.text()
    assert page.request.get(f"/api/shared/{share['token']}/agents/{other}/export").status == 404
    expect(page.locator("#who")).to_have_text("Shared, read-only")
    page.keyboard.press("/")
    expect(page.locator("dialog.search[open], .search-box[open]")).to_have_count(0)
    api = [url for url in asked if "/api/" in url]
    assert api and all(f"/api/shared/{share['token']}/" in url for url in api), api
    assert other not in " ".join(asked)

    # Revoked: the live stream ends, the page says why (not "Not following"), and the link is
    # the one not-found.
    panel.client.revoke_share(share["id"])
    ended = "This share link was revoked or has expired: nothing more will be shown."
    for live in page.locator(".live").all():  # the agent's stream and its open subagent's
        expect(live).to_have_text(ended, timeout=15_000)
    settle(page)
    for live in page.locator(".live").all():  # and it stays said: no reconnecting after it
        expect(live).to_have_text(ended)
    page.goto(f"/s/{share['token']}")
    expect(page.locator(".notice")).to_contain_text("revoked")


def test_a_fold_opened_in_a_share_reads_only_under_the_share(page: Page, panel: Panel) -> None:
    agent = panel.agent("one fold")
    mid = panel.put(agent, "assistant", [bash("make", "x" * 50_000 + MIDDLE + "y" * 50_000)])
    share = panel.client.create_share(agent, expires_in=3600)
    parts: list[str] = []
    page.on("request", lambda r: parts.append(r.url) if "/parts/" in r.url else None)
    page.goto(f"/s/{share['token']}")
    page.wait_for_selector("body[data-ready]")
    fold = page.locator(f'details[data-message="{mid}"][data-part="0"]')
    fold.locator("summary").click()
    expect(fold.locator("pre.out").last).to_contain_text(MIDDLE)
    assert len(parts) == 1 and f"/api/shared/{share['token']}/agents/{agent}/messages/{mid}/parts/0" in parts[0]


def test_a_member_makes_and_revokes_a_share_link_from_the_panel(
    signed_in: Page, browser: Browser, panel: Panel
) -> None:
    """The toolbar's Share…: a link made with the expiry picked, shown once, that opens the agent
    in a browser that never signed in; listed in the dialog, and revoked there (then the one
    not-found). The dialog has no serious accessibility violation; another site's request makes
    no link."""
    agent = panel.agent("shared from the panel")
    panel.put(agent, "user", [{"type": "text", "text": "Share this one, please."}])
    open_agent(signed_in, agent)
    signed_in.get_by_role("button", name="Share…").click()
    dialog = signed_in.get_by_role("dialog", name="Share a read-only link")
    expect(dialog).to_contain_text("“shared from the panel” and its subagents")
    expect(dialog.locator(".share-list")).to_have_text("No link opens this agent now.")
    dialog.get_by_label("Expires after").select_option("1d")
    dialog.get_by_role("button", name="Create link").click()
    field = dialog.get_by_label("The share link")
    expect(field).to_have_value(re.compile(r"/s/fls_"))
    url = field.input_value()
    expect(dialog.locator(".share-list li")).to_have_count(1)
    expect(dialog.locator(".share-list")).to_contain_text("expires")
    (share,) = panel.client.shares(agent)
    assert share["expires_at"] is not None  # a day, as picked
    assert serious(signed_in) == []

    stranger = browser.new_context()
    try:
        view = stranger.new_page()
        view.goto(url)
        expect(view.locator("#crumb h1")).to_have_text("shared from the panel")
        opened = url.replace("/s/", "/api/shared/")  # what the share opens
        assert view.request.get(opened).status == 200
        dialog.get_by_role("button", name=re.compile("^Revoke")).click()
        expect(dialog.locator(".share-list")).to_have_text("No link opens this agent now.")
        expect(dialog.locator(".share-made")).to_have_text("That link was revoked: it opens nothing now.")
        expect(dialog.get_by_label("The share link")).to_have_count(0)
        assert view.request.get(opened).status == 404
    finally:
        stranger.close()
    # a request from another site makes none
    forged = signed_in.request.post(f"/agents/{agent}/share", headers={"Origin": "https://elsewhere.example"})
    assert forged.status == 403 and panel.client.shares(agent) == []
    bad = signed_in.request.post(f"/agents/{agent}/share", form={"expires": "forever"})
    assert bad.status == 422 and bad.json()["error"]["where"] == "expires"


def test_the_share_dialog_s_default_expiry_is_the_command_line_s(signed_in: Page, panel: Panel) -> None:
    """Until revoked, picked at first in the dialog, as ``foldline share create`` and the API make a
    link without an expiry; the panel's route without ``expires`` makes the same."""
    agent = panel.agent("shared until revoked")
    open_agent(signed_in, agent)
    signed_in.get_by_role("button", name="Share…").click()
    dialog = signed_in.get_by_role("dialog", name="Share a read-only link")
    expect(dialog.get_by_label("Expires after")).to_have_value("never")
    dialog.get_by_role("button", name="Create link").click()
    expect(dialog.get_by_label("The share link")).to_have_value(re.compile(r"/s/fls_"))
    expect(dialog.locator(".share-list")).to_contain_text("never expires")
    (share,) = panel.client.shares(agent)
    assert share["expires_at"] is None
    made = signed_in.request.post(f"/agents/{agent}/share")  # no form
    assert made.status == 201 and made.json()["expires_at"] is None
    assert panel.client.create_share(agent)["expires_at"] is None
