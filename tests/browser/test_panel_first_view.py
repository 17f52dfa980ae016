"""How a transcript's first view loads: every module and its first reads start at once, scripts
come from memory, and the closed folds' bodies are built right after the view is on screen."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page
from servers import InProcess
from starlette.responses import PlainTextResponse
from starlette.types import Receive, Scope, Send

from foldline.panel import FIRST_PAGE, STATIC, Assets

from .conftest import Panel
from .test_panel import open_agent

IMPORT = re.compile(r'^import\s[^;]*?from\s+"\./([^"]+)";', re.M)


def imported(module: str, seen: set[str] | None = None) -> set[str]:
    """The modules ``module`` imports, at any depth (paths under static/)."""
    seen = set() if seen is None else seen
    folder = Path(module).parent
    for name in IMPORT.findall((STATIC / module).read_text()):
        found = (folder / name).as_posix()
        if found not in seen:
            seen.add(found)
            imported(found, seen)
    return seen


def preloads(html: str) -> tuple[set[str], list[str]]:
    modules = set(re.findall(r'<link rel="modulepreload" href="/static/([^"]+)">', html))
    reads = re.findall(r'<link rel="preload" as="fetch" crossorigin="anonymous" href="([^"]+)">', html)
    return modules, [r.replace("&amp;", "&") for r in reads]


def test_the_shell_preloads_every_module_and_a_transcripts_first_reads(panel: Panel) -> None:
    agent = panel.agent("preloaded")
    with httpx.Client(base_url=panel.url, cookies={"foldline_token": panel.token}) as http:
        modules, reads = preloads(http.get(f"/agents/{agent}").text)
        assert modules == imported("app.js") | {"app.js"} and "vendor/markdown-it/markdown-it.esm.min.js" in modules
        base = f"/api/agents/{agent}"
        assert reads == [f"{base}/messages?parts=cut&limit={FIRST_PAGE}", base]
        # the agents list has nothing to read ahead; an address the panel would not ask as written, none
        for path in ["/", f"/agents/{agent.upper()}", "/agents/not-an-id"]:
            modules, reads = preloads(http.get(path).text)
            assert reads == [] and "app.js" in modules


@pytest.mark.browser
def test_a_transcript_opens_on_one_read_of_each_and_its_closed_folds_are_whole(signed_in: Page, panel: Panel) -> None:
    agent = panel.agent("first view")
    thought = "Checking **the seq** before the fix. " * 20
    call = {
        "type": "tool-Bash",
        "toolCallId": "call_first_view",
        "state": "output-available",
        "input": {"command": "pytest -q"},
        "output": "1 failed, 2 passed",
    }
    panel.put(agent, "user", [{"type": "text", "text": "Fix it."}])
    panel.put(agent, "assistant", [{"type": "reasoning", "text": thought}, call])
    asked: list[str] = []
    signed_in.on("request", lambda r: asked.append(r.url.removeprefix(panel.url)))
    open_agent(signed_in, agent)
    signed_in.wait_for_selector("body[data-ready]")
    base = f"/api/agents/{agent}"
    # the shell's preloads were used: each first read went out once
    assert asked.count(f"{base}/messages?parts=cut&limit={FIRST_PAGE}") == 1 and asked.count(base) == 1
    # closed, and whole: find-in-page finds what they hold
    body = "details.{} > .fold-body"
    assert not signed_in.locator("details.reasoning").evaluate("d => d.open")
    assert "Checking the seq" in signed_in.locator(body.format("reasoning")).text_content()
    assert "1 failed, 2 passed" in signed_in.locator(body.format("tool")).text_content()


async def fallback(scope: Scope, receive: Receive, send: Send) -> None:
    await PlainTextResponse("the app", status_code=404)(scope, receive, send)


def test_scripts_come_from_memory_compressed_once_and_a_changed_file_is_seen(tmp_path: Path) -> None:
    script = tmp_path / "app.js"
    script.write_text("export const answer = 42;\n" * 100)
    (tmp_path / "notes.txt").write_text("not an asset")
    transport = InProcess(Assets(fallback, directory=tmp_path))
    with httpx.Client(transport=transport, base_url="http://panel") as http:
        first = http.get("/static/app.js", headers={"Accept-Encoding": "gzip"})
        assert first.status_code == 200 and first.headers["content-encoding"] == "gzip"
        assert first.text == script.read_text() and int(first.headers["content-length"]) < 200
        assert first.headers["content-type"] == "text/javascript; charset=utf-8"
        assert first.headers["cache-control"] == "no-cache" and first.headers["vary"] == "Accept-Encoding"
        plain = http.get("/static/app.js", headers={"Accept-Encoding": "identity"})
        assert "content-encoding" not in plain.headers and plain.content == script.read_bytes()
        same = http.get("/static/app.js", headers={"If-None-Match": first.headers["etag"]})
        assert same.status_code == 304 and same.content == b""
        head = http.head("/static/app.js")
        assert head.status_code == 200 and head.content == b""
        script.write_text("export const answer = 43;\n")  # edited while serving
        changed = http.get("/static/app.js", headers={"If-None-Match": first.headers["etag"]})
        assert changed.status_code == 200 and changed.text == "export const answer = 43;\n"
        for other in ["/static/notes.txt", "/static/missing.js", "/static/../app.js", "/app.js"]:
            assert http.get(other).text == "the app"  # anything else goes on to the app
        assert http.post("/static/app.js").text == "the app"
    transport.stop()


def test_the_served_app_answers_its_own_assets(panel: Panel) -> None:
    with httpx.Client(base_url=panel.url) as http:
        for name in imported("app.js") | {"app.js", "panel.css"}:
            r = http.get(f"/static/{name}")
            assert r.status_code == 200 and r.content == (STATIC / name).read_bytes(), name
        assert http.get(f"/static/{uuid.uuid4()}.js").status_code == 404
