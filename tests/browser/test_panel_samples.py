"""The first run's sample sessions in the agents list (issue 23, item 9): their own workspace,
said to be the samples, each row marked, and one click (after a confirmation) removes them all."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from foldline.importers.first_run import import_on_first_run
from foldline.local_account import Local

from .conftest import Panel, own_account, sign_in

pytestmark = pytest.mark.browser


def test_the_samples_are_marked_and_one_click_removes_them_all(
    page: Page, panel: Panel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"  # a machine with no sessions of its own
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name in ("CODEX_HOME", "CLAUDE_CONFIG_DIR", "XDG_CONFIG_HOME", "XDG_DATA_HOME"):
        monkeypatch.delenv(name, raising=False)
    account = own_account(panel, "first run")
    first = import_on_first_run(panel.transcripts, Local(account.id, account.workspace, account.token))
    assert first is not None and first.samples
    sign_in(page, account.token)
    page.set_viewport_size({"width": 1200, "height": 900})
    page.goto("/")
    samples = page.locator("section.workspace.samples")
    expect(samples.locator("h2")).to_have_text("Samples")
    expect(samples.locator(".samples-note")).to_contain_text("Sample sessions shipped with Foldline")
    expect(samples.locator("li[data-agent]")).to_have_count(5)
    expect(samples.locator("li[data-agent] .badge.sample")).to_have_count(5)
    own = page.locator("section.workspace:not(.samples)")
    expect(own.locator("h2")).to_have_text("first run")
    expect(own.locator(".badge.sample")).to_have_count(0)
    # The samples come after the user's own workspace.
    assert page.locator("section.workspace").last.get_attribute("class") == "workspace samples"
    if os.environ.get("FOLDLINE_SHOTS"):
        page.screenshot(path=os.environ["FOLDLINE_SHOTS"] + "/samples.png")
    # A cancelled confirmation removes nothing.
    samples.get_by_role("button", name="Remove the samples…").click()
    dialog = page.get_by_role("dialog", name="Remove the sample sessions?")
    expect(dialog).to_be_visible()
    dialog.get_by_role("button", name="Cancel").click()
    expect(dialog).to_have_count(0)
    expect(samples.locator("li[data-agent]")).to_have_count(5)
    # Confirmed: every sample goes, and their workspace leaves the list.
    samples.get_by_role("button", name="Remove the samples…").click()
    page.get_by_role("dialog").get_by_role("button", name="Remove the samples").click()
    page.wait_for_url("**/")
    page.wait_for_selector("body[data-ready]")
    expect(page.locator("section.workspace")).to_have_count(1)
    expect(page.locator("section.workspace.samples")).to_have_count(0)
    assert panel.transcripts.samples_workspace(account.id) is None
    workspaces = panel.transcripts.me(account.id)["workspaces"]
    assert [w["name"] for w in workspaces] == ["first run"]
