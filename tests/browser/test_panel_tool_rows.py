"""The row says what the call did: each known tool's most telling input (Claude Code's and
Codex's tools), and any other tool's first known input."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page, expect

from .conftest import Panel
from .test_panel import open_agent

pytestmark = pytest.mark.browser

PATCH = "*** Begin Patch\n*** Update File: src/app.ts\n@@\n-a\n+b\n*** Add File: src/new.ts\n+x\n*** End Patch\n"
ROWS: list[tuple[str, Any, str]] = [
    (
        "Grep",
        {"pattern": r"Deliverables \(Phase 4\.1\)", "path": "docs/phases"},
        r"Deliverables \(Phase 4\.1\) · docs/phases",
    ),
    ("Glob", {"path": "src", "pattern": "**/*.ts"}, "**/*.ts · src"),
    ("WebFetch", {"prompt": "summarise", "url": "https://example.org/a"}, "https://example.org/a"),
    ("Task", {"prompt": "look everywhere", "description": "Find the cache", "subagent_type": "x"}, "Find the cache"),
    ("Bash", {"description": "list", "command": "ls -la"}, "ls -la"),
    ("Edit", {"old_string": "a", "new_string": "b", "file_path": "/repo/x.py"}, "/repo/x.py"),
    ("Write", {"content": "hello", "file_path": "/repo/y.py"}, "/repo/y.py"),
    ("exec_command", {"cmd": "cargo test", "workdir": "/repo"}, "cargo test"),
    ("shell", {"command": ["bash", "-lc", "make"], "workdir": "/repo"}, "bash -lc make"),
    ("apply_patch", PATCH, "src/app.ts src/new.ts"),
    ("web_search", {"query": "foldline panel"}, "foldline panel"),
]


def test_each_known_tools_row_shows_its_most_telling_input(signed_in: Page, panel: Panel) -> None:
    agent = panel.agent("tool rows")
    parts = [
        {
            "type": "dynamic-tool",
            "toolName": name,
            "toolCallId": f"c{i}",
            "state": "output-available",
            "input": value,
            "output": "ok",
        }
        for i, (name, value, _) in enumerate(ROWS)
    ]
    mid = panel.put(agent, "assistant", parts)
    open_agent(signed_in, agent)
    for i, (_, _, shown) in enumerate(ROWS):
        row = signed_in.locator(f'details[data-message="{mid}"][data-part="{i}"] .tool-input')
        expect(row).to_have_text(shown)
