"""The HTML export opened in Chromium offline, and the redaction mark in the panel (issue 21)."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, Page, Request, expect

from .conftest import Panel, settle
from .test_panel import open_agent

pytestmark = pytest.mark.browser

SECRET = "ghp_" + "Zq8" * 12  # a GitHub token's shape, made here (36 characters after the prefix)
HOSTILE = "<img src=x onerror=\"window.__pwned='export'\"><script>window.__pwned='script'</script>"
BIG = "".join(f"row {n:06d} of a long output\n" for n in range(60_000))  # 1.6 MB: cut, read in slices


def exported(panel: Panel, agent: str, format: str) -> str:
    with httpx.Client(base_url=panel.url, headers={"Authorization": f"Bearer {panel.token}"}) as http:
        got = http.get(f"/api/agents/{agent}/export", params={"format": format})
    assert got.status_code == 200
    return got.text


def bash(call: str, output: str, command: str = "make test") -> dict[str, object]:
    return {"type": "tool-bash", "toolCallId": call, "state": "output-available",
            "input": {"command": command}, "output": output}  # fmt: skip


def test_the_html_export_opens_offline_with_its_messages_and_folds(
    browser: Browser, panel: Panel, tmp_path: Path
) -> None:
    agent = panel.agent("html export")
    panel.put(agent, "user", [{"type": "text", "text": "Please build it. " + HOSTILE}])
    panel.put(agent, "assistant", [
        {"type": "reasoning", "text": "First I think about the build."},
        bash("call_build", "compiled 42 files\n" + HOSTILE),
        {"type": "tool-Task", "toolCallId": "call_sub", "state": "output-available",
         "input": {"description": "look around"}, "output": "the subagent is done"},
        {"type": "text", "text": "Built. The token was " + SECRET},
    ])  # fmt: skip
    panel.client.put_message(
        agent, {"id": "7d0f7c5e-0000-4000-8000-000000000001", "role": "assistant",
                "parts": [{"type": "text", "text": "a subagent's answer"}]}, call="call_sub",
    )  # fmt: skip
    path = tmp_path / "export.html"
    path.write_text(exported(panel, agent, "html"), encoding="utf-8")

    context = browser.new_context(offline=True, java_script_enabled=True)
    requests: list[Request] = []
    try:
        page = context.new_page()
        page.on("request", lambda r: requests.append(r))
        page.goto(path.as_uri())
        page.wait_for_load_state("load")
        assert [r.url for r in requests] == [path.as_uri()]  # nothing else fetched: no style, script, image
        body = page.locator("main")
        expect(body).to_contain_text("Please build it.")
        expect(body.locator(".msg.role-user")).to_have_count(1)
        assert page.evaluate("window.__pwned") is None
        assert page.locator("main img, main script").count() == 0
        # Folds open without script: the thought, the tool call, and the subagent inside its call.
        tool = page.locator("details.fold.tool").first
        expect(tool.locator("pre.out").first).not_to_be_visible()
        tool.locator("summary").click()
        expect(tool).to_have_attribute("open", "")
        expect(tool.locator("pre.out").nth(1)).to_contain_text("compiled 42 files")
        expect(tool.locator("pre.out").nth(1)).to_contain_text("<img src=x")  # as text
        thought = page.locator("details.fold.reasoning")
        thought.locator("summary").click()
        expect(thought.locator(".thought-text")).to_have_text("First I think about the build.")
        sub = page.locator("details.fold.subagent")
        expect(sub.locator("summary")).to_contain_text("look around")
        sub.locator("summary").click()
        expect(sub).to_contain_text("a subagent's answer")
        mark = page.locator(".redacted")
        expect(mark).to_have_text("[REDACTED:github-token]")
        assert "github-token" in (mark.get_attribute("title") or "")
        assert SECRET not in page.content()
        # The panel's look: its stylesheet is in the file.
        assert page.evaluate("getComputedStyle(document.body).fontFamily").startswith("system-ui")
        requests_after = [r.url for r in requests]
        assert requests_after == [path.as_uri()]
    finally:
        context.close()


def test_the_panel_marks_where_a_secret_was_removed(signed_in: Page, panel: Panel) -> None:
    agent = panel.agent("redaction marks")
    panel.put(agent, "user", [{"type": "text", "text": f"my token is {SECRET}, keep it safe"}])
    big = BIG[:3000] + f"token={SECRET}\n" + BIG[3000:]  # in the cut middle, just past the head
    panel.put(agent, "assistant", [
        bash("call_env", f"GITHUB_TOKEN {SECRET}\n<b>not bold</b>"),
        bash("call_big", big, command="cat log"),
    ])  # fmt: skip
    open_agent(signed_in, agent)
    prompt = signed_in.locator(".msg.role-user").first
    mark = prompt.locator("span.redacted")
    expect(mark).to_have_text("[REDACTED:github-token]")
    assert "github-token" in (mark.get_attribute("title") or "")
    expect(prompt).to_contain_text("my token is [REDACTED:github-token], keep it safe")  # the text around it kept

    fold = signed_in.locator("details.fold.tool").first
    fold.locator("summary").click()
    expect(fold.locator("span.redacted")).to_have_count(1)  # in an opened fold
    expect(fold).to_contain_text("<b>not bold</b>")
    assert fold.locator("b").count() == 0  # text, never HTML

    cut = signed_in.locator("details.fold.tool").nth(1)
    cut.locator("summary").click()
    expect(cut.locator("span.redacted")).to_have_count(0)  # the marker is in the middle, not shown yet
    cut.locator("button.more").first.click()
    expect(cut.locator("span.redacted")).to_have_count(1)  # in the slice the panel read
    settle(signed_in)
    assert SECRET not in signed_in.content()
