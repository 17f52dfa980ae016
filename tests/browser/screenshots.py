"""Make the panel's screenshots in docs/: ``.venv/bin/python tests/browser/screenshots.py``.

Every picture is of a real imported session. It runs ``foldline serve`` on a fresh store as a new
user's first run does (a home with no Claude Code or Codex sessions, so it imports the sample
sessions shipped in ``foldline/samples``), signs in with the link it prints and photographs with
headless Chromium: the agents list, the session with a subagent (its fold opened), a cut thought
(both ends and the mark), a cut output read whole, the search box and a hit in the cut middle of
an output, the largest session's last turn at 1400×900, its densest screen in the outline, and
a Read of a TypeScript file in colours.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
from playwright.sync_api import BrowserContext, Page, sync_playwright

sys.path.insert(0, str(Path(__file__).parents[1]))
sys.path.insert(0, str(Path(__file__).parent))

from conftest import Searches, launch, settle
from density import DENSEST
from servers import free_port

DOCS = Path(__file__).resolve().parents[2] / "docs"
# A word the largest sample holds mostly in the cut middle of an 88 KB Read output (a design note).
QUERY = "matchesSessionPattern"


def serve_first_run(folder: Path) -> tuple[subprocess.Popen[str], str, str]:
    """``foldline serve`` on a fresh store, in a home with no sessions: its link and API token."""
    home = folder / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("CODEX_HOME", "FOLDLINE_DB")}
    env["HOME"] = str(home)
    port = free_port()
    command = [sys.executable, "-m", "foldline.cli", "serve", "--db", str(folder / "foldline.db"), "--port", str(port)]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=folder)
    assert server.stdout is not None
    link = ""
    for line in server.stdout:
        print(line, end="")
        if line.split()[:1] == ["panel"]:
            link = line.split()[1]
            break
    if not link:
        raise SystemExit("foldline serve printed no sign-in link")
    threading.Thread(target=server.stdout.read, daemon=True).start()  # drain the access log
    base = link.split("/signin")[0]
    deadline = time.monotonic() + 30
    while True:
        try:
            httpx.get(base + "/api/openapi.json").raise_for_status()
            break
        except httpx.HTTPError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)
    return server, link, link.split("#token=")[1]


def pick(api: httpx.Client) -> tuple[str, str]:
    """The sample with a subagent, and the one with the most messages (the largest session)."""
    me = api.get("/api/me").json()
    agents = [a for w in me["workspaces"] for a in api.get(f"/api/agents?workspace_id={w['id']}").json()["agents"]]
    with_subagent = next(a["id"] for a in agents if api.get(f"/api/agents/{a['id']}").json()["subagents"])
    sizes = {a["id"]: len(api.get(f"/api/agents/{a['id']}/messages?parts=cut").json()["messages"]) for a in agents}
    return with_subagent, max(sizes, key=lambda a: sizes[a])


def every_page(page: Page) -> None:
    if page.locator(".older").is_visible():
        page.click("text=Jump to the start")
        page.locator(".older").wait_for(state="hidden")
    settle(page)


def shoot(context: BrowserContext, link: str, subagent: str, largest: str) -> None:
    page = context.new_page()
    page.set_viewport_size({"width": 1100, "height": 760})
    page.goto(link)  # the sign-in page posts the token and goes on to the agents
    page.wait_for_selector("body[data-ready]")
    page.screenshot(path=str(DOCS / "panel-agents.png"))
    base = link.split("/signin")[0]

    page.goto(f"{base}/agents/{subagent}")
    page.wait_for_selector(".live[data-state=live]")
    fold = page.locator("details.subagent").first
    fold.locator("summary").click()
    fold.locator("article").first.wait_for()
    call = page.locator('details.tool[data-tool="Task"]').first
    call.evaluate("d => { d.scrollIntoView(); window.scrollBy(0, -260); }")
    settle(page)
    page.screenshot(path=str(DOCS / "panel-transcript.png"))

    page.goto(f"{base}/agents/{largest}")
    page.wait_for_selector(".live[data-state=live]")
    every_page(page)
    cut = page.locator("details.reasoning:has(.size.cut)").first
    cut.evaluate("d => { d.open = true; }")  # opened without a read: both ends and the mark
    cut.locator(".cut-mark").evaluate("m => { m.scrollIntoView({block: 'center'}); }")
    settle(page)
    page.screenshot(path=str(DOCS / "panel-fold-cut.png"))
    cut.evaluate("d => { d.open = false; }")
    found = page.locator('details.tool[data-tool="Bash"]:has(.size.cut)').first
    where = found.evaluate("d => [d.dataset.message, d.dataset.part]")
    output = page.locator(f'details.tool[data-message="{where[0]}"][data-part="{where[1]}"]')  # cut, then whole
    output.locator("summary").click()
    output.locator(".cut-mark").wait_for(state="detached")
    output.evaluate("d => { d.scrollIntoView(); window.scrollBy(0, -110); }")  # below the sticky find bar
    settle(page)
    page.screenshot(path=str(DOCS / "panel-fold-open.png"))

    page.goto(f"{base}/")
    page.wait_for_selector("body[data-ready]")
    searches = Searches(page)
    page.keyboard.press("Control+k")
    page.keyboard.type(QUERY)
    page.locator(".search-dialog [role=option]").first.wait_for()
    searches.answered(QUERY)
    page.screenshot(path=str(DOCS / "panel-search.png"))
    page.keyboard.press("Enter")
    page.locator("main mark.hit.current").wait_for()
    settle(page)
    page.screenshot(path=str(DOCS / "panel-search-hit.png"))
    page.close()
    dense(context, base, largest)
    code(context, base, largest)


def dense(context: BrowserContext, base: str, agent: str) -> None:
    """The largest real session in a 1400×900 window, at its last turn: one line per tool call."""
    page = context.new_page()
    page.set_viewport_size({"width": 1400, "height": 900})
    page.goto(f"{base}/agents/{agent}")
    page.wait_for_selector(".live[data-state=live]")
    page.locator("article.role-user:not(.cc)").last.evaluate("a => { a.scrollIntoView(); window.scrollBy(0, -90); }")
    settle(page)
    page.screenshot(path=str(DOCS / "panel-dense.png"))
    every_page(page)
    page.click("button.outline-toggle")  # the outline: every message one line
    settle(page)
    page.evaluate(DENSEST)
    settle(page)
    page.screenshot(path=str(DOCS / "panel-outline.png"))
    page.click("button.outline-toggle")  # the choice is kept in the browser: leave it off
    page.close()


def code(context: BrowserContext, base: str, agent: str) -> None:
    """A Read of a TypeScript file in the largest session, open: its code in colours."""
    page = context.new_page()
    page.set_viewport_size({"width": 1100, "height": 760})
    page.goto(f"{base}/agents/{agent}")
    page.wait_for_selector(".live[data-state=live]")
    every_page(page)
    ts = page.locator(".tool-input", has_text=re.compile(r"\.ts$"))
    read = page.locator('details.tool[data-tool="Read"]').filter(has=ts).first
    read.locator("summary").click()
    read.locator("pre.out[data-coloured]").wait_for()
    read.evaluate("d => { d.scrollIntoView(); window.scrollBy(0, -110); }")  # below the sticky find bar
    settle(page)
    page.screenshot(path=str(DOCS / "panel-code.png"))
    page.close()


def main() -> None:
    folder = Path(tempfile.mkdtemp())
    server, link, token = serve_first_run(folder)
    try:
        base = link.split("/signin")[0]
        with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}) as api:
            subagent, largest = pick(api)
        with sync_playwright() as p:
            browser = launch(p)
            shoot(browser.new_context(), link, subagent, largest)  # one context: the sign-in cookie
            browser.close()
    finally:
        server.terminate()
        server.wait(10)


if __name__ == "__main__":
    main()
