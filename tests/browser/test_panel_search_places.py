"""One result per place in the panel (issue 23, item 7): a field that holds the words many times
is one option saying how many ("17 matches in this output"), and once it is opened in its
transcript the panel steps through its matches, next and previous, cut middle included."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from .conftest import Panel
from .test_panel import bash
from .test_panel_search import options, search_box, text, word

pytestmark = pytest.mark.browser


def log_with(first: str, second: str) -> tuple[str, list[tuple[int, str]]]:
    """A build log of about 190 KB (stored cut) with ``first`` on 9 lines and ``second`` on 8, in
    turn, so every chunk of it holds both; the offset and word of each of the 17."""
    lines, at, size = [], [], 0
    for n in range(6100):
        line = f"line {n:05d} building target {n % 97}\n"
        if n % 375 == 10:
            needle = first if n % 750 == 10 else second
            line = f"line {n:05d} {needle} in target\n"
            at.append((size + len(f"line {n:05d} "), needle))
        lines.append(line)
        size += len(line)
    return "".join(lines), at


def test_two_words_in_one_output_are_one_result_stepped_through_when_opened(signed_in: Page, panel: Panel) -> None:
    w, v = word(), word()
    agent = panel.agent("a build with warnings")
    output, places = log_with(v, w)
    at = [start for start, _ in places]
    assert len(at) == 17 and len(output) > 150_000 and [n for _, n in places].count(w) == 8
    mid = panel.put(agent, "assistant", [text("Building."), bash("make all", output)])
    panel.put(agent, "user", [text(f"one {w} elsewhere")])

    signed_in.keyboard.press("/")
    signed_in.keyboard.type(f"{w} {v}")
    expect(options(signed_in)).to_have_count(1)  # both words, one output: one result
    option = options(signed_in).first
    expect(option.locator(".hit-where")).to_have_text("Assistant · bash · output · 17 matches in this output")
    expect(option.locator("mark.hit")).to_have_text([v])  # the snippet around the first match
    expect(search_box(signed_in).locator(".search-status")).to_have_text("17 matches in 1 place")
    signed_in.keyboard.press("Enter")

    fold = signed_in.locator(f'details[data-message="{mid}"][data-part="1"]')
    steps = signed_in.get_by_role("group", name="Matches in this place")
    count = steps.get_by_role("status")
    expect(count).to_have_text("1 of 17 matches in this output")
    expect(fold.locator("mark.current")).to_have_text(v)
    expect(signed_in).to_have_url(re.compile(f"#msg={mid}&part=1&field=output&at={at[0]}$"))

    after = steps.get_by_role("button", name="Match after")
    after.click()
    expect(count).to_have_text("2 of 17 matches in this output")
    expect(fold.locator("mark.current")).to_have_text(w)
    expect(signed_in).to_have_url(re.compile(f"&at={at[1]}$"))
    for n in range(3, 10):  # on into the cut middle, read by slice
        after.click()
        expect(count).to_have_text(f"{n} of 17 matches in this output")
    expect(signed_in).to_have_url(re.compile(f"&at={at[8]}$"))
    expect(fold.locator("pre.window mark.current")).to_have_text(places[8][1])
    expect(signed_in.locator("main mark.current")).to_have_count(1)

    before = steps.get_by_role("button", name="Match before")
    before.click()
    expect(count).to_have_text("8 of 17 matches in this output")
    expect(signed_in).to_have_url(re.compile(f"&at={at[7]}$"))
    for _ in range(7):
        before.click()
    expect(count).to_have_text("1 of 17 matches in this output")
    before.click()  # round to the last, in the tail
    expect(count).to_have_text("17 of 17 matches in this output")
    expect(signed_in).to_have_url(re.compile(f"&at={at[16]}$"))
    expect(fold.locator("mark.current")).to_have_text(places[16][1])

    # Find in this transcript steps per match too, and the place's steps give way to it.
    find = signed_in.get_by_role("textbox", name="Find in this transcript")
    find.fill(w)
    expect(signed_in.locator(".find-count")).to_have_text("1 of 9")  # 8 in the output, 1 in the prompt
    expect(steps).to_be_hidden()
