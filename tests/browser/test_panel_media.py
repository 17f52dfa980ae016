"""Images a tool returned: a picture when its fold opens, a reference (not base64) in the Markdown export."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from foldline.importers.importer import import_paths

from .conftest import Panel, own_account, sign_in
from .test_panel import count_parts, jump_to_the_start, open_agent

pytestmark = pytest.mark.browser

SESSION = Path(__file__).resolve().parents[1] / "data" / "transcripts" / "claude-code" / "jnarowski__agentcmd"
CALL = "toolu_017MkAKfdSpTSButFXSQeHkH"  # a real call whose result holds a 13 KB PNG


def find_call(panel: Panel, account: str, agent: str) -> tuple[str, int, Any]:
    for message in panel.transcripts.messages(account, agent)["messages"]:
        for i, part in enumerate(message["parts"]):
            if part.get("toolCallId") == CALL:
                return message["id"], i, part
    raise AssertionError("the call is not in the session")


def test_a_tools_image_is_drawn_when_its_fold_opens_and_referenced_in_the_export(
    page: Page, panel: Panel, tmp_path: Path
) -> None:
    own = own_account(panel, "images")  # imported sessions go to an account of their own
    account = own.id
    log = tmp_path / "full-session-two.jsonl"
    log.write_bytes((SESSION / "full-session-two.jsonl").read_bytes())
    import_paths(panel.transcripts, [log], account_id=account, workspace_id=own.workspace)
    (agent,) = [a["id"] for a in panel.transcripts.list_agents(account, own.workspace)["agents"]]
    sign_in(page, own.token)
    mid, index, part = find_call(panel, account, agent)
    (image,) = [i for i in part["output"] if i.get("type") == "media"]
    assert image["mediaType"] == "image/png"

    open_agent(page, agent)
    reads = count_parts(page)
    jump_to_the_start(page)
    fold = page.locator(f'details[data-message="{mid}"][data-part="{index}"]')
    expect(fold.locator("img")).to_have_count(0)  # closed: nothing drawn, nothing read
    fold.locator("summary").click()
    img = fold.locator("figure.tool-image img")
    expect(img).to_have_count(1)
    assert (img.get_attribute("src") or "").startswith("data:image/png;base64,iVBOR")
    assert (
        page.evaluate(
            "(s) => document.querySelector(s).naturalWidth",
            f'details[data-message="{mid}"][data-part="{index}"] figure.tool-image img',
        )
        > 0
    )  # a real picture, decoded
    expect(fold.locator("figcaption")).to_contain_text("image/png")
    assert "iVBOR" not in fold.locator(".fold-body").inner_text()  # no wall of base64
    assert len([r for r in reads if f"/messages/{mid}/parts/{index}" in r]) <= 1

    # The Markdown export names the image and its size; the base64 stays in the JSON download.
    with page.expect_download() as got:
        page.click("text=Download Markdown")
    text = Path(got.value.path()).read_text()
    assert image["data"][:200] not in text
    assert "*[image 1: image/png," in text and "not inlined, it is in the JSON download]*" in text
    with page.expect_download() as got:
        page.click("text=Download JSON")
    assert image["data"] in Path(got.value.path()).read_text()


def test_an_svg_or_unknown_media_is_never_drawn(signed_in: Page, panel: Panel) -> None:
    agent = panel.agent("svg output")
    svg = "PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciLz4="
    output = [{"type": "text", "text": "the chart"}, {"type": "media", "mediaType": "image/svg+xml", "data": svg}]
    mid = panel.put(
        agent,
        "assistant",
        [
            {
                "type": "dynamic-tool",
                "toolName": "chart",
                "toolCallId": "c1",
                "state": "output-available",
                "input": {},
                "output": output,
            }
        ],
    )
    open_agent(signed_in, agent)
    fold = signed_in.locator(f'details[data-message="{mid}"][data-part="0"]')
    fold.locator("summary").click()
    expect(fold.locator(".media-output pre").first).to_have_text("the chart")
    expect(fold.locator(".media-output")).to_contain_text("image/svg+xml")
    expect(fold.locator(".media-output")).to_contain_text("not drawn")
    expect(fold.locator("img")).to_have_count(0)
