"""Density and times: a tool call is one line, a turn has one quiet head, every message is dated;
the outline puts 20 tool calls of the largest real session on one 1400×900 screen."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from playwright.sync_api import Page, expect

from .conftest import Panel, settle
from .density import DENSEST, IN_VIEW
from .test_panel import jump_to_the_start, open_agent

pytestmark = pytest.mark.browser


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
    expect(first).to_have_text(re.compile(r"^(\w{3} \d{1,2}, )?\d{1,2}:\d{2} [AP]M$"))  # its clock time
    expect(page.locator("article.role-assistant time").nth(1)).to_have_text("+5 s")  # within the turn
    # The prompt was stored just now (createdAt), after the answers' own times: no duration is made up.
    expect(heads.locator(".turn")).to_be_hidden()


def panel_id(i: int) -> str:
    return f"00000000-0000-4000-8000-{i:012d}"


def test_a_turn_shows_how_long_it_took_and_the_largest_real_session_is_dated(
    page: Page, panel: Panel, largest_session: str
) -> None:
    agent = largest_session
    page.set_viewport_size({"width": 1400, "height": 900})
    open_agent(page, agent)
    articles = page.locator("article.msg")
    expect(articles).to_have_count(15)
    # Every message carries its source line's time.
    expect(page.locator("article.msg > .msg-gutter > time[datetime]")).to_have_count(15)
    assert page.locator("article.msg time").first.get_attribute("datetime", timeout=1000).startswith("2026-01-")
    # The last turn ("update phase 4.1 document") took a known time, said once, in its head.
    turn = page.locator(".msg-head .turn:visible").last
    expect(turn).to_contain_text("took ")
    # Its tool rows are one line each and its messages share the head.
    assert page.locator("article.role-assistant.cont").count() >= 10
    heights = page.locator("details.tool > summary").evaluate_all(
        "ns => ns.map((n) => n.getBoundingClientRect().height)"
    )
    assert heights and max(heights) <= 22


def test_the_outline_puts_twenty_tool_calls_of_the_largest_real_session_on_one_screen(
    page: Page, largest_session: str
) -> None:
    page.set_viewport_size({"width": 1400, "height": 900})
    open_agent(page, largest_session)
    jump_to_the_start(page)
    texts = page.locator(".messages article.role-assistant .part.text").count()
    whole = page.evaluate(DENSEST)  # whole answers sit between the turns: the session's shape
    toggle = page.get_by_role("button", name="Outline")
    expect(toggle).to_have_attribute("aria-pressed", "false")
    toggle.click()
    expect(toggle).to_have_attribute("aria-pressed", "true")
    # Nothing is lost: every answer is a one-line fold now, its Markdown inside.
    prose = page.locator(".messages.outline details.fold.prose")
    expect(prose).to_have_count(texts)
    expect(page.locator(".messages article.role-assistant .part.text")).to_have_count(0)
    page.evaluate(DENSEST)
    settle(page)  # scrolled and drawn
    in_view = page.evaluate(IN_VIEW)
    assert in_view >= 20 and in_view > whole
    heights = page.locator("details.tool > summary, details.prose > summary").evaluate_all(
        "ns => ns.map((n) => n.getBoundingClientRect().height)"
    )
    assert max(heights) <= 22  # one line each
    # An answer opens whole, as Markdown at a readable measure; the keyboard opens it too.
    answer = prose.last
    answer.locator("summary").focus()
    page.keyboard.press("Enter")
    expect(answer.locator(".fold-body > .md")).to_contain_text("Estimated effort")
    expect(answer.locator(".fold-body > .md pre").first).to_be_visible()  # its code blocks drawn
    width = answer.locator(".fold-body > .md").evaluate("n => n.getBoundingClientRect().width")
    assert width < 900
    # The choice is kept: a reload opens in the outline; switching back draws the answers whole.
    page.reload()
    page.wait_for_selector(".live[data-state=live]")
    expect(page.locator(".messages.outline")).to_have_count(1)
    page.get_by_role("button", name="Outline").click()
    expect(page.locator(".messages.outline")).to_have_count(0)
    expect(page.locator(".messages details.fold.prose")).to_have_count(0)


def test_in_the_outline_a_place_in_an_answer_opens_its_fold_and_is_marked(signed_in: Page, panel: Panel) -> None:
    page = signed_in
    agent = panel.agent("outline address")
    panel.put(agent, "user", [{"type": "text", "text": "Where is it?"}])
    text = "First line of the answer.\n\nIt is in **the zanzibar folder**, as you said."
    mid = panel.put(agent, "assistant", [{"type": "text", "text": text}])
    open_agent(page, agent)
    page.get_by_role("button", name="Outline").click()
    fold = page.locator(f'details.prose[data-message="{mid}"]')
    expect(fold).not_to_have_attribute("open", "")
    expect(fold.locator("summary")).to_contain_text("First line of the answer. It is in the zanzibar")
    at = text.index("zanzibar")
    page.goto(f"/agents/{agent}#msg={mid}&part=0&field=text&at={at}")
    expect(fold.locator("mark.hit.current")).to_have_text("zanzibar")
    expect(fold).to_have_attribute("open", "")
    expect(fold.locator(".md strong")).to_contain_text("the zanzibar folder")
    # A message that arrives live is drawn in the outline too.
    panel.put(agent, "assistant", [{"type": "text", "text": "A live answer\n\nwith two paragraphs"}])
    expect(page.locator("details.prose").last.locator("summary")).to_contain_text("A live answer with two")
