"""Search in the panel: the search box, hits shown in place (cut middles read by slice), find in
one transcript, addresses, and all of it from the keyboard."""

from __future__ import annotations

import contextlib
import re
import uuid
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Locator, Page, Request, Route, expect
from waits import eventually

from .conftest import Panel, Searches, settle
from .test_panel import bash, open_agent

pytestmark = pytest.mark.browser

MB = 1024 * 1024


def word() -> str:
    """A word no other test writes (the panel's store is shared by the session)."""
    return "zq" + uuid.uuid4().hex[:10]


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def big_output(needle: str, size: int) -> tuple[str, int]:
    """About ``size`` characters of build log with ``needle`` once, in the middle; and where."""
    lines = "".join(f"line {i:07d} building target {i % 97}\n" for i in range(size // 32 + 1))[:size]
    middle = len(lines) // 2
    middle = lines.index("\n", middle) + 1
    return lines[:middle] + f"ERROR: {needle} while linking\n" + lines[middle:], middle + len("ERROR: ")


def task(call: str) -> dict[str, Any]:
    """A tool call that starts a subagent."""
    return {
        "type": "tool-Task",
        "toolCallId": call,
        "state": "output-available",
        "input": {"description": "dig", "prompt": "look"},
        "output": "done",
    }


class Requests:
    """Every API request the page makes."""

    def __init__(self, page: Page) -> None:
        self.urls: list[str] = []
        page.on("request", self.seen)

    def seen(self, request: Request) -> None:
        if "/api/" in request.url:
            self.urls.append(request.url)

    def parts(self) -> list[tuple[str, dict[str, list[str]]]]:
        """(path, query) of each request to a part route."""
        found = []
        for url in self.urls:
            parsed = urlparse(url)
            if "/parts/" in parsed.path:
                found.append((parsed.path, parse_qs(parsed.query)))
        return found

    def whole_reads(self) -> list[str]:
        return [path for path, query in self.parts() if "field" not in query]

    def pages(self) -> list[str]:
        return [u for u in self.urls if re.search(r"/messages\?", u)]


def search_box(page: Page) -> Locator:
    return page.locator("dialog.search-dialog")


def options(page: Page) -> Locator:
    return search_box(page).locator("[role=option]")


def active_option(page: Page) -> Locator:
    return search_box(page).locator("[role=option][aria-selected=true]")


def current_mark(page: Page) -> Locator:
    return page.locator("main mark.hit.current")


def has_focus_ring(page: Page) -> bool:
    style = page.evaluate(
        "(() => { const s = getComputedStyle(document.activeElement); return [s.outlineStyle, s.outlineWidth]; })()"
    )
    return bool(style[0] != "none" and style[1] != "0px")


def test_slash_opens_search_and_hits_come_grouped_by_agent_with_the_match_marked(signed_in: Page, panel: Panel) -> None:
    w = word()
    first = panel.agent("Fix the <b>flaky</b> build")
    second = panel.agent("Another **agent**")
    panel.put(first, "user", [text(f"Why does it fail with {w}? <img src=x onerror=alert(1)>")])
    old = panel.put(first, "assistant", [bash("make", f"error: {w.upper()} on port 5432")])
    panel.put(second, "user", [text(f"{w} again")])

    searches = Searches(signed_in)
    signed_in.keyboard.press("/")
    box = search_box(signed_in)
    expect(box).to_be_visible()
    field = box.get_by_role("combobox", name="Search transcripts")
    expect(field).to_be_focused()
    assert field.get_attribute("aria-controls") == box.get_by_role("listbox").get_attribute("id")
    signed_in.keyboard.type(w)

    groups = box.locator("[role=group]")
    expect(groups).to_have_count(2)
    # Newest first: the second agent's hit is the newest, so its group comes first.
    expect(groups.locator(".group-title")).to_have_text(["Another agent", "Fix the <b>flaky</b> build"])
    expect(options(signed_in)).to_have_count(3)
    searches.answered(w)  # past the debounce: no answer for a shorter prefix is still to come
    marks = box.locator("[role=option] mark")
    expect(marks).to_have_text([w, w.upper(), w], ignore_case=False)
    snippet = groups.nth(1).locator("[role=option]").nth(1).locator(".hit-snippet")
    expect(snippet).to_contain_text("<img src=x onerror=alert(1)>")  # text, never parsed
    assert box.locator("img, b").count() == 0
    expect(groups.nth(1).locator(".hit-where").first).to_have_text("Assistant · bash · output")

    # The first option is active; arrows move; the input says which one with aria-activedescendant.
    expect(active_option(signed_in)).to_have_count(1)
    signed_in.keyboard.press("ArrowDown")
    active = active_option(signed_in)
    expect(active).to_contain_text(w.upper())
    assert field.get_attribute("aria-activedescendant") == active.get_attribute("id")
    signed_in.keyboard.press("ArrowDown")
    signed_in.keyboard.press("ArrowUp")
    expect(active_option(signed_in)).to_contain_text(w.upper())

    signed_in.keyboard.press("Enter")
    expect(box).to_be_hidden()
    expect(signed_in).to_have_url(re.compile(f"/agents/{first}#msg={old}&part=0&field=output&at=7$"))
    mark = current_mark(signed_in)
    expect(mark).to_have_text(w.upper())
    expect(mark).to_be_focused()
    assert signed_in.locator(f'details[data-message="{old}"][data-part="0"]').evaluate("d => d.open")

    # Escape closes; `/` typed in a field is a character; Ctrl-K opens from anywhere.
    signed_in.keyboard.press("Control+k")
    expect(box).to_be_visible()
    expect(field).to_have_value(w)
    signed_in.keyboard.press("Escape")
    expect(box).to_be_hidden()
    find = signed_in.get_by_role("textbox", name="Find in this transcript")
    find.focus()
    signed_in.keyboard.type("a/b")
    expect(find).to_have_value("a/b")
    expect(box).to_be_hidden()
    find.press("Control+k")
    expect(box).to_be_visible()


def test_stale_answers_are_dropped_and_more_pages_come_by_cursor(signed_in: Page, panel: Panel) -> None:
    w = word()
    agent = panel.agent("many hits")
    for i in range(25):
        panel.put(agent, "user", [text(f"{w} number {i:02d}")])
    searches: list[str] = []
    signed_in.on("request", lambda r: searches.append(r.url) if "/api/search" in r.url else None)
    answers = Searches(signed_in)
    signed_in.keyboard.press("/")
    search_box(signed_in).get_by_role("combobox").fill(w)
    expect(options(signed_in)).to_have_count(21)  # 20 hits and "Show more results"
    expect(search_box(signed_in).locator(".search-status")).to_have_text("20+ matches")
    answers.answered(w)
    assert len(searches) == 1 and "limit=20" in searches[0]
    expect(options(signed_in).first).to_contain_text("number 24")
    more = search_box(signed_in).locator(".more-option")
    expect(more).to_have_text("Show more results")
    signed_in.keyboard.press("End")  # the caret, not the list
    for _ in range(20):
        signed_in.keyboard.press("ArrowDown")
    expect(active_option(signed_in)).to_have_text("Show more results")
    signed_in.keyboard.press("Enter")
    expect(options(signed_in)).to_have_count(25)
    assert "cursor=" in searches[-1]
    expect(search_box(signed_in).locator(".search-status")).to_have_text("25 matches")
    texts = search_box(signed_in).locator(".hit-snippet").all_inner_texts()
    assert sorted(texts) == sorted(f"{w} number {i:02d}" for i in range(25))  # no repeats

    # An answer that comes after a newer query's answer is dropped.
    held: list[Route] = []
    signed_in.route("**/api/search?q=slow*", lambda route: held.append(route))
    field = search_box(signed_in).get_by_role("combobox")
    field.fill(f"slow {w}")
    for _ in range(100):  # route handlers run while the page is being waited on
        if held:
            break
        signed_in.wait_for_timeout(50)
    assert len(held) == 1
    field.fill(f'"{w} number 07"')  # a phrase: one term, so one hit
    expect(options(signed_in)).to_have_count(1)
    with contextlib.suppress(PlaywrightError):  # the page may have aborted it already, as it should
        held[0].continue_()
    answers.answered(f'"{w} number 07"')  # the held answer came (or was dropped) after the newer one
    expect(options(signed_in)).to_have_count(1)
    expect(options(signed_in).first).to_contain_text("number 07")


def test_a_hit_in_the_cut_middle_of_a_20_mb_output_is_shown_in_place_without_reading_the_part_whole(
    signed_in: Page, panel: Panel
) -> None:
    w = word()
    agent = panel.agent("a huge build log")
    older = [panel.put(agent, "user", [text(f"older message {i}")]) for i in range(150)]
    output, at = big_output(w, 20 * MB)
    mid = panel.put(agent, "assistant", [text("Building."), bash("make all", output)])
    for i in range(40):
        panel.put(agent, "assistant", [text(f"later message {i}")])
    requests = Requests(signed_in)

    signed_in.keyboard.press("/")
    signed_in.keyboard.type(w)
    expect(options(signed_in)).to_have_count(1)
    expect(options(signed_in).first.locator(".hit-where")).to_have_text("Assistant · bash · output · in the cut middle")
    signed_in.keyboard.press("Enter")

    fold = signed_in.locator(f'details[data-message="{mid}"][data-part="1"]')
    mark = fold.locator("mark.hit.current")
    expect(mark).to_have_text(w)
    expect(mark).to_be_focused()
    assert fold.evaluate("d => d.open")
    assert mark.evaluate("m => m.closest('pre').classList.contains('window')")
    expect(fold.locator("pre.window")).to_contain_text(f"ERROR: {w} while linking")
    expect(fold.locator("pre.head")).to_contain_text("line 0000000 building target 0")  # head and tail still there
    expect(fold.locator("pre.tail")).to_contain_text(output[-40:].strip())
    expect(fold.locator(".cut-mark")).to_have_count(2)  # a gap before the window, one after
    expect(signed_in).to_have_url(re.compile(f"/agents/{agent}#msg={mid}&part=1&field=output&at={at}$"))

    # Only the pages back to the message were read, not the whole transcript.
    assert any("before=" in u for u in requests.pages())
    assert signed_in.locator(f'article[data-id="{older[0]}"]').count() == 0
    # The slice around the match, and never the whole part.
    slices = [q for path, q in requests.parts() if path.endswith(f"/messages/{mid}/parts/1")]
    assert slices == [{"field": ["output"], "start": [str(at - 2000)], "end": [str(at + len(w) + 2000)]}]
    assert requests.whole_reads() == []

    # "Show the next 64 KB" reads the next slice under the window; a person's open reads nothing whole.
    window = fold.locator("pre.window")
    gap = fold.locator(".cut-mark").last
    gap.get_by_role("button", name="Show the next 64 KB").click()
    end = at + len(w) + 2000 + 65536
    line_end = output.rindex("\n", 0, end)
    expect(window).to_contain_text(output[output.rindex("\n", 0, line_end) + 1 : line_end])
    last = requests.parts()[-1][1]
    assert last["field"] == ["output"] and int(last["end"][0]) - int(last["start"][0]) == 65536
    fold.locator("summary").click()
    fold.locator("summary").click()
    assert fold.evaluate("d => d.open")
    settle(signed_in)  # the toggles' handlers, and any read they started, have run
    expect(fold.locator("button.read")).to_have_count(0)  # no "Read the whole output" over 1 MB
    assert requests.whole_reads() == []


def test_a_part_over_1_mb_opened_by_a_person_shows_its_ends_and_reads_only_slices(
    signed_in: Page, panel: Panel
) -> None:
    agent = panel.agent("two big outputs")
    small, _ = big_output(word(), MB - 4096)
    large, _ = big_output(word(), MB + 4096)
    mid = panel.put(agent, "assistant", [bash("make small", small), bash("make large", large)])
    requests = Requests(signed_in)
    open_agent(signed_in, agent)

    big = signed_in.locator(f'details[data-message="{mid}"][data-part="1"]')
    big.locator("summary").click()
    expect(big.locator(".cut-mark")).to_contain_text("in the middle not shown")
    settle(signed_in)  # the toggle's handlers, and any read they started, have run
    assert requests.parts() == []
    big.get_by_role("button", name="Show the next 64 KB").click()
    expect(big.locator("pre.window")).to_have_count(1)
    expect(big.locator("pre.window")).to_contain_text(large[2048:2100].split("\n")[1])
    assert requests.whole_reads() == [] and len(requests.parts()) == 1

    # At or under 1 MB a person's open still reads the part whole.
    fold = signed_in.locator(f'details[data-message="{mid}"][data-part="0"]')
    fold.locator("summary").click()
    expect(fold.locator(".cut-mark")).to_have_count(0)
    assert requests.whole_reads() == [f"/api/agents/{agent}/messages/{mid}/parts/0"]


def test_offsets_in_code_points_mark_the_match_after_emoji_cjk_and_combining_marks(
    signed_in: Page, panel: Panel
) -> None:
    w = word()
    agent = panel.agent("unicode")
    before = "😀 naïve cafe\u0301 漢字 👍🏽 "  # astral, combining, CJK, a modifier: UTF-16 counts differ
    short = panel.put(agent, "user", [text(before + w + " 🎉")])
    lines = "".join(f"{i:05d} 🧪 테스트 e\u0301tude 👩‍👩‍👧\n" for i in range(2000))
    output = lines + before + w.upper() + " 🎉\n" + lines
    big = panel.put(agent, "assistant", [bash("run", output)])
    requests = Requests(signed_in)
    open_agent(signed_in, agent)

    signed_in.keyboard.press("/")
    signed_in.keyboard.type(w)
    expect(options(signed_in)).to_have_count(2)
    expect(search_box(signed_in).locator("[role=option] mark")).to_have_text([w.upper(), w])
    signed_in.keyboard.press("Enter")
    fold = signed_in.locator(f'details[data-message="{big}"][data-part="0"]')
    expect(fold.locator("pre.window mark.current")).to_have_text(w.upper())
    expect(fold.locator("pre.window")).to_contain_text(before + w.upper() + " 🎉")
    assert requests.whole_reads() == []

    signed_in.keyboard.press("Control+k")
    signed_in.keyboard.press("ArrowDown")
    signed_in.keyboard.press("Enter")
    expect(signed_in.locator(f'[data-message="{short}"][data-part="0"] mark.current')).to_have_text(w)
    start = len(before)  # Python counts code points, as the API does
    expect(signed_in).to_have_url(re.compile(f"#msg={short}&part=0&field=text&at={start}$"))


def test_find_in_this_transcript_steps_through_every_match_with_a_count(signed_in: Page, panel: Panel) -> None:
    w = word()
    agent = panel.agent("find me")
    middle, at = big_output(w, 200_000)  # cut, under 1 MB
    a = panel.put(agent, "user", [text(f"first {w} here")])
    b = panel.put(agent, "assistant", [bash("make", middle)])
    worker = "toolu_" + uuid.uuid4().hex[:8]
    panel.put(agent, "assistant", [task(worker)])
    inner = str(uuid.uuid4())
    panel.client.put_message(agent, {"id": inner, "role": "assistant", "parts": [text(f"worker saw {w}")]}, call=worker)
    c = panel.put(agent, "assistant", [text(f"last {w} there")])
    requests = Requests(signed_in)
    open_agent(signed_in, agent)

    find = signed_in.get_by_role("textbox", name="Find in this transcript")
    count = signed_in.locator(".find-count")
    find.fill(w)
    expect(count).to_have_text("1 of 4")
    expect(current_mark(signed_in)).to_have_text(w)
    expect(signed_in.locator(f'article[data-id="{c}"] mark.current')).to_have_count(1)
    expect(find).to_be_focused()  # stepping leaves the keyboard in the field

    find.press("Enter")
    expect(count).to_have_text("2 of 4")
    sub = signed_in.locator(f'details.subagent[data-call="{worker}"]')
    expect(sub.locator(f'[data-message="{inner}"] mark.current')).to_have_text(w)
    assert sub.evaluate("d => d.open")
    expect(signed_in).to_have_url(re.compile(f"/agents/{agent}\\?call={worker}#msg={inner}&part=0&field=text&at=11$"))

    find.press("Enter")
    expect(count).to_have_text("3 of 4")
    fold = signed_in.locator(f'details[data-message="{b}"][data-part="0"]')
    expect(fold.locator("pre.window mark.current")).to_have_text(w)
    assert requests.whole_reads() == []  # a find reads the slice, even under 1 MB

    signed_in.get_by_role("button", name="Next").click()
    expect(count).to_have_text("4 of 4")
    expect(signed_in.locator(f'article[data-id="{a}"] mark.current')).to_have_text(w)
    find.press("Enter")
    expect(count).to_have_text("1 of 4")  # round again
    find.press("Shift+Enter")
    expect(count).to_have_text("4 of 4")
    signed_in.get_by_role("button", name="Previous").click()
    expect(count).to_have_text("3 of 4")
    expect(signed_in.locator("main mark.current")).to_have_count(1)
    # Earlier steps stay marked, only one is the current one.
    assert signed_in.locator("main mark.hit").count() >= 3

    find.press("Escape")
    expect(find).to_have_value("")
    expect(count).to_have_text("")
    expect(signed_in.locator("main mark.hit")).to_have_count(0)

    find.fill("nothing matches " + w)
    expect(count).to_have_text("No matches")
    expect(signed_in.get_by_role("button", name="Next")).to_be_disabled()


def test_an_address_opens_the_same_place(signed_in: Page, panel: Panel) -> None:
    w = word()
    agent = panel.agent("shared link")
    output, at = big_output(w, 300_000)
    mid = panel.put(agent, "assistant", [bash("make", output)])
    for i in range(20):
        panel.put(agent, "user", [text(f"filler {i}")])
    worker = "toolu_" + uuid.uuid4().hex[:8]
    panel.put(agent, "assistant", [task(worker)])
    inner = str(uuid.uuid4())
    panel.client.put_message(
        agent, {"id": inner, "role": "assistant", "parts": [text(f"inside {w} inside")]}, call=worker
    )
    requests = Requests(signed_in)

    # The form the panel writes and `foldline search` prints; the match is marked from `at`.
    signed_in.goto(f"/agents/{agent}#msg={mid}&part=0&field=output&at={at}")
    mark = current_mark(signed_in)
    expect(mark).to_have_text(w)
    expect(mark).to_be_focused()
    assert requests.whole_reads() == []

    signed_in.goto(f"/agents/{agent}?call={worker}#msg={inner}&part=0&field=text&at=7")
    expect(signed_in.locator(f'details.subagent[data-call="{worker}"] mark.current')).to_have_text(w)

    # Also read: `call` in the fragment, `start` for `at`, and `end`.
    signed_in.goto(f"/agents/{agent}#call={worker}&msg={inner}&part=0&field=text&start=7&end=9")
    expect(current_mark(signed_in)).to_have_text(w[:2])

    # A place that is not there says so, and the transcript is still shown.
    signed_in.goto(f"/agents/{agent}#msg={uuid.uuid4()}&part=0&field=text&at=0")
    expect(signed_in.locator(".show-note")).to_have_text(
        "Cannot show that match: that message is no longer in this transcript"
    )
    expect(signed_in.locator("article.msg").first).to_be_visible()


def test_a_shared_address_opens_at_its_place_after_signing_in(page: Page, panel: Panel) -> None:
    w = word()
    agent = panel.agent("shared with a colleague")
    worker = "toolu_" + uuid.uuid4().hex[:8]
    panel.put(agent, "assistant", [task(worker)])
    inner = str(uuid.uuid4())
    panel.client.put_message(agent, {"id": inner, "role": "assistant", "parts": [text(f"found {w}")]}, call=worker)
    page.goto(f"/agents/{agent}?call={worker}#msg={inner}&part=0&field=text&at=6")
    expect(page).to_have_url(re.compile(r"/signin\?next="))
    page.fill("#token", panel.token)
    page.click("button[type=submit]")
    expect(page.locator(f'details.subagent[data-call="{worker}"] mark.current')).to_have_text(w)
    assert page.url.endswith(f"/agents/{agent}?call={worker}#msg={inner}&part=0&field=text&at=6")


def test_the_whole_flow_from_the_keyboard_only(page: Page, panel: Panel) -> None:
    w = word()
    agent = panel.agent("keyboard")
    output, _ = big_output(w, 2 * MB)
    mid = panel.put(agent, "assistant", [text(f"see {w} below"), bash("make", output)])
    panel.put(agent, "user", [text("thanks")])
    searches = Searches(page)
    keys = page.keyboard
    page.goto(f"/agents/{agent}?token={panel.token}")
    page.wait_for_selector(".live[data-state=live]")

    # From the top of the page, Tab reaches the find field; Enter and Shift+Enter step.
    find = page.get_by_role("textbox", name="Find in this transcript")
    for _ in range(12):
        keys.press("Tab")
        if page.evaluate("document.activeElement.classList.contains('find-input')"):
            break
    expect(find).to_be_focused()
    assert has_focus_ring(page)
    keys.type(w)
    keys.press("Enter")  # right after typing: the search runs and shows the first match
    count = page.locator(".find-count")
    expect(count).to_have_text("1 of 2")
    keys.press("Enter")
    expect(count).to_have_text("2 of 2")
    keys.press("Shift+Enter")
    expect(count).to_have_text("1 of 2")
    expect(page.locator("main mark.current")).to_have_text(w)
    keys.press("Escape")
    expect(find).to_have_value("")

    # Ctrl+K (`/` is a character in a field), arrows to the hit in the cut middle, Enter.
    keys.press("Control+k")
    expect(search_box(page)).to_be_visible()
    assert has_focus_ring(page)
    keys.type(w)
    expect(options(page)).to_have_count(2)
    searches.answered(w)  # past the debounce: no answer for a shorter prefix is still to come
    where = options(page).locator(".hit-where").all_text_contents()
    for _ in range(where.index("Assistant · bash · output · in the cut middle")):
        keys.press("ArrowDown")
    expect(active_option(page)).to_contain_text("in the cut middle")
    keys.press("Enter")
    fold = page.locator(f'details[data-message="{mid}"][data-part="1"]')
    mark = fold.locator("mark.current")
    expect(mark).to_have_text(w)
    expect(mark).to_be_focused()
    assert has_focus_ring(page)

    # Tab from the mark reaches the buttons of the gap below it; Enter reads the next 64 KB and
    # leaves the keyboard on the button that reads the 64 KB after that.
    window = fold.locator("pre.window").first
    before = len(window.inner_text())
    for _ in range(4):
        keys.press("Tab")
        if page.evaluate("document.activeElement.textContent") == "Show the next 64 KB":
            break
    assert page.evaluate("document.activeElement.textContent") == "Show the next 64 KB"
    assert has_focus_ring(page)
    keys.press("Enter")
    eventually(lambda: len(window.inner_text()) > before + 60_000)
    eventually(lambda: page.evaluate("document.activeElement.textContent") == "Show the next 64 KB")
    keys.press("Enter")
    eventually(lambda: len(window.inner_text()) > before + 120_000)
