"""axe-core on the panel: no serious or critical violation on sign-in, the agents list and a transcript
(whole and in the outline)."""

from __future__ import annotations

from typing import Any

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Page, expect

from .conftest import Panel
from .test_panel import open_agent

pytestmark = pytest.mark.browser

AXE = Axe()


def serious(page: Page) -> list[str]:
    """Each serious or critical violation: its rule, and where (the first few elements)."""
    results = AXE.run(page)
    found: list[dict[str, Any]] = results.response["violations"]
    return [
        f"{v['id']} ({v['impact']}): " + "; ".join(str(n["target"]) for n in v["nodes"][:5])
        for v in found
        if v.get("impact") in ("serious", "critical")
    ]


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_sign_in_has_no_serious_violation(page: Page, panel: Panel, scheme: str) -> None:
    page.emulate_media(color_scheme=scheme)  # type: ignore[arg-type]
    page.goto("/signin")
    expect(page.locator("form")).to_be_visible()
    assert serious(page) == []


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_agents_list_has_no_serious_violation(signed_in: Page, panel: Panel, scheme: str) -> None:
    panel.agent("an agent for axe")
    signed_in.emulate_media(color_scheme=scheme)  # type: ignore[arg-type]
    signed_in.goto("/")
    signed_in.locator(".agent-list li").first.wait_for()
    assert serious(signed_in) == []


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_real_transcript_has_no_serious_violation(page: Page, largest_session: str, scheme: str) -> None:
    page.emulate_media(color_scheme=scheme)  # type: ignore[arg-type]
    open_agent(page, largest_session)
    page.locator("details.tool").first.wait_for()
    page.locator("details.tool > summary").last.click()  # an open fold too: its input and output
    assert serious(page) == []


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_outline_has_no_serious_violation(page: Page, largest_session: str, scheme: str) -> None:
    page.emulate_media(color_scheme=scheme)  # type: ignore[arg-type]
    open_agent(page, largest_session)
    page.get_by_role("button", name="Outline").click()
    page.locator("details.prose > summary").last.click()  # an answer opened: its Markdown
    expect(page.locator("details.prose[open] .md")).to_have_count(1)
    assert serious(page) == []


def test_each_page_is_named_by_one_h1_and_an_answers_headings_nest_under_it(signed_in: Page, panel: Panel) -> None:
    # axe's page-has-heading-one (moderate): a screen reader's "next heading" starts at the page's name.
    agent = panel.agent("a **named** agent")
    mid = panel.put(agent, "assistant", [{"type": "text", "text": "### Plan\n\nFirst.\n\n#### Step one\n\nDone."}])
    signed_in.goto("/")
    signed_in.locator(".agent-list li").first.wait_for()
    expect(signed_in.locator("h1")).to_have_text(["Agents"])
    open_agent(signed_in, agent)
    expect(signed_in.locator("h1")).to_have_text(["a named agent"])
    # An answer's own headings nest under it, from h2, whatever level the text starts at.
    expect(signed_in.locator(f'[data-message="{mid}"] .md').locator("h2, h3")).to_have_text(["Plan", "Step one"])
    expect(signed_in.locator(f'[data-message="{mid}"] .md h3')).to_have_text("Step one")
    rules = {v["id"] for v in AXE.run(signed_in).response["violations"]}
    assert not rules & {"page-has-heading-one", "heading-order"}
