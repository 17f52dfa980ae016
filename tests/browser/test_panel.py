"""The panel in a real browser: sign-in, folds read on open, live follow, safety, export."""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Page, expect
from waits import eventually

from .conftest import HeldRequests, Panel, settle

pytestmark = pytest.mark.browser

BIG = "".join(f"line {i:05d} \x1b[32mok\x1b[0m {'x' * 40}\n" for i in range(3000))  # ~170 KB, ANSI colours
MIDDLE = "line 01500 ok"  # only in the middle: not in the head or the tail


def bash(command: str, output: str, call: str | None = None) -> dict[str, Any]:
    return {
        "type": "tool-bash",
        "toolCallId": call or f"call_{uuid.uuid4().hex[:8]}",
        "state": "output-available",
        "input": {"command": command},
        "output": output,
    }


def conversation(panel: Panel, title: str = "build") -> tuple[str, str]:
    """An agent with a user question and an answer holding a cut bash output."""
    agent = panel.agent(title)
    panel.put(agent, "user", [{"type": "text", "text": "Run the **tests**, please."}])
    mid = panel.put(
        agent,
        "assistant",
        [
            {"type": "step-start"},
            {"type": "text", "text": "Running them now."},
            bash("pytest -q", BIG),
            {"type": "text", "text": "All green."},
        ],
    )
    return agent, mid


def open_agent(page: Page, agent: str) -> None:
    page.goto(f"/agents/{agent}")
    page.wait_for_selector(".live[data-state=live]")


def jump_to_the_start(page: Page) -> None:
    """Load the open transcript back to its first message: with "Jump to the start", unless the
    panel got there by itself (it reads older pages while they do not fill the screen)."""
    jump = page.locator(".older button", has_text="Jump to the start")
    try:
        jump.click(timeout=3000)
    except PlaywrightError:
        pass  # hidden: every page is in already
    expect(page.locator(".older")).to_be_hidden(timeout=20000)


def count_parts(page: Page) -> list[str]:
    seen: list[str] = []
    page.on("request", lambda r: seen.append(r.url) if "/parts/" in r.url else None)
    return seen


# -- sign in ---------------------------------------------------------------------------------


def test_token_in_the_first_url_becomes_a_cookie_and_leaves_the_address_bar(page: Page, panel: Panel) -> None:
    page.goto(f"/?token={panel.token}")
    page.wait_for_selector("body[data-ready]")
    assert "token" not in page.url
    cookies = {c["name"]: c for c in page.context.cookies()}
    cookie = cookies["foldline_token"]
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    assert page.evaluate("document.cookie") == ""  # not readable by scripts
    expect(page.locator(".workspace h2")).to_have_text(["team"])


def test_sign_in_page_and_sign_out(page: Page, panel: Panel) -> None:
    page.goto("/")
    expect(page).to_have_url(re.compile(r"/signin"))
    page.fill("#token", "fl_not_a_real_token")
    page.click("button[type=submit]")
    expect(page.locator(".error")).to_contain_text("not valid")
    page.fill("#token", panel.token)
    page.click("button[type=submit]")
    page.wait_for_selector("body[data-ready]")
    expect(page.locator(".workspace h2")).to_have_text(["team"])
    page.click("#signout")
    expect(page).to_have_url(re.compile(r"/signin"))
    assert not [c for c in page.context.cookies() if c["name"] == "foldline_token"]
    page.goto("/")
    expect(page).to_have_url(re.compile(r"/signin"))


def test_agents_are_listed_newest_activity_first_and_open_by_address(signed_in: Page, panel: Panel) -> None:
    older = panel.agent("older agent")
    newer = panel.agent("newer agent")
    panel.put(older, "user", [{"type": "text", "text": "wake up"}])  # now the newest activity
    signed_in.goto("/")
    signed_in.locator(f'li[data-agent="{newer}"]').wait_for()
    titles = signed_in.locator(".agent-list li .agent-title").all_inner_texts()
    assert titles.index("older agent") < titles.index("newer agent")
    signed_in.click("text=newer agent")
    expect(signed_in).to_have_url(re.compile(f"/agents/{newer}$"))
    expect(signed_in.locator(".live")).to_have_text("Following live")


# -- folds -----------------------------------------------------------------------------------


def test_a_cut_output_is_read_only_when_opened_then_drawn_whole_in_the_same_open_fold(
    signed_in: Page, panel: Panel
) -> None:
    agent, mid = conversation(panel)
    fetched = count_parts(signed_in)
    open_agent(signed_in, agent)
    fold = signed_in.locator(f'details[data-message="{mid}"][data-part="2"]')
    expect(fold.locator("summary")).to_contain_text("bash")
    expect(fold.locator("summary")).to_contain_text("cut")
    assert MIDDLE not in fold.inner_text()
    assert fetched == []

    held = HeldRequests(signed_in, "**/parts/2")
    fold.locator("summary").click()
    expect(fold.locator(".cut-mark")).to_have_text("Reading the whole output…")
    held.release()
    expect(fold.locator("pre.out").last).to_contain_text(MIDDLE)
    assert fold.evaluate("d => d.open")
    assert len(fetched) == 1
    out = fold.locator(".field").last
    assert out.inner_text().count("\x1b") == 0  # colours rendered, never raw escapes
    assert out.locator(".ansi-fg-2").first.inner_text() == "ok"

    fold.locator("summary").click()  # close and open again: no second read
    fold.locator("summary").click()
    expect(fold.locator("pre.out").last).to_contain_text(MIDDLE)
    assert len(fetched) == 1


def test_a_failed_read_shows_both_ends_and_offers_a_retry(signed_in: Page, panel: Panel) -> None:
    agent, mid = conversation(panel)
    signed_in.route("**/parts/2", lambda route: route.abort())
    open_agent(signed_in, agent)
    fold = signed_in.locator(f'details[data-message="{mid}"][data-part="2"]')
    fold.locator("summary").click()
    expect(fold.locator(".cut-mark")).to_contain_text("was not read")
    expect(fold.locator("pre.head")).to_contain_text("line 00000")
    expect(fold.locator("pre.tail")).to_contain_text("line 02999")
    signed_in.unroute("**/parts/2")
    fold.locator("button.retry").click()
    expect(fold.locator("pre.out").last).to_contain_text(MIDDLE)
    assert fold.evaluate("d => d.open")


def test_a_fold_opened_without_a_person_does_not_read(signed_in: Page, panel: Panel) -> None:
    # Chromium's find-in-page opens a closed <details> whose text matches (auto-expand) and fires
    # `toggle`, with no click on the summary. A script's `open = true` takes the same path.
    agent, mid = conversation(panel)
    fetched = count_parts(signed_in)
    open_agent(signed_in, agent)
    fold = signed_in.locator(f'details[data-message="{mid}"][data-part="2"]')
    fold.evaluate("d => { d.open = true; }")
    settle(signed_in)  # the toggle event has run
    assert fold.evaluate("d => d.open")
    expect(fold.locator(".cut-mark")).to_contain_text("not shown")
    assert fetched == []


# -- pages -----------------------------------------------------------------------------------


def test_newest_page_first_older_pages_on_scroll_up_and_a_jump_to_the_start(signed_in: Page, panel: Panel) -> None:
    agent = panel.agent("long")
    ids = [panel.put(agent, "user", [{"type": "text", "text": f"message {i}\n\n" + "text " * 60}]) for i in range(80)]
    pages: list[str] = []
    signed_in.on("request", lambda r: pages.append(r.url) if "/messages?" in r.url else None)
    open_agent(signed_in, agent)
    drawn = signed_in.locator("article.msg")
    expect(drawn).to_have_count(15)
    assert drawn.last.get_attribute("data-id") == ids[-1]
    assert pages == []  # the newest page came in the shell (panel.py's first_view)

    signed_in.evaluate("window.scrollTo(0, 0)")  # reaching the top loads the page before
    expect(drawn).to_have_count(45)
    assert "before=" in pages[0]
    assert signed_in.evaluate("scrollY") > 0  # the reader stays on the message they were reading

    signed_in.click("text=Jump to the start")
    expect(drawn).to_have_count(80)
    assert drawn.first.get_attribute("data-id") == ids[0]
    expect(signed_in.locator(".older")).to_be_hidden()


# -- live ------------------------------------------------------------------------------------


def at_bottom(page: Page) -> bool:
    return bool(page.evaluate("innerHeight + scrollY >= document.documentElement.scrollHeight - 48"))


def test_live_follow_draws_new_and_changed_messages_and_keeps_folds_and_scroll(signed_in: Page, panel: Panel) -> None:
    agent, mid = conversation(panel)
    for i in range(12):
        panel.put(agent, "user", [{"type": "text", "text": f"filler {i}\n\n" + "words " * 80}])
    open_agent(signed_in, agent)
    assert at_bottom(signed_in)

    fold = signed_in.locator(f'details[data-message="{mid}"][data-part="2"]')
    fold.locator("summary").click()
    expect(fold.locator("pre.out").last).to_contain_text(MIDDLE)

    # Scrolled up: a new message is drawn but the view stays where the reader is.
    signed_in.evaluate("window.scrollTo(0, 0)")
    new = panel.put(agent, "assistant", [{"type": "text", "text": "a **new** message"}])
    expect(signed_in.locator(f'[data-message="{new}"][data-part="0"]')).to_have_text("a new message")
    assert signed_in.evaluate("scrollY") == 0

    # At the bottom: the view follows.
    signed_in.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")
    panel.put(agent, "assistant", [{"type": "text", "text": "a **new** message, grown\n\n" + "more " * 200}], new)
    expect(signed_in.locator(f'[data-message="{new}"][data-part="0"]')).to_contain_text("grown")
    eventually(lambda: at_bottom(signed_in))

    # The message with the open fold changes: replaced in place, fold still open and whole.
    panel.put(
        agent,
        "assistant",
        [
            {"type": "step-start"},
            {"type": "text", "text": "Running them now."},
            bash("pytest -q", BIG),
            {"type": "text", "text": "All green, and one more line."},
        ],
        mid,
    )
    expect(signed_in.locator(f'[data-message="{mid}"][data-part="3"]')).to_contain_text("one more line")
    assert fold.evaluate("d => d.open")
    expect(fold.locator("pre.out").last).to_contain_text(MIDDLE)
    assert signed_in.locator(f'article[data-id="{mid}"]').count() == 1


def thought(text: str) -> dict[str, Any]:
    return {"type": "reasoning", "text": text, "state": "streaming"}


def test_a_thought_that_grows_after_it_was_read_whole_is_read_again(signed_in: Page, panel: Panel) -> None:
    agent = panel.agent("thinking")
    first = "".join(f"step {i} of the plan.\n" for i in range(600))
    mid = panel.put(agent, "assistant", [thought(first)])
    fetched = count_parts(signed_in)
    open_agent(signed_in, agent)
    fold = signed_in.locator(f'details[data-message="{mid}"][data-part="0"]')
    expect(fold.locator("summary")).to_contain_text("cut")
    fold.locator("summary").press("Enter")  # the keyboard opens it as a person
    expect(fold.locator(".field")).to_contain_text("step 300 of the plan.")
    assert len(fetched) == 1

    grown = first + "".join(f"later {i}: checking.\n" for i in range(600))
    panel.put(agent, "assistant", [thought(grown)], mid)
    expect(fold.locator(".field")).to_contain_text("later 300: checking.")
    assert fold.evaluate("d => d.open")
    assert len(fetched) == 2
    expect(fold.locator(".cut-mark")).to_have_count(0)


def test_a_subagent_is_a_fold_loaded_only_when_opened(signed_in: Page, panel: Panel) -> None:
    agent = panel.agent("with a worker")
    task = {
        "type": "tool-Task",
        "toolCallId": "toolu_worker_1",
        "state": "output-available",
        "input": {"description": "look around", "prompt": "list the files"},
        "output": "found 3 files",
    }
    panel.put(agent, "assistant", [task])
    panel.client.put_message(
        agent,
        {"id": str(uuid.uuid4()), "role": "assistant", "parts": [{"type": "text", "text": "worker says hello"}]},
        call="toolu_worker_1",
    )
    panel.client.put_message(  # a worker whose starting call is not in the transcript
        agent,
        {"id": str(uuid.uuid4()), "role": "assistant", "parts": [{"type": "text", "text": "an orphan worker"}]},
        call="agent-orphan",
    )
    reads: list[str] = []
    signed_in.on("request", lambda r: reads.append(r.url) if "/subagents/" in r.url else None)
    open_agent(signed_in, agent)
    sub = signed_in.locator('details.subagent[data-call="toolu_worker_1"]')
    expect(sub).to_have_count(1)
    # Right under the call's summary row, named by its description, the call's fold still closed.
    expect(sub.locator("summary")).to_be_visible()
    expect(sub.locator("summary")).to_have_text("Subagent·look around")
    assert not signed_in.locator("details.tool").first.evaluate("d => d.open")
    assert reads == []
    sub.locator("summary").click()
    expect(sub.locator(".part.text")).to_have_text("worker says hello")
    assert any("/subagents/toolu_worker_1/messages" in url for url in reads)
    orphan = signed_in.locator('.orphans details.subagent[data-call="agent-orphan"]')
    expect(orphan.locator("summary")).to_have_text("Subagent·agent-orphan")  # no call: its id
    orphan.locator("summary").click()
    expect(orphan.locator(".part.text")).to_have_text("an orphan worker")


# -- safety ----------------------------------------------------------------------------------

PAYLOADS = [
    "<script>window.__pwned = 'script'</script>",
    "<img src=x onerror=\"window.__pwned = 'img'\">",
    "[click me](javascript:window.__pwned='link')",
    "<a href=\"javascript:window.__pwned='a'\">raw link</a>",
    "<svg onload=\"window.__pwned='svg'\"></svg>",
    "<iframe srcdoc=\"<script>parent.__pwned='iframe'</script>\"></iframe>",
    "**bold <b onmouseover=\"window.__pwned='b'\">x</b>**",
    "`<script>window.__pwned='code'</script>`",
]


def test_hostile_text_executes_nothing(signed_in: Page, panel: Panel) -> None:
    agent = panel.agent("<img src=x onerror=\"window.__pwned='title'\">")
    text = "\n\n".join(PAYLOADS)
    panel.put(agent, "user", [{"type": "text", "text": text}])
    parts: list[dict[str, Any]] = [
        {"type": "text", "text": text},
        {"type": "reasoning", "text": text},
        bash(
            "<script>window.__pwned='cmd'</script>", text + "\n" + "<img src=x onerror=\"window.__pwned='big'\">" * 400
        ),
        {
            "type": "dynamic-tool",
            "toolName": "mcp__evil__<img src=x onerror=\"window.__pwned='tool'\">",
            "toolCallId": "call_evil",
            "state": "output-available",
            "input": {"q": "<script>window.__pwned='input'</script>"},
            "output": {"html": "<script>window.__pwned='output'</script>"},
        },
        {
            "type": "file",
            "mediaType": "text/html",
            "filename": "<img src=x onerror=\"window.__pwned='file'\">.html",
            "url": "javascript:window.__pwned='fileurl'",
        },
        {"type": "source-url", "sourceId": "s1", "url": "javascript:window.__pwned='source'", "title": "<b>source</b>"},
    ]
    mid = panel.put(agent, "assistant", parts)
    dialogs: list[str] = []
    signed_in.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    signed_in.goto("/")
    signed_in.locator(f'li[data-agent="{agent}"]').wait_for()
    open_agent(signed_in, agent)
    for details in signed_in.locator("details").all():
        details.locator("summary").first.click()
    expect(signed_in.locator(f'details[data-message="{mid}"][data-part="2"] .cut-mark')).to_have_count(0)
    for link in signed_in.locator("main a").all():
        href = link.get_attribute("href") or ""
        assert href.startswith(("http:", "https:", "mailto:", "/")), href
    signed_in.locator(f'[data-message="{mid}"][data-part="0"]').hover()
    settle(signed_in)  # the hover's handlers, and anything they queued, have run
    assert signed_in.evaluate("window.__pwned") is None
    assert dialogs == []
    assert signed_in.locator("main script, main img[src=x], main iframe, main svg").count() == 0
    body = signed_in.locator(f'[data-message="{mid}"][data-part="0"]').inner_text()
    assert "<script>window.__pwned = 'script'</script>" in body  # shown as text
    assert "<img src=x" in signed_in.locator(f'[data-message="{mid}"][data-part="4"]').inner_text()


# -- export ----------------------------------------------------------------------------------


def test_copy_and_downloads_hold_the_whole_transcript(signed_in: Page, panel: Panel) -> None:
    # Copy and every Download are the server's export (GET …/export), whole, never the cut form.
    agent, mid = conversation(panel, "export me")
    open_agent(signed_in, agent)
    signed_in.click("button.copy-transcript")
    expect(signed_in.locator(".toolbar .status")).to_have_text("Copy transcript: done")
    copied = signed_in.evaluate("navigator.clipboard.readText()")
    assert BIG.rstrip("\n") in copied  # whole, never the cut form
    assert "Run the **tests**, please." in copied

    exported = {}
    for format in ("md", "html", "json"):
        with signed_in.expect_download() as got:
            signed_in.click(f"a.download-{format}")
        assert got.value.suggested_filename == f"export-me.{format}"
        exported[format] = Path(got.value.path()).read_text(encoding="utf-8")
        with httpx.Client(base_url=panel.url, headers={"Authorization": f"Bearer {panel.token}"}) as http:
            assert exported[format] == http.get(f"/api/agents/{agent}/export", params={"format": format}).text
    assert exported["md"] == copied
    data = json.loads(exported["json"])
    assert data["messages"] == panel.client.messages(agent)["messages"]
    assert data["messages"][1]["parts"][2]["output"] == BIG
    assert exported["html"].startswith("<!doctype html>")
