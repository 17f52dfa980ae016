"""A call's input is readable: a string's line breaks are line breaks wherever it sits (a value of
the input, an item of a list in it, an input that is a list), drawn as text inside its JSON
quotes, so the JSON stays unambiguous; Copy gives the JSON itself."""

from __future__ import annotations

import json
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from .conftest import Panel
from .test_panel import open_agent

pytestmark = pytest.mark.browser

HOSTILE = '<img src=x onerror="window.pwned=1">'
INPUTS: list[tuple[str, Any]] = [
    ("Bash", {"command": "cd src\nmake test", "description": "build"}),
    ("shell", {"command": ["bash", "-lc", "cd src\nmake test"], "workdir": "/repo"}),
    ("MultiEdit", {"file_path": "/repo/a.txt", "edits": [{"old_string": 'say "hi"\n' + HOSTILE, "new_string": "b"}]}),
    ("custom", ["first line\nsecond line", 1]),
]


def test_a_tool_input_s_line_breaks_are_drawn_as_line_breaks(signed_in: Page, panel: Panel) -> None:
    agent = panel.agent("tool inputs")
    parts = [{"type": "dynamic-tool", "toolName": name, "toolCallId": f"in{i}", "state": "output-available",
              "input": value, "output": "ok"} for i, (name, value) in enumerate(INPUTS)]  # fmt: skip
    mid = panel.put(agent, "assistant", parts)
    open_agent(signed_in, agent)

    def opened(i: int) -> Any:
        fold = signed_in.locator(f'details[data-message="{mid}"][data-part="{i}"]')
        fold.locator("summary").click()
        return fold.locator('[data-field="input"]')

    def drawn(pre: Any, text: str) -> None:
        expect(pre).to_have_text(text)
        assert pre.text_content() == text  # exactly: line breaks, not spaces (to_have_text folds them)

    drawn(opened(0).locator("dd pre").first, "cd src\nmake test")
    drawn(opened(1).locator("dd pre").first, '[\n  "bash",\n  "-lc",\n  "cd src\nmake test"\n]')
    edits = opened(2).locator("dd pre").nth(1)
    quoted = HOSTILE.replace('"', '\\"')
    drawn(edits, '[\n  {\n    "old_string": "say \\"hi\\"\n' + quoted + '",\n    "new_string": "b"\n  }\n]')
    expect(edits.locator("img")).to_have_count(0)  # drawn as text, never HTML
    listed = opened(3)
    drawn(listed.locator("pre"), '[\n  "first line\nsecond line",\n  1\n]')
    # Copy gives the input's JSON, its escapes kept.
    listed.get_by_role("button", name="Copy").click()
    copied = signed_in.evaluate("() => navigator.clipboard.readText()")
    assert json.loads(copied) == INPUTS[3][1] and "\\n" in copied
    assert signed_in.evaluate("() => window.pwned") is None
