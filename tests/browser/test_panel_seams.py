"""The seams of a cut field: a slice that meets the tail joins it, and a piece that begins or
ends inside a line says so with a dimmed "…"."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from .conftest import Panel
from .test_panel_search import options, word

pytestmark = pytest.mark.browser

MB = 1024 * 1024
HALF = 2048  # the cut's head and tail, in code points (foldline/cut.py's default bound // 2)


def log(size: int) -> str:
    return "".join(f"metricsResult.data row {i:07d} of the dateRange\n" for i in range(size // 45 + 1))


def test_a_hit_next_to_the_tail_reads_as_one_text_and_half_lines_are_marked(signed_in: Page, panel: Panel) -> None:
    w = word()
    body = log(MB + 4096)
    output = body + f"ERROR: {w} while linking\n" + log(2500)
    agent = panel.agent("a hit by the tail")
    mid = panel.put(
        agent,
        "assistant",
        [
            {
                "type": "tool-Bash",
                "toolCallId": "c1",
                "state": "output-available",
                "input": {"command": "make"},
                "output": output,
            }
        ],
    )
    signed_in.goto(panel.url + f"/agents/{agent}")
    signed_in.keyboard.press("/")
    signed_in.keyboard.type(w)
    expect(options(signed_in)).to_have_count(1)
    signed_in.keyboard.press("Enter")

    fold = signed_in.locator(f'details[data-message="{mid}"][data-part="0"]')
    expect(fold.locator("mark.hit.current")).to_have_text(w)
    # The slice around the hit reaches the tail: one block, the seam inside one unbroken line.
    joined = fold.locator("pre.window.tail")
    expect(joined).to_have_count(1)
    expect(fold.locator("section[data-field=output] pre.out")).to_have_count(
        2
    )  # the head, and the slice joined to the tail
    expect(fold.locator(".cut-mark")).to_have_count(1)
    seam = len(output) - HALF
    line_start = output.rindex("\n", 0, seam) + 1
    expect(joined).to_contain_text(output[line_start : output.index("\n", seam)])
    # The head ends inside a line, and the slice begins inside one: each says so, outside the text.
    head = fold.locator("pre.head")
    assert not output[:HALF].endswith("\n")
    assert head.evaluate("p => p.lastElementChild && p.lastElementChild.matches('.half-line')")
    assert joined.evaluate("p => p.firstElementChild && p.firstElementChild.matches('.half-line')")
    assert joined.evaluate(
        "p => !p.lastElementChild || !p.lastElementChild.matches('.half-line')"
    )  # the end is the end
    assert head.evaluate("p => getComputedStyle(p.lastElementChild).userSelect") == "none"
