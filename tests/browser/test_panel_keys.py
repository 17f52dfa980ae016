"""The keyboard: j/k between messages, [/] between prompts, g/G, o/Enter opens a fold, ? lists the keys."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from .conftest import Panel
from .test_panel import count_parts, open_agent

pytestmark = pytest.mark.browser


def current(page: Page) -> str | None:
    found: str | None = page.evaluate("document.activeElement.closest('article.msg')?.dataset.id ?? null")
    return found


def test_j_k_brackets_g_and_o_move_around_a_transcript_and_open_folds(signed_in: Page, panel: Panel) -> None:
    agent = panel.agent("keys")
    ids: list[str] = []
    prompts: list[str] = []
    for turn in range(3):
        prompts.append(panel.put(agent, "user", [{"type": "text", "text": f"prompt {turn}"}]))
        ids.append(prompts[-1])
        for step in range(2):
            ids.append(
                panel.put(
                    agent,
                    "assistant",
                    [
                        {"type": "reasoning", "text": f"thinking {turn}.{step} " + "x" * 6000, "state": "done"},
                        {"type": "text", "text": f"answer {turn}.{step}"},
                    ],
                )
            )
    open_agent(signed_in, agent)
    reads = count_parts(signed_in)
    signed_in.keyboard.press("G")
    assert current(signed_in) == ids[-1]
    signed_in.keyboard.press("k")
    assert current(signed_in) == ids[-2]
    signed_in.keyboard.press("[")
    assert current(signed_in) == prompts[2]
    signed_in.keyboard.press("[")
    assert current(signed_in) == prompts[1]
    signed_in.keyboard.press("]")
    assert current(signed_in) == prompts[2]
    signed_in.keyboard.press("j")
    assert current(signed_in) == ids[-2]
    expect(signed_in.locator(f'article[data-id="{ids[-2]}"]')).to_have_class("msg role-assistant kbd-current")
    # o opens the message's first fold as a person's click would: the cut thought is read whole.
    fold = signed_in.locator(f'details[data-message="{ids[-2]}"][data-part="0"]')
    assert fold.get_attribute("open") is None
    signed_in.keyboard.press("o")
    expect(fold).to_have_attribute("open", "")
    expect(fold.locator(".thought-text")).to_have_count(1)  # read whole: head and tail became one text
    assert len(reads) == 1 and f"/messages/{ids[-2]}/parts/0" in reads[0]
    signed_in.keyboard.press("o")
    expect(fold).not_to_have_attribute("open", "")
    # Enter on the current message opens too; Enter on a summary stays the summary's own.
    signed_in.keyboard.press("Enter")
    expect(fold).to_have_attribute("open", "")
    signed_in.keyboard.press("g")
    assert current(signed_in) == ids[0]
    # `/` still opens the search box; ? lists the keys, Escape closes the list.
    signed_in.keyboard.press("?")
    dialog = signed_in.locator("dialog.keys-dialog")
    expect(dialog).to_be_visible()
    expect(dialog.locator("kbd", has_text="j")).to_have_count(1)
    expect(dialog).to_contain_text("previous prompt of a person")
    signed_in.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    signed_in.keyboard.press("/")
    expect(signed_in.locator("dialog.search-dialog")).to_be_visible()
    signed_in.keyboard.press("j")  # typing in the search box, not moving
    expect(signed_in.locator(".search-input")).to_have_value("j")


def test_v_switches_the_outline_and_the_keys_work_the_same_in_it(signed_in: Page, panel: Panel) -> None:
    agent = panel.agent("keys in the outline")
    ids = [panel.put(agent, "user", [{"type": "text", "text": "prompt"}])]
    for step in range(3):
        parts = [
            {"type": "reasoning", "text": f"thinking {step}", "state": "done"},
            {"type": "text", "text": f"**answer {step}**\n\nsecond line"},
            {
                "type": "tool-Bash",
                "toolCallId": f"c{step}",
                "state": "output-available",
                "input": {"command": "ls"},
                "output": "a\n",
            },
        ]
        ids.append(panel.put(agent, "assistant", parts))
    open_agent(signed_in, agent)
    expect(signed_in.locator("details.fold.prose")).to_have_count(0)
    signed_in.keyboard.press("G")
    signed_in.keyboard.press("v")
    expect(signed_in.locator(".messages.outline")).to_have_count(1)
    expect(signed_in.get_by_role("button", name="Outline")).to_have_attribute("aria-pressed", "true")
    # The answer is a one-line fold: its words without the Markdown, and how many lines it has.
    fold = signed_in.locator(f'details.prose[data-message="{ids[-1]}"]')
    expect(fold.locator("summary")).to_contain_text("answer 2 second line")
    expect(fold.locator("summary .size")).to_have_text("3 lines")
    assert current(signed_in) == ids[-1]  # the keyboard stays on its message
    signed_in.keyboard.press("k")
    assert current(signed_in) == ids[-2]
    signed_in.keyboard.press("O")  # every fold of the message: thought, answer, call
    middle = signed_in.locator(f'details[data-message="{ids[-2]}"]')
    expect(middle).to_have_count(3)
    for i in range(3):
        expect(middle.nth(i)).to_have_attribute("open", "")
    expect(middle.nth(1).locator(".md strong")).to_have_text("answer 1")
    signed_in.keyboard.press("v")
    expect(signed_in.locator(".messages.outline")).to_have_count(0)
    expect(signed_in.locator(f'article[data-id="{ids[-2]}"] .part.text strong')).to_have_text("answer 1")
    assert current(signed_in) == ids[-2]


def test_g_goes_to_the_first_message_of_a_transcript_longer_than_its_loaded_pages(
    signed_in: Page, panel: Panel
) -> None:
    agent = panel.agent("keys long")
    tall = "\n\n".join(f"paragraph {n}" for n in range(6))  # the newest page fills more than a screen
    ids = [
        panel.put(agent, "user" if i % 2 == 0 else "assistant", [{"type": "text", "text": f"message {i}\n\n{tall}"}])
        for i in range(80)
    ]
    open_agent(signed_in, agent)
    assert signed_in.locator("article.msg").count() < 80  # only the newest pages are read so far
    signed_in.keyboard.press("g")
    # The start of the transcript, not of the pages read so far: every older page is read first.
    first = signed_in.locator(f'article[data-id="{ids[0]}"]')
    expect(first).to_be_focused()
    expect(signed_in.locator("article.msg")).to_have_count(80)
    expect(first).to_be_in_viewport()
    signed_in.keyboard.press("j")
    assert current(signed_in) == ids[1]
