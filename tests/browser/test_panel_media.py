"""Images a tool returned: a picture when its fold opens, a reference (not base64) in the Markdown export."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from .conftest import Panel
from .test_panel import open_agent

pytestmark = pytest.mark.browser

SESSION = Path(__file__).resolve().parents[1] / "data" / "transcripts" / "claude-code" / "jnarowski__agentcmd"
CALL = "toolu_017MkAKfdSpTSButFXSQeHkH"  # a real call whose result holds a 13 KB PNG


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
