"""Clock times: every prompt and turn says its time of day in the reader's time zone, with the
date where the day changes, and the exact time on hover."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect

from .conftest import Panel, sign_in

pytestmark = pytest.mark.browser


@pytest.fixture
def in_tokyo(browser: Browser, panel: Panel) -> Iterator[Page]:
    ctx = browser.new_context(base_url=panel.url, timezone_id="Asia/Tokyo")
    try:
        yield sign_in(ctx.new_page(), panel.token)
    finally:
        ctx.close()


def test_an_older_session_shows_clock_times_in_the_readers_zone_dated_where_the_day_changes(
    in_tokyo: Page, panel: Panel
) -> None:
    agent = panel.agent("an older session")
    times = ["2025-01-07T05:30:00Z", "2025-01-07T05:31:10Z", "2025-01-07T16:00:00Z", "2025-01-07T16:02:00Z"]
    for i, (role, at) in enumerate(zip(["user", "assistant", "user", "assistant"], times, strict=True)):
        panel.client.put_message(
            agent,
            {
                "id": f"00000000-0000-4000-8000-{i:012d}",
                "role": role,
                "parts": [{"type": "text", "text": f"message {i}"}],
                "metadata": {"timestamp": at},
            },
        )
    in_tokyo.goto(f"/agents/{agent}")
    shown = in_tokyo.locator("article.msg > .msg-gutter > time")
    # 05:30 UTC is 2:30 PM in Tokyo on Jan 7; 16:00 UTC is 1:00 AM there on Jan 8: a new day, dated.
    expect(shown).to_have_text(["Jan 7, 2025, 2:30 PM", "2:31 PM", "Jan 8, 2025, 1:00 AM", "1:02 AM"])
    expect(shown.first).to_have_attribute("title", "Jan 7, 2025, 2:30:00 PM")
