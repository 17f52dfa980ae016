"""Make the panel's screenshots in docs/: ``.venv/bin/python tests/browser/screenshots.py``.

It writes a small, made-up session into a fresh SQLite store, serves it and photographs the
agents list, a transcript, a cut fold (both ends and the mark), a fold read whole, the search box
and a search hit shown in the cut middle of a 2 MB output with headless Chromium; then imports the
largest real Claude Code session kept in tests/data and photographs its last turn at 1400×900.
"""

from __future__ import annotations

import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any

from playwright.sync_api import sync_playwright

sys.path.insert(0, str(Path(__file__).parents[1]))
sys.path.insert(0, str(Path(__file__).parent))

from conftest import LARGEST_SESSION, Panel, PanelServer, launch

from foldline import Client
from foldline.importers.importer import import_paths
from foldline.settings import Settings
from foldline.store import open_store
from foldline.transcripts import Transcripts

DOCS = Path(__file__).resolve().parents[2] / "docs"

TEST_OUTPUT = (
    "".join(
        f"tests/test_{name}.py::test_case_{i} \x1b[32mPASSED\x1b[0m{' ' * 10}[{i:3d}%]\n"
        for i, name in enumerate(["store", "cut", "access", "events", "client"] * 60)
    )
    + "\n\x1b[32m===== 300 passed in 41.2s =====\x1b[0m\n"
)

BUILD_LOG = "".join(f"[{i:06d}] compiling src/module_{i % 240:03d}.rs ... ok\n" for i in range(44_000))
BUILD_LOG = (
    BUILD_LOG[: len(BUILD_LOG) // 2]
    + "[022000] error: connection reset while fetching crate `tokio` (ECONNRESET), retrying in 2s\n"
    + BUILD_LOG[len(BUILD_LOG) // 2 :]
)

THOUGHT = (
    "The failing test is in the events stream. The follower polls every poll_seconds, so a write in "
    "another process should arrive within one interval. Let me check where the seq is compared.\n\n"
) * 30

ANSWER = """Fixed. The stream compared `seq` with `>=`, so the last message was sent **twice** after a
reconnect. Now:

- the follower resumes strictly after `Last-Event-ID`;
- a test writes through one process and follows through another.

```python
rows = store.changes(conv, since)  # seq > since
```

All 300 tests pass; see the run above."""


def write_session(panel: Panel) -> str:
    for title in ["import the codex rollouts", "tune the page query", "write the docs"]:
        agent = panel.agent(title)
        panel.put(agent, "user", [{"type": "text", "text": title}])
    agent = panel.agent("fix the flaky events test")
    panel.put(agent, "user", [{"type": "text", "text": "The events test fails about one run in ten. Can you fix it?"}])

    def tool(name: str, call: str, command: dict[str, object], output: str) -> dict[str, object]:
        return {
            "type": f"tool-{name}",
            "toolCallId": call,
            "state": "output-available",
            "input": command,
            "output": output,
        }

    panel.put(
        agent,
        "assistant",
        [
            {"type": "step-start"},
            {"type": "reasoning", "text": THOUGHT},
            {"type": "text", "text": "Let me run the suite first to see the failure."},
            {
                **tool(
                    "Bash",
                    "toolu_00",
                    {"command": "pytest -q tests/test_events.py", "description": "Run the events test"},
                    "F.\nFAILED tests/test_events.py::test_resume - assert 2 == 1\n1 failed, 1 passed",
                ),
                "toolMetadata": {"claudeCode": {"exitCode": 1}},
            },
            tool("Bash", "toolu_04", {"command": "cargo build --release", "description": "Build"}, BUILD_LOG),
            tool("Bash", "toolu_01", {"command": "pytest -q tests/", "description": "Run the tests"}, TEST_OUTPUT),
            tool(
                "Read",
                "toolu_02",
                {"file_path": "src/foldline/events.py"},
                "def stream(changes, wait, since):\n    ...",
            ),
            {
                "type": "tool-Task",
                "toolCallId": "toolu_03",
                "state": "output-available",
                "input": {
                    "description": "Find other seq comparisons",
                    "subagent_type": "Explore",
                    "prompt": "Find every place that compares `seq`.\nList each file and line.",
                },
                "output": "Two places compare seq: store/base.py and events.py.",
            },
            {"type": "text", "text": ANSWER},
        ],
    )
    panel.client.put_message(
        agent,
        {"id": str(uuid.uuid4()), "role": "assistant", "parts": [{"type": "text", "text": "Looking for `seq` now."}]},
        call="toolu_03",
    )
    return agent


def main() -> None:
    db = str(Path(tempfile.mkdtemp()) / "foldline.db")
    transcripts = Transcripts(open_store(db), settings=Settings(db=db, poll_seconds=0.2))
    alice = transcripts.create_account("alice")
    workspace = transcripts.create_workspace("team", [alice["id"]])
    with PanelServer(transcripts) as server, Client(server.url, alice["token"]) as client, sync_playwright() as p:
        panel = Panel(server.url, transcripts, alice["token"], workspace["id"], client)
        agent = write_session(panel)
        browser = launch(p)
        page = browser.new_page(base_url=server.url, viewport={"width": 1100, "height": 760})
        page.goto(f"/?token={panel.token}")
        page.locator(f'li[data-agent="{agent}"]').wait_for()
        page.screenshot(path=str(DOCS / "panel-agents.png"))
        page.goto(f"/agents/{agent}")
        page.wait_for_selector(".live[data-state=live]")
        page.evaluate("window.scrollTo(0, 0)")
        page.screenshot(path=str(DOCS / "panel-transcript.png"))
        cut = page.locator("details.reasoning")
        cut.evaluate("d => { d.open = true; }")  # opened without a read: both ends and the mark
        cut.locator(".cut-mark").evaluate("m => { m.scrollIntoView({block: 'center'}); }")
        page.screenshot(path=str(DOCS / "panel-fold-cut.png"))
        cut.evaluate("d => { d.open = false; }")
        fold = page.locator("details[data-tool=Bash]").last
        fold.locator("summary").click()
        fold.locator(".cut-mark").wait_for(state="detached")
        fold.evaluate("d => { d.scrollIntoView(); window.scrollBy(0, -110); }")  # below the sticky find bar
        page.screenshot(path=str(DOCS / "panel-fold-open.png"))
        page.keyboard.press("Control+k")
        page.keyboard.type("ECONNRESET")
        page.locator(".search-dialog [role=option]").first.wait_for()
        page.wait_for_timeout(300)
        page.screenshot(path=str(DOCS / "panel-search.png"))
        page.keyboard.press("Enter")
        page.locator("main mark.hit.current").wait_for()
        page.wait_for_timeout(300)
        page.screenshot(path=str(DOCS / "panel-search-hit.png"))
        dense(browser, panel, alice["id"], workspace["id"])
        browser.close()


def dense(browser: Any, panel: Panel, account: str, workspace: str) -> None:
    """The largest real session in a 1400×900 window, at its last turn: one line per tool call."""
    import_paths(panel.transcripts, [LARGEST_SESSION], account_id=account, workspace_id=workspace)
    agents = panel.transcripts.list_agents(account, workspace)["agents"]
    agent = max(agents, key=lambda a: len(panel.transcripts.messages(account, a["id"])["messages"]))["id"]
    page = browser.new_page(base_url=panel.url, viewport={"width": 1400, "height": 900})
    page.goto(f"/?token={panel.token}")
    page.wait_for_selector("body[data-ready]")
    page.goto(f"/agents/{agent}")
    page.wait_for_selector(".live[data-state=live]")
    page.locator("article.role-user:not(.cc)").last.evaluate("a => { a.scrollIntoView(); window.scrollBy(0, -90); }")
    page.wait_for_timeout(300)
    page.screenshot(path=str(DOCS / "panel-dense.png"))
    page.close()


if __name__ == "__main__":
    main()
