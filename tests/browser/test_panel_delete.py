"""Deleting an agent from the panel (issue 23, item 8): its owner's Delete button, a confirmation
that says what goes and what a re-import does, then the agents list without it; a follower in
another tab is told."""

from __future__ import annotations

import pytest
from playwright.sync_api import BrowserContext, Page, expect

from foldline import NotFound

from .conftest import Panel, own_account, sign_in
from .test_panel import open_agent

pytestmark = pytest.mark.browser


def test_the_owner_deletes_an_agent_after_confirming(signed_in: Page, context: BrowserContext, panel: Panel) -> None:
    agent = panel.agent("to be deleted")
    panel.put(agent, "user", [{"type": "text", "text": "a prompt"}])
    panel.client.put_message(agent, {"role": "user", "parts": [{"type": "text", "text": "worker"}]}, call="c1")
    watcher = context.new_page()  # another tab, following the same transcript
    open_agent(watcher, agent)
    expect(watcher.locator(".live").first).to_have_text("Following live")
    open_agent(signed_in, agent)

    signed_in.get_by_role("button", name="Delete…").click()
    dialog = signed_in.get_by_role("dialog", name="Delete this agent?")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("“to be deleted” and its 1 subagent: every message")
    expect(dialog).to_contain_text("comes back the next time its logs are imported")
    dialog.get_by_role("button", name="Cancel").click()
    expect(dialog).to_have_count(0)
    assert panel.client.agent(agent)["id"] == agent  # cancelled: nothing happened

    signed_in.get_by_role("button", name="Delete…").click()
    dialog = signed_in.get_by_role("dialog", name="Delete this agent?")
    dialog.get_by_label("Keep it out of later imports").check()
    with signed_in.expect_navigation():
        dialog.get_by_role("button", name="Delete", exact=True).click()
    signed_in.wait_for_selector("body[data-ready]")
    assert signed_in.url.rstrip("/") == panel.url.rstrip("/")
    with pytest.raises(NotFound):
        panel.client.agent(agent)
    assert panel.transcripts.forgotten(panel.client.me()["id"], panel.workspace, agent)
    expect(watcher.locator(".live").first).to_have_text("This agent was deleted")


def test_a_member_who_is_not_the_owner_has_no_delete_button(page: Page, panel: Panel) -> None:
    other = own_account(panel, "reader")
    panel.transcripts.add_member(panel.workspace, other.id)
    agent = panel.agent("someone else's")
    panel.put(agent, "user", [{"type": "text", "text": "hello"}])
    sign_in(page, other.token)
    open_agent(page, agent)
    expect(page.get_by_role("button", name="Copy transcript")).to_be_visible()
    expect(page.get_by_role("button", name="Delete…")).to_have_count(0)
    # and a forged post from another site deletes nothing
    answer = page.request.post(f"/agents/{agent}/delete", headers={"Origin": "https://elsewhere.example"},
                               max_redirects=0)  # fmt: skip
    assert answer.status == 303 and panel.client.agent(agent)["id"] == agent
    refused = page.request.post(f"/agents/{agent}/delete", max_redirects=0)  # same site, but not the owner
    assert refused.status == 403 and panel.client.agent(agent)["id"] == agent
