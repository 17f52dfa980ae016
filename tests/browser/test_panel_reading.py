"""What a reader sees in real sessions: subagent names, inputs, Markdown, tool states, sign-in, workspaces."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from .conftest import Panel
from .test_panel import open_agent

pytestmark = pytest.mark.browser

TURN_ENDED = "the turn ended before this tool returned; its outcome is unknown"


def tool(name: str, state: str, **fields: Any) -> dict[str, Any]:
    return {"type": f"tool-{name}", "toolCallId": f"call_{uuid.uuid4().hex[:8]}", "state": state, **fields}


def test_a_subagent_is_named_by_its_call_and_shown_under_the_closed_call(signed_in: Page, panel: Panel) -> None:
    agent = panel.agent("research")
    prompt = 'Find out how plan mode works.\nQuote the docs: "plan first".\n\tThen report.'
    described = tool(
        "Agent",
        "output-available",
        input={"description": "Research Claude Code plan mode", "subagent_type": "Explore", "prompt": prompt},
        output="x" * 3000,
    )
    typed = tool("Task", "output-available", input={"subagent_type": "code-reviewer", "prompt": "review"}, output="ok")
    mid = panel.put(agent, "assistant", [{"type": "text", "text": "Asking two workers."}, described, typed])
    for part, text in [(described, "plan mode is read-only"), (typed, "looks fine")]:
        panel.client.put_message(
            agent,
            {"id": str(uuid.uuid4()), "role": "assistant", "parts": [{"type": "text", "text": text}]},
            call=part["toolCallId"],
        )
    reads: list[str] = []
    signed_in.on("request", lambda r: reads.append(r.url) if "/subagents/" in r.url else None)
    open_agent(signed_in, agent)

    call = signed_in.locator(f'details.tool[data-message="{mid}"][data-part="1"]')
    sub = signed_in.locator(f'details.subagent[data-call="{described["toolCallId"]}"]')
    expect(sub.locator("summary")).to_be_visible()  # without opening the call's fold
    expect(sub.locator("summary")).to_have_text("Subagent·Research Claude Code plan mode")
    below = sub.evaluate("s => s.previousElementSibling.dataset.part")
    assert below == "1" and not call.evaluate("d => d.open")
    other = signed_in.locator(f'details.subagent[data-call="{typed["toolCallId"]}"]')
    expect(other.locator("summary")).to_have_text("Subagent·code-reviewer")
    assert reads == []  # still read only when opened

    sub.locator("summary").click()
    expect(sub.locator(".part.text")).to_have_text("plan mode is read-only")
    assert len([u for u in reads if "/messages" in u]) == 1

    # The call's input: each string drawn with its real line breaks, not as one escaped JSON string.
    call.locator("summary").click()
    value = call.locator("dl.kv dt:text-is('prompt') + dd pre")
    expect(value).to_have_text(prompt)
    expect(call.locator("dl.kv dt")).to_have_text(["description", "subagent_type", "prompt"])
    assert "\\n" not in call.locator("dl.kv").inner_text()
    assert value.evaluate("p => p.getBoundingClientRect().height") > 2 * call.locator(
        "dl.kv dt:text-is('description') + dd pre"
    ).evaluate("p => p.getBoundingClientRect().height")


def test_markdown_in_thoughts_titles_breaks_and_control_characters(signed_in: Page, panel: Panel) -> None:
    agent = panel.agent("**Context:** the `importer` _fails_")
    summary_text = "**Drafting multi-step plan**\n\nI will *first* read the `importer`."
    mid = panel.put(
        agent,
        "assistant",
        [
            {"type": "reasoning", "text": summary_text},
            {"type": "text", "text": "first line\\\nsecond line\x00 with a bell\x07 and\ttab"},
        ],
    )
    assert "\x00" in panel.client.messages(agent)["messages"][0]["parts"][1]["text"]  # stored as sent
    signed_in.goto("/")
    title = signed_in.locator(f'li[data-agent="{agent}"] .agent-title')
    expect(title).to_have_text("Context: the importer fails")

    open_agent(signed_in, agent)
    fold = signed_in.locator(f'details[data-message="{mid}"][data-part="0"]')
    expect(fold.locator("summary .preview")).to_have_text("Drafting multi-step plan I will first read the importer.")
    fold.locator("summary").click()
    body = fold.locator(".thought-text")
    expect(body.locator("strong")).to_have_text("Drafting multi-step plan")
    expect(body.locator("em")).to_have_text("first")
    expect(body.locator("code")).to_have_text("importer")
    assert "*" not in body.inner_text()

    text = signed_in.locator(f'[data-message="{mid}"][data-part="1"]')
    expect(text.locator("br")).to_have_count(1)
    assert text.inner_text() == "first line\nsecond line with a bell and tab"  # no "\\", no boxes
    assert text.evaluate("n => n.textContent") == "first linesecond line with a bell and\ttab"  # the tab kept


def test_tool_states_say_what_is_known(signed_in: Page, panel: Panel) -> None:
    agent = panel.agent("states")
    unknown = {"foldline": {"outcome": "unknown"}}
    ended = tool("Bash", "output-error", input={"command": "sleep 100"}, errorText=TURN_ENDED,
                 resultProviderMetadata=unknown)
    failed = tool("Bash", "output-error", input={"command": "false"}, errorText=TURN_ENDED)  # the words alone: an error
    stale = tool("Read", "input-available", input={"file_path": "a.py"})
    codex = tool(
        "exec_command",
        "output-available",
        input={"cmd": "pytest"},
        output="2 failed",
        toolMetadata={"codex": {"exit_code": 2}},
    )
    fine = tool(
        "exec_command", "output-available", input={"cmd": "ls"}, output="", toolMetadata={"codex": {"exit_code": 0}}
    )
    stopped = tool(
        "Bash",
        "output-available",
        input={"command": "make"},
        output="",
        toolMetadata={"claudeCode": {"interrupted": True, "exitCode": 130}},
    )
    first = panel.put(agent, "assistant", [ended, failed, stale, codex, fine, stopped])
    running = tool("Read", "input-available", input={"file_path": "b.py"})
    last = panel.put(agent, "assistant", [running])
    open_agent(signed_in, agent)

    def badges(mid: str, index: int) -> list[str]:
        return signed_in.locator(f'details[data-message="{mid}"][data-part="{index}"] summary .badge').all_inner_texts()

    assert badges(first, 0) == ["unknown"]
    assert badges(first, 1) == ["error"]
    assert badges(first, 2) == ["no result"]
    assert badges(first, 3) == ["exit 2", "done"]  # the facts, then the state column
    assert badges(first, 4) == ["done"]
    assert badges(first, 5) == ["exit 130", "interrupted", "done"]
    assert badges(last, 0) == ["running"]
    red = signed_in.locator(f'details[data-message="{first}"][data-part="1"] .badge')
    grey = signed_in.locator(f'details[data-message="{first}"][data-part="0"] .badge')
    assert grey.evaluate("b => getComputedStyle(b).color") != red.evaluate("b => getComputedStyle(b).color")

    panel.put(agent, "user", [{"type": "text", "text": "what happened?"}])  # the running one is no longer last
    expect(signed_in.locator(f'details[data-message="{last}"][data-part="0"] summary .badge')).to_have_text("no result")


def test_a_bad_token_link_leaves_the_address_and_says_which_command_makes_one(page: Page) -> None:
    page.goto("/agents/abc?token=fl_bad")
    expect(page.locator(".error")).to_have_text("That token is not valid.")
    assert "fl_bad" not in page.url and "token=" not in page.url
    expect(page.locator(".hint")).to_contain_text("foldline account token ACCOUNT_ID")
    expect(page.locator(".hint")).to_contain_text("foldline account list")
    assert "foldline token " not in page.locator(".hint").inner_text()


def test_workspaces_of_the_same_name_are_told_apart(page: Page, panel: Panel) -> None:
    bob = panel.transcripts.create_account("bob")
    one = panel.transcripts.create_workspace("lab", [bob["id"]])
    two = panel.transcripts.create_workspace("lab", [bob["id"]])
    solo = panel.transcripts.create_workspace("home", [bob["id"]])
    page.goto(f"/?token={bob['token']}")
    page.wait_for_selector("body[data-ready]")
    for workspace in (one, two):
        heading = page.locator(f'section[data-workspace="{workspace["id"]}"] h2')
        expect(heading).to_have_text(f"lab · {workspace['id'][:8]}")
    expect(page.locator(f'section[data-workspace="{solo["id"]}"] h2')).to_have_text("home")
