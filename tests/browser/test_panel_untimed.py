"""A log with no times of its own (Cursor's agent transcripts), in the panel: its messages are
dated by the log's file, so the gutter says no "+0 ms" and no turn "took 0 ms"; and its calls,
which the log gives no results, say "unknown" whole in their state column, never "unkno…"."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from .conftest import Panel, import_largest, own_account, settle, sign_in
from .test_panel import open_agent

pytestmark = pytest.mark.browser

CURSOR = Path(__file__).parents[1] / "data" / "transcripts" / "cursor"

# Every state badge: its text, and whether all of it shows (no ellipsis).
BADGES = """() => [...document.querySelectorAll('.badge.state')].filter((b) => b.getClientRects().length)
  .map((b) => ({ text: b.textContent, whole: b.scrollWidth <= b.clientWidth }))"""
GUTTER = """() => [...document.querySelectorAll('.msg-gutter > time')].map((t) => t.textContent)"""
TURNS = """() => [...document.querySelectorAll('.msg-head > .turn')].map((t) => t.textContent)"""


def test_an_untimed_log_shows_no_zero_times_and_whole_states(page: Page, panel: Panel) -> None:
    account = own_account(panel, "untimed")
    agent = import_largest(panel, account, CURSOR)
    sign_in(page, account.token)
    page.set_viewport_size({"width": 1400, "height": 900})
    open_agent(page, agent)
    expect(page.locator(".badge.state").first).to_be_visible()
    settle(page)
    badges = page.evaluate(BADGES)
    assert any(b["text"] == "unknown" for b in badges), badges
    assert all(b["whole"] for b in badges), [b for b in badges if not b["whole"]]
    unknown = page.locator(".badge.state-unknown").first
    assert "its outcome is not known" in (unknown.get_attribute("title") or "")  # said on hover
    times = page.evaluate(GUTTER)
    assert times and not any(t.startswith("+") for t in times), times
    assert not any("took" in t for t in page.evaluate(TURNS))
