"""A text part past the text bound (a pasted log) is a fold with both ends, read whole on a click."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from .conftest import Panel
from .test_panel import open_agent


def test_a_pasted_log_is_folded_with_both_ends_and_read_on_a_click(signed_in: Page, panel: Panel) -> None:
    agent = panel.agent("pasted")
    pasted = "".join(f"log line {n}\n" for n in range(20_000))  # ~250,000 code points
    message = panel.put(agent, "user", [{"type": "text", "text": pasted}])
    panel.put(agent, "assistant", [{"type": "text", "text": "I read your log."}])
    open_agent(signed_in, agent)
    fold = signed_in.locator(f'details[data-message="{message}"][data-part="0"]')
    expect(fold.locator("summary")).to_contain_text("Long text")
    expect(fold.locator("summary")).to_contain_text("cut")
    expect(signed_in.locator(".part.text").last).to_have_text("I read your log.")
    fold.locator("summary").click()
    expect(fold).to_contain_text("log line 0\n")
    expect(fold).to_contain_text("log line 19999")
    expect(fold).to_contain_text("log line 10000")  # under 1 MB: opening it reads the middle too
