"""Claude Code's own markup drawn for what it is: commands as chips, meta folded away, compaction marked;
and the context Codex injects as user messages folded away too."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from .conftest import Panel, import_largest, own_account, sign_in
from .test_panel import jump_to_the_start, open_agent

pytestmark = pytest.mark.browser


def test_the_real_sessions_command_caveat_and_compaction_are_drawn_for_what_they_are(
    page: Page, largest_session: str
) -> None:
    open_agent(page, largest_session)
    jump_to_the_start(page)
    expect(page.locator(".older")).to_be_hidden()
    first, command, output = (page.locator("article.msg").nth(i) for i in range(3))
    # The caveat Claude Code writes before a local command: a closed fold, not a prompt.
    caveat = first.locator("details.fold.meta")
    expect(caveat.locator("summary .kind")).to_have_text("Caveat")
    assert caveat.get_attribute("open") is None
    expect(first).to_have_class("msg role-user cc")
    # "/clear" is a small chip; its empty output says so; neither shows a tag or a User head.
    expect(command.locator(".command-chip")).to_have_text("/clear")
    expect(output.locator(".cc-output")).to_contain_text("(no output)")
    for article in (command, output):
        expect(article.locator(".msg-head")).to_be_hidden()
    main = page.locator("main .messages").inner_text()
    for tag in ("<command-name>", "<command-message>", "<local-command-stdout>", "<local-command-caveat>"):
        assert tag not in main
    # The compaction: the boundary is marked, the long summary folded away under its name.
    summary = page.locator("details.fold.compact")
    expect(summary).to_have_count(1)
    expect(summary.locator("summary .kind")).to_have_text("Compaction summary")
    assert summary.get_attribute("open") is None
    assert summary.locator("summary").bounding_box()["height"] <= 22  # type: ignore[index]
    expect(page.locator("article.compact-boundary")).to_contain_text("Conversation compacted")


def test_system_reminders_fold_away_and_command_output_is_text(signed_in: Page, panel: Panel) -> None:
    agent = panel.agent("reminders")
    prompt = panel.put(
        agent,
        "user",
        [{"type": "text", "text": "Fix the test.<system-reminder>\nThe todo list is empty.\n</system-reminder>"}],
    )
    panel.put(
        agent,
        "user",
        [{"type": "text", "text": "<command-name>/model</command-name>\n<command-args>opus</command-args>"}],
    )
    shown = panel.put(
        agent,
        "user",
        [
            {
                "type": "text",
                "text": "<local-command-stdout>Set model to <b>opus</b>\x1b[1m!\x1b[0m</local-command-stdout>",
            }
        ],
    )
    open_agent(signed_in, agent)
    part = signed_in.locator(f'[data-message="{prompt}"][data-part="0"]')
    expect(part.locator(".md")).to_have_text("Fix the test.")
    reminder = part.locator("details.reminder")
    expect(reminder.locator("summary")).to_contain_text("System reminder")
    assert reminder.get_attribute("open") is None
    reminder.locator("summary").click()
    expect(reminder.locator("pre")).to_have_text("The todo list is empty.")
    expect(signed_in.locator(".command-chip")).to_have_text("/model")
    expect(signed_in.locator(".command-args")).to_have_text("opus")
    out = signed_in.locator(f'[data-message="{shown}"] pre.cc-out')
    expect(out).to_have_text("Set model to <b>opus</b>!")  # drawn as text: the tag is shown, ANSI rendered
    expect(out.locator("b")).to_have_count(0)
    expect(out.locator(".ansi-bold")).to_have_text("!")


CODEX_SAMPLE = next((Path(__file__).resolve().parents[2] / "src" / "foldline" / "samples" / "codex").glob("*.jsonl"))


def test_the_context_codex_injects_is_folded_away_not_drawn_as_a_prompt(
    page: Page, panel: Panel, tmp_path: Path
) -> None:
    account = own_account(panel, "codex context")
    log = tmp_path / CODEX_SAMPLE.name
    log.write_bytes(CODEX_SAMPLE.read_bytes())
    agent = import_largest(panel, account, log)
    sign_in(page, account.token)
    open_agent(page, agent)
    jump_to_the_start(page)
    expect(page.locator(".older")).to_be_hidden()
    # The sample's first line is Codex's <environment_context>: a closed fold, not a person's bubble.
    first = page.locator("article.msg").first
    expect(first).to_have_class("msg role-user cc")
    context = first.locator("details.fold.meta")
    expect(context.locator("summary .kind")).to_have_text("Environment context")
    assert context.get_attribute("open") is None
    expect(first.locator(".md")).to_have_count(0)
    context.locator("summary").click()
    expect(context.locator("pre")).to_contain_text("<sandbox_mode>read-only</sandbox_mode>")  # as text
    # The person's own prompt after it is still a prompt.
    expect(page.locator("article.role-user:not(.cc)").first).to_contain_text("My request for Codex")


def test_an_interruption_is_a_quiet_line_not_a_prompt(signed_in: Page, panel: Panel) -> None:
    agent = panel.agent("interrupted")
    first = panel.put(agent, "user", [{"type": "text", "text": "Rename the module."}])
    panel.put(agent, "assistant", [{"type": "text", "text": "Renaming it now."}])
    stop = panel.put(agent, "user", [{"type": "text", "text": "[Request interrupted by user for tool use]"}])
    panel.put(agent, "user", [{"type": "text", "text": "Not that one."}])
    open_agent(signed_in, agent)
    line = signed_in.locator(f'article[data-id="{stop}"]')
    expect(line).to_have_class("msg role-user cc")  # no bubble, no head, no turn of its own
    expect(line.locator(".cc-interrupt")).to_have_text("[Request interrupted by user for tool use]")
    expect(line.locator(".msg-head")).to_be_hidden()
    # `[` goes from prompt to prompt: past the interruption to the person's first prompt.
    signed_in.keyboard.press("G")
    signed_in.keyboard.press("[")
    expect(signed_in.locator(f'article[data-id="{first}"]')).to_be_focused()
