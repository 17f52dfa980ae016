"""How a transcript's first view loads: one response, the shell, holding the stylesheet, one
script (the modules joined at startup) and the agent and its newest page; scripts from memory
for the agents list; the closed folds' bodies built right after the view is on screen."""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page
from servers import InProcess
from starlette.responses import PlainTextResponse
from starlette.types import Receive, Scope, Send

from foldline.panel.assets import STATIC, Assets
from foldline.panel.shell import FIRST_PAGE, source_hash

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


FIRST_VIEW = re.compile(r'<script type="application/json" id="first-view">(.*?)</script>', re.S)


def held(html: str) -> dict[str, object] | None:
    found = FIRST_VIEW.search(html)
    return json.loads(found.group(1)) if found else None


def test_the_shell_loads_one_script_and_holds_a_transcripts_first_view(panel: Panel) -> None:
    agent = panel.agent("held </script><!-- <b>")
    panel.put(agent, "user", [{"type": "text", "text": "</script><script>alert(1)</script> <!-- x"}])
    with httpx.Client(base_url=panel.url, cookies={"foldline_token": panel.token}) as http:
        r = http.get(f"/agents/{agent}")
        page, csp = r.text, r.headers["content-security-policy"]
        # the script and the stylesheet are in it, each allowed by its hash, nothing else inline
        script = re.search(r'<script type="module">(.*?)</script>', page, re.S)
        style = re.search(r"<style>(.*?)</style>", page, re.S)
        head = page.split("</head>")[0]  # nothing loaded by address (the script may name one it loads later)
        assert script and style and 'src="/static/' not in head and 'href="/static/' not in head
        assert script.group(1).count("// module: ") == len(imported("app.js")) + 1
        assert f"script-src 'self' {source_hash(script.group(1))};" in csp and "unsafe-inline" not in csp
        assert f"style-src 'self' {source_hash(style.group(1))};" in csp
        data = held(page)
        assert data is not None and data["agent"] == http.get(f"/api/agents/{agent}").json()
        assert data["page"] == http.get(f"/api/agents/{agent}/messages?parts=cut&limit={FIRST_PAGE}").json()
        inside = FIRST_VIEW.search(page).group(1)  # type: ignore[union-attr]
        assert "<" not in inside and "\\u003c/script>" in inside  # untrusted text cannot end the block
        # the agents list, an address the panel would not ask as written, an agent not found: none
        for path in ["/", f"/agents/{agent.upper()}", "/agents/not-an-id", f"/agents/{uuid.uuid4()}"]:
            assert held(http.get(path).text) is None, path
        assert '<script type="module" src="/static/bundle.js"></script>' in http.get("/").text  # by address
    with httpx.Client(base_url=panel.url) as http:  # signed out: the sign-in page, nothing of the agent
        r = http.get(f"/agents/{agent}", follow_redirects=False)
        assert r.status_code == 303 and "first-view" not in r.text


@pytest.mark.browser
def test_a_transcript_opens_without_reading_the_api_and_its_closed_folds_are_whole(
    signed_in: Page, panel: Panel
) -> None:
    agent = panel.agent("first view")
    thought = "Checking **the seq** before the fix. " * 20
    call = {
        "type": "tool-Bash",
        "toolCallId": "call_first_view",
        "state": "output-available",
        "input": {"command": "pytest -q"},
        "output": "1 failed, 2 passed",
    }
    panel.put(agent, "user", [{"type": "text", "text": "Fix it. </script><b>not bold</b>"}])
    panel.put(agent, "assistant", [{"type": "reasoning", "text": thought}, call])
    asked: list[str] = []
    signed_in.on("request", lambda r: asked.append(r.url.removeprefix(panel.url)))
    open_agent(signed_in, agent)
    signed_in.wait_for_selector("body[data-ready]")
    base = f"/api/agents/{agent}"
    # the shell held the agent and its newest page: neither was read from the API
    assert f"{base}/messages?parts=cut&limit={FIRST_PAGE}" not in asked and base not in asked
    assert [a for a in asked if a.startswith("/static/")] == []  # one request: the shell
    assert "Fix it. </script><b>not bold</b>" in signed_in.locator(".msg.role-user").first.text_content()
    # closed, and whole: find-in-page finds what they hold
    body = "details.{} > .fold-body"
    assert not signed_in.locator("details.reasoning").evaluate("d => d.open")
    assert "Checking the seq" in signed_in.locator(body.format("reasoning")).text_content()
    assert "1 failed, 2 passed" in signed_in.locator(body.format("tool")).text_content()
    # a later visit to the same agent reads the API, as any other
    signed_in.click("a.brand")
    signed_in.wait_for_selector(".agent-list")
    signed_in.click(f"li[data-agent='{agent}'] a.agent-title")
    signed_in.wait_for_selector(".live[data-state=live]")
    assert asked.count(f"{base}/messages?parts=cut&limit={FIRST_PAGE}") == 1


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
        joined = http.get("/static/bundle.js").text
        assert all(f"// module: {name}\n" in joined for name in imported("app.js") | {"app.js"})
