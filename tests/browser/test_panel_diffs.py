"""Edit, MultiEdit, Write over a file and Codex apply_patch open as a unified diff: <del> and <ins>."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Locator, Page, expect

from .conftest import Panel, import_largest, own_account, sign_in
from .test_panel import jump_to_the_start, open_agent

pytestmark = pytest.mark.browser

DATA = Path(__file__).resolve().parents[1] / "data" / "transcripts"
CLAUDE = (
    DATA
    / "claude-code"
    / "daaain__claude-code-log"
    / "-src-deep-manifest"
    / "a7da6a22-facc-4fcd-8bab-f83c87862004.jsonl"
)
CODEX = (
    DATA
    / "codex"
    / "codemie-ai__codemie-code"
    / "rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"
)


def imported(panel: Panel, page: Page, name: str, source: Path, tmp_path: Path) -> tuple[str, str]:
    """The session imported into an account of its own, `page` signed in as it: (account, agent)."""
    account = own_account(panel, name)
    log = tmp_path / source.name
    log.write_bytes(source.read_bytes())
    agent = import_largest(panel, account, log)
    sign_in(page, account.token)
    return account.id, agent


def first_call(panel: Panel, account: str, agent: str, tool: str, test: Any = lambda p: True) -> tuple[str, int, Any]:
    for message in panel.transcripts.messages(account, agent)["messages"]:
        for i, part in enumerate(message["parts"]):
            if part.get("type") == f"tool-{tool}" and test(part):
                return message["id"], i, part
    raise AssertionError(f"no {tool} call")


def opened(page: Page, mid: str, index: int) -> Locator:
    fold = page.locator(f'details[data-message="{mid}"][data-part="{index}"]')
    fold.scroll_into_view_if_needed()
    fold.locator("summary").click()
    return fold.locator("pre.diff")


def test_a_real_claude_code_edit_and_write_over_a_file_open_as_diffs(
    page: Page, panel: Panel, tmp_path: Path
) -> None:
    account, agent = imported(panel, page, "diffs claude", CLAUDE, tmp_path)
    e_mid, e_index, edit = first_call(panel, account, agent, "Edit")
    w_mid, w_index, write = first_call(
        panel, account, agent, "Write", lambda p: "structuredPatch" in p.get("toolMetadata", {}).get("claudeCode", {})
    )
    open_agent(page, agent)
    jump_to_the_start(page)
    expect(page.locator(".older")).to_be_hidden()

    diff = opened(page, e_mid, e_index)
    old_lines = [line for line in edit["input"]["old_string"].split("\n") if line.strip()]
    new_lines = [line for line in edit["input"]["new_string"].split("\n") if line.strip()]
    dels = diff.locator("del").all_inner_texts()
    ins = diff.locator("ins").all_inner_texts()
    assert dels and ins
    assert all(d.startswith("-") and d[1:].rstrip("\n") in old_lines for d in dels)  # the minus read without colour
    assert all(i.startswith("+") and i[1:].rstrip("\n") in new_lines for i in ins)
    expect(diff.locator(".hunk").first).to_have_text("--- " + edit["input"]["file_path"])

    # A Write over an existing file: the patch Claude Code logged, with its line numbers.
    diff = opened(page, w_mid, w_index)
    hunk = write["toolMetadata"]["claudeCode"]["structuredPatch"][0]
    expect(diff.locator(".hunk").nth(2)).to_have_text(
        f"@@ -{hunk['oldStart']},{hunk['oldLines']} +{hunk['newStart']},{hunk['newLines']} @@"
    )
    removed = [line[1:] for line in hunk["lines"] if line.startswith("-")]
    assert [d[1:].rstrip("\n") for d in diff.locator("del").all_inner_texts()][: len(removed)] == removed


def test_a_real_codex_apply_patch_opens_as_a_diff(page: Page, panel: Panel, tmp_path: Path) -> None:
    account, agent = imported(panel, page, "diffs codex", CODEX, tmp_path)
    mid, index, part = first_call(panel, account, agent, "apply_patch")
    patch = part["input"]["input"]
    open_agent(page, agent)
    jump_to_the_start(page)
    expect(page.locator(".older")).to_be_hidden()
    diff = opened(page, mid, index)
    expect(diff.locator(".hunk").first).to_contain_text("*** Update File: ")
    plus = [line for line in patch.split("\n") if line.startswith("+")]
    assert [i.rstrip("\n") for i in diff.locator("ins").all_inner_texts()] == plus
    assert "*** Begin Patch" not in diff.inner_text()


def test_a_multiedit_is_one_hunk_per_edit(signed_in: Page, panel: Panel) -> None:
    agent = panel.agent("multiedit")
    edits = [
        {"old_string": "a = 1\nb = 2\n", "new_string": "a = 1\nb = 3\n"},
        {"old_string": "<b>x</b>", "new_string": "<i>y</i>", "replace_all": True},
    ]
    part = {
        "type": "tool-MultiEdit",
        "toolCallId": "m1",
        "state": "output-available",
        "input": {"file_path": "src/app.py", "edits": edits},
        "output": "ok",
    }
    mid = panel.put(agent, "assistant", [part])
    open_agent(signed_in, agent)
    diff = opened(signed_in, mid, 0)
    expect(diff.locator(".hunk")).to_have_text(
        ["--- src/app.py", "+++ src/app.py", "@@ edit 1 of 2 @@", "@@ edit 2 of 2 (every occurrence) @@"]
    )
    expect(diff.locator("del")).to_have_text(["-b = 2\n", "-<b>x</b>\n"])
    expect(diff.locator("ins")).to_have_text(["+b = 3\n", "+<i>y</i>\n"])
    expect(diff.locator("b, i")).to_have_count(0)  # drawn as text
    expect(signed_in.locator(f'details[data-message="{mid}"] .field-head .label').first).to_have_text("Change · −2 +2")


def test_a_changed_block_reads_removed_lines_first_then_added_ones(signed_in: Page, panel: Panel) -> None:
    agent = panel.agent("edit order")
    edit = {"file_path": "notes.md", "old_string": "one\ntwo\nthree\nfour\n", "new_string": "one\nTWO\nTHREE\nfour\n"}
    part = {"type": "tool-Edit", "toolCallId": "e1", "state": "output-available", "input": edit, "output": "ok"}
    mid = panel.put(agent, "assistant", [part])
    open_agent(signed_in, agent)
    diff = opened(signed_in, mid, 0)
    # As a unified diff reads everywhere: the old lines of a change, then the new ones.
    expect(diff.locator("del")).to_have_count(2)
    rows = diff.locator(":scope > :not(.hunk)").all_inner_texts()
    assert [r.rstrip("\n") for r in rows] == [" one", "-two", "-three", "+TWO", "+THREE", " four"]
