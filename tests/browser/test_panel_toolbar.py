"""The toolbar in reach: a transcript opens at its newest end, and its toolbar (Copy, Download,
Outline) and the agent's facts stay on screen under the page's bar wherever the reader is."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from .conftest import Panel
from .test_panel import open_agent

pytestmark = pytest.mark.browser


def test_the_toolbar_and_the_agents_facts_stay_in_reach_at_the_newest_end(signed_in: Page, panel: Panel) -> None:
    agent = panel.agent("a long session")
    for i in range(12):
        panel.put(agent, "user", [{"type": "text", "text": f"question {i}\n\n" + "more words\n" * 30}])
        panel.put(agent, "assistant", [{"type": "text", "text": f"answer {i}\n\n" + "lines of it\n" * 30}])
    signed_in.set_viewport_size({"width": 1200, "height": 700})
    open_agent(signed_in, agent)
    assert signed_in.evaluate("window.scrollY") > 1000  # at the newest end, far from the top

    outline = signed_in.get_by_role("button", name="Outline")
    for control in [
        signed_in.get_by_role("button", name="Copy transcript"),
        outline,
        signed_in.get_by_role("link", name="Download JSON"),
        signed_in.locator(".agent-summary"),
    ]:
        expect(control).to_be_in_viewport()
    # Under the page's bar, not behind it; and the newest message is not hidden under the head.
    bar = signed_in.locator("header.bar").bounding_box()
    head = signed_in.locator(".agent-head").bounding_box()
    assert bar and head and head["y"] >= bar["y"] + bar["height"] - 1
    outline.click()
    expect(outline).to_have_attribute("aria-pressed", "true")
    expect(outline).to_be_in_viewport()
    outline.click()
    expect(outline).to_have_attribute("aria-pressed", "false")
