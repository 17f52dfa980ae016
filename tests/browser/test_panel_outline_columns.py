"""The outline's columns (issue 23, item 5), measured on the real sample sessions: every tool row
starts at one x, its state and size columns line up from row to row, and a run of thoughts says
"Thought" once ("Thought ×3")."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from foldline.importers.first_run import samples_dir

from .conftest import Panel, import_largest, own_account, settle, sign_in
from .test_panel import jump_to_the_start, open_agent

pytestmark = pytest.mark.browser

# Each closed tool row in the outline: where its row, name, input, state and size are (px).
ROWS = """() => [...document.querySelectorAll('.messages.outline details.tool:not([open]) > summary')]
  .filter((s) => s.getBoundingClientRect().height > 0)
  .map((s) => {
    const at = (sel, side) => {
      const n = s.querySelector(sel);
      return n ? Math.round(n.getBoundingClientRect()[side]) : null;
    };
    return { row: at('.tool-name', 'left'), input: at('.tool-input', 'left'), state: at('.badge.state', 'left'),
             stateEnd: at('.badge.state', 'right'), size: at('.size', 'right') };
  })"""

# Each closed thought in the outline, top to bottom: its top, whether its label shows, the label.
THOUGHTS = """() => [...document.querySelectorAll('.messages.outline details.reasoning:not([open]) > summary')]
  .filter((s) => s.getBoundingClientRect().height > 0)
  .map((s) => { const k = s.querySelector('.kind'); const r = s.getBoundingClientRect();
    return { top: Math.round(r.top + scrollY), bottom: Math.round(r.bottom + scrollY),
             shown: getComputedStyle(k).visibility !== 'hidden', label: k.textContent,
             preview: Math.round(s.querySelector('.preview').getBoundingClientRect().left) }; })
  .sort((a, b) => a.top - b.top)"""


def outline_of(page: Page, panel: Panel, name: str, path: Path) -> None:
    account = own_account(panel, name)
    agent = import_largest(panel, account, path)
    sign_in(page, account.token)
    page.set_viewport_size({"width": 1400, "height": 900})
    open_agent(page, agent)
    jump_to_the_start(page)
    toggle = page.get_by_role("button", name="Outline")
    if toggle.get_attribute("aria-pressed") != "true":
        toggle.click()
    expect(page.locator(".messages.outline")).to_have_count(1)
    settle(page)


def one(rows: list[dict[str, Any]], key: str) -> set[int]:
    return {r[key] for r in rows if r[key] is not None}


def check_columns(page: Page) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = page.evaluate(ROWS)
    assert len(rows) > 20
    assert len(one(rows, "row")) == 1, "every tool row starts at one x"
    assert len(one(rows, "input")) == 1, "every input starts at one x"
    assert len(one(rows, "state")) == 1 and len(one(rows, "stateEnd")) == 1, "the state column lines up"
    assert len(one(rows, "size")) == 1, "the size column lines up"
    return rows


def check_thought_runs(page: Page) -> list[dict[str, Any]]:
    thoughts: list[dict[str, Any]] = page.evaluate(THOUGHTS)
    assert thoughts
    assert thoughts[0]["shown"]
    assert len(one(thoughts, "preview")) == 1, "every thought's first words start at one x"
    assert max(t["bottom"] - t["top"] for t in thoughts) <= 22, "one line each"
    for before, after in zip(thoughts, thoughts[1:], strict=False):
        if after["top"] == before["bottom"]:  # the next row: one run
            assert not after["shown"], f"'Thought' said again in a run: {after}"
        else:
            assert after["shown"], f"a run's first thought says 'Thought': {after}"
    # The first of each run says how many it holds.
    runs: list[int] = []
    for t in thoughts:
        if t["shown"]:
            runs.append(1)
        else:
            runs[-1] += 1
    labels = [t["label"] for t in thoughts if t["shown"]]
    assert labels == ["Thought" if n == 1 else f"Thought ×{n}" for n in runs]
    assert max(runs) >= 3
    return thoughts


def test_the_outline_of_the_largest_sample_lines_its_columns_up(page: Page, panel: Panel) -> None:
    outline_of(page, panel, "outline columns", samples_dir() / "claude-code" / "session-624a4a58.jsonl")
    rows = check_columns(page)
    thoughts = check_thought_runs(page)
    # The tool column starts right of the thought and answer columns.
    assert rows[0]["row"] > thoughts[0]["preview"] + 300
    if os.environ.get("FOLDLINE_SHOTS"):
        page.screenshot(path=os.environ["FOLDLINE_SHOTS"] + "/outline-claude.png")
    # Opening a thought gives it a row of its own: the run it was in is said again after it.
    again = page.locator(".messages.outline details.reasoning:has(> summary .kind.again)").first
    mid, index = again.get_attribute("data-message"), again.get_attribute("data-part")
    fold = page.locator(f'details.reasoning[data-message="{mid}"][data-part="{index}"]')
    fold.locator("summary").click()
    expect(fold).to_have_attribute("open", "")
    settle(page)
    check_thought_runs(page)
    check_columns(page)


def test_the_outline_of_the_codex_sample_lines_its_columns_up(page: Page, panel: Panel) -> None:
    (rollout,) = (samples_dir() / "codex").glob("*.jsonl")
    outline_of(page, panel, "outline codex", rollout)
    check_columns(page)
    thoughts: list[dict[str, Any]] = page.evaluate(THOUGHTS)
    shown = [t for t in thoughts if t["shown"]]
    assert thoughts and len(shown) < len(thoughts)
    if os.environ.get("FOLDLINE_SHOTS"):
        page.screenshot(path=os.environ["FOLDLINE_SHOTS"] + "/outline-codex.png")
