"""Density and times: a tool call is one line, a turn has one quiet head, every message is dated."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from playwright.sync_api import Page, expect

from .conftest import Panel
from .test_panel import open_agent

pytestmark = pytest.mark.browser


# The tool rows whose summary lies wholly inside the window, below the sticky bar.
IN_VIEW = """() => {
  const top = document.querySelector('.bar').getBoundingClientRect().bottom;
  return [...document.querySelectorAll('.messages details.tool > summary')]
    .map((s) => s.getBoundingClientRect())
    .filter((r) => r.height > 0 && r.top >= top && r.bottom <= innerHeight).length;
}"""


def stamp(at: datetime) -> str:
    return at.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def test_twenty_tool_calls_fit_on_a_1400_by_900_screen_under_one_quiet_head(signed_in: Page, panel: Panel) -> None:
    page = signed_in
    agent = panel.agent("dense")
    start = datetime.now(UTC) - timedelta(hours=3, minutes=5)
    panel.put(agent, "user", [{"type": "text", "text": "Fix the build."}])
    for i in range(24):
        parts = [
            {"type": "step-start"},
            {"type": "reasoning", "text": f"Step {i}: look at the next file.", "state": "done"},
            {
                "type": "tool-Bash",
                "toolCallId": f"call_{i}",
                "state": "output-available",
                "input": {"command": f"make step-{i}"},
                "output": f"ok {i}\n",
            },
        ]
        meta = {"model": "claude-sonnet-4-5", "timestamp": stamp(start + timedelta(seconds=5 * i + 2))}
        panel.client.put_message(agent, {"id": panel_id(i), "role": "assistant", "parts": parts, "metadata": meta})
    page.set_viewport_size({"width": 1400, "height": 900})
    open_agent(page, agent)
    expect(page.locator("article.msg")).to_have_count(25)  # the top came into view: the older page is read
    page.evaluate("scrollTo(0, document.querySelector('details.tool').getBoundingClientRect().top + scrollY - 90)")
    assert page.evaluate(IN_VIEW) >= 20
    heights = page.locator("details.tool > summary").evaluate_all(
        "ns => ns.map((n) => n.getBoundingClientRect().height)"
    )

    assert max(heights) <= 22  # one line each
    # One head for the run: the model once; the other 23 messages of the turn show none.
    heads = page.locator("article.role-assistant > .msg-body > .msg-head:visible")
    expect(heads).to_have_count(1)
    expect(heads.locator(".model")).to_have_text("claude-sonnet-4-5")
    expect(page.locator("article.role-assistant.cont")).to_have_count(23)
    # Every message is dated; the run's head says how long the turn took since its prompt.
    times = page.locator("article.msg time[datetime]")
    expect(times).to_have_count(25)
    first = page.locator("article.role-assistant time").first
    assert first.get_attribute("datetime") == stamp(start + timedelta(seconds=2))
    assert (first.get_attribute("title") or "").strip()  # the absolute time on hover
    expect(first).to_have_text("3 h ago")
    expect(page.locator("article.role-assistant time").nth(1)).to_have_text("+5 s")  # within the turn
    # The prompt was stored just now (createdAt), after the answers' own times: no duration is made up.
    expect(heads.locator(".turn")).to_be_hidden()


def panel_id(i: int) -> str:
    return f"00000000-0000-4000-8000-{i:012d}"


def test_a_turn_shows_how_long_it_took_and_the_largest_real_session_is_dated(
    signed_in: Page, panel: Panel, largest_session: str
) -> None:
    agent = largest_session
    signed_in.set_viewport_size({"width": 1400, "height": 900})
    open_agent(signed_in, agent)
    articles = signed_in.locator("article.msg")
    expect(articles).to_have_count(15)
    # Every message carries its source line's time.
    expect(signed_in.locator("article.msg > .msg-gutter > time[datetime]")).to_have_count(15)
    assert signed_in.locator("article.msg time").first.get_attribute("datetime", timeout=1000).startswith("2026-01-")
    # The last turn ("update phase 4.1 document") took a known time, said once, in its head.
    turn = signed_in.locator(".msg-head .turn:visible").last
    expect(turn).to_contain_text("took ")
    # Its tool rows are one line each and its messages share the head.
    assert signed_in.locator("article.role-assistant.cont").count() >= 10
    heights = signed_in.locator("details.tool > summary").evaluate_all(
        "ns => ns.map((n) => n.getBoundingClientRect().height)"
    )
    assert heights and max(heights) <= 22
