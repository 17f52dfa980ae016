"""Search in the panel when the server's time per page runs out: the panel follows the partial
pages by itself, so a person sees every hit without asking for more."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from .conftest import Panel
from .test_panel import open_agent
from .test_panel_search import Requests, options, search_box

pytestmark = pytest.mark.browser


@pytest.fixture
def no_time(panel: Panel) -> Iterator[None]:
    """The server gives each page of hits no time: every page ends after its engine's first step."""
    before = panel.transcripts.settings
    panel.transcripts.settings = dataclasses.replace(before, search_seconds=0)
    yield
    panel.transcripts.settings = before


def short_word() -> str:
    """Two code points no other test writes: too short for a trigram, so the chunks are walked."""
    return chr(random.randrange(0xA640, 0xA66D)) + chr(random.randrange(0x2460, 0x2473))


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def test_hits_behind_partial_pages_all_come_in_the_search_box_and_in_find(
    signed_in: Page, panel: Panel, no_time: None
) -> None:
    w = short_word()
    agent = panel.agent("old word")
    oldest = [panel.put(agent, "user", [text(f"{n}: found {w} here")]) for n in range(3)]
    for n in range(300):
        panel.put(agent, "assistant", [text(f"{n}: nothing to see")])
    searches = Requests(signed_in)

    signed_in.keyboard.press("/")
    signed_in.keyboard.type(w)
    expect(options(signed_in)).to_have_count(3)
    expect(search_box(signed_in).locator(".search-status")).to_have_text("3 matches")
    asked = [u for u in searches.urls if "/api/search?" in u]
    assert len(asked) >= 3  # the newest 300 messages were walked in pages that ended early
    signed_in.keyboard.press("Escape")

    open_agent(signed_in, agent)
    find = signed_in.get_by_role("textbox", name="Find in this transcript")
    find.fill(w)
    expect(signed_in.locator(".find-count")).to_have_text("1 of 3")
    expect(signed_in.locator(f'article[data-id="{oldest[2]}"] mark.current')).to_have_text(w)
