"""Code reads as code (issue 23, item 6): a fenced block in an answer and a Read of a `.ts` file
are drawn in colours by language (Prism's tokens as spans around text nodes), markup inside code
stays text, and the highlighter loads only when code is on screen, never past its size cap."""

from __future__ import annotations

import os
import re
from typing import Any

import pytest
from playwright.sync_api import Page, Request, expect

from .conftest import Account, Panel, settle, sign_in
from .test_panel import jump_to_the_start, open_agent

pytestmark = pytest.mark.browser

PRISM = "/static/vendor/prism/prism.js"
PYTHON = (
    "import os\n\n\n@cache\ndef home(name: str) -> str:\n"
    '    """Where it lives."""\n    return os.path.join("/home", name)  # a note\n'
)
HOSTILE = (
    '<img src=x onerror="window.__pwned = 1"><script>window.__pwned = 2</script>\n'
    '<b id="bold">not bold</b> &amp; <a href="javascript:window.__pwned = 3">x</a>\n'
)


def prism_requests(page: Page) -> list[str]:
    asked: list[str] = []

    def seen(request: Request) -> None:
        if request.url.endswith(PRISM):
            asked.append(request.url)

    page.on("request", seen)
    return asked


def colour_of(page: Page, selector: str) -> str:
    color: str = page.locator(selector).first.evaluate("n => getComputedStyle(n).color")
    return color


def test_a_python_fence_in_an_answer_is_in_colours(signed_in: Page, panel: Panel) -> None:
    page = signed_in
    asked = prism_requests(page)
    plain = panel.agent("no code")
    panel.put(plain, "user", [{"type": "text", "text": "Hello"}])
    panel.put(plain, "assistant", [{"type": "text", "text": "Hi: `inline` code is not a block.\n\nBye."}])
    open_agent(page, plain)
    settle(page)
    assert asked == []  # a page with no code block never loads the highlighter

    agent = panel.agent("python fence")
    panel.put(agent, "user", [{"type": "text", "text": "Where is home?"}])
    answer = f"Like this:\n\n```python\n{PYTHON}```\n\nAnd a block with no language:\n\n```\ndef plain(): pass\n```\n"
    panel.put(agent, "assistant", [{"type": "text", "text": answer}])
    open_agent(page, agent)
    code = page.locator(".md pre code").first
    expect(code).to_have_attribute("data-coloured", "python")
    assert len(asked) == 1
    expect(code).to_have_text(PYTHON.rstrip("\n"))  # the same text, only wrapped
    expect(code.locator("span.tok-keyword").first).to_have_text("import")
    expect(code.locator("span.tok-keyword", has_text="def")).to_have_count(1)
    expect(code.locator("span.tok-function")).to_have_text(["home"])
    expect(code.locator("span.tok-comment")).to_have_text(["# a note"])
    expect(code.locator("span.tok-decorator").first).to_contain_text("cache")
    keyword = colour_of(page, ".md pre code span.tok-keyword")
    string = colour_of(page, ".md pre code span.tok-string")
    ink = code.evaluate("n => getComputedStyle(n).color")
    assert len({keyword, string, ink}) == 3
    # A block with no language stays plain.
    other = page.locator(".md pre code").nth(1)
    expect(other).not_to_have_attribute("data-coloured", "python")
    expect(other.locator("span")).to_have_count(0)
    if os.environ.get("FOLDLINE_SHOTS"):
        page.locator(".md pre").first.screenshot(path=os.environ["FOLDLINE_SHOTS"] + "/fence.png")


def test_markup_inside_code_stays_text(signed_in: Page, panel: Panel) -> None:
    page = signed_in
    agent = panel.agent("hostile code")
    panel.put(agent, "user", [{"type": "text", "text": "Show me"}])
    panel.put(agent, "assistant", [{"type": "text", "text": f"```html\n{HOSTILE}```\n"}])
    read = {
        "type": "tool-Read",
        "toolCallId": "call_html",
        "state": "output-available",
        "input": {"file_path": "/srv/site/index.html"},
        "output": "".join(f"{n:6}→{line}\n" for n, line in enumerate(HOSTILE.splitlines(), 1)),
    }
    mid = panel.put(agent, "assistant", [read])
    open_agent(page, agent)
    code = page.locator(".md pre code").first
    expect(code).to_have_attribute("data-coloured", "markup")
    expect(code).to_have_text(HOSTILE.rstrip("\n"))
    expect(code.locator("span.tok-tag").first).to_be_visible()  # tokens, drawn as text
    fold = page.locator(f'details.tool[data-message="{mid}"]')
    fold.locator("summary").click()
    out = fold.locator("section.field[data-field=output] pre.out")
    expect(out).to_have_attribute("data-coloured", "markup")
    expect(out.locator("span.tok-line-number").first).to_have_text("     1→")
    for node in (code, out):
        assert node.locator("img, script, b, a, iframe").count() == 0
    assert page.evaluate("() => window.__pwned") is None
    assert page.locator("#bold").count() == 0


def test_a_ts_read_in_the_largest_sample_is_in_colours(page: Page, imported_largest: tuple[Account, str]) -> None:
    account, agent = imported_largest
    sign_in(page, account.token)
    asked = prism_requests(page)
    page.set_viewport_size({"width": 1400, "height": 900})
    open_agent(page, agent)
    jump_to_the_start(page)
    settle(page)
    # Every call is closed: its code is not on screen, so none of it is coloured yet (the answers'
    # fences on screen are).
    assert page.locator("details.tool [data-coloured]").count() == 0
    assert page.locator(".md pre code[data-coloured]").count() > 0
    ts = page.locator(".tool-input", has_text=re.compile(r"\.ts\b"))
    read = page.locator('details.tool[data-tool="Read"]').filter(has=ts).first
    read.scroll_into_view_if_needed()
    read.locator("summary").click()
    out = read.locator("section.field[data-field=output] pre.out").first
    expect(out).to_have_attribute("data-coloured", "typescript")
    assert len(asked) == 1  # loaded once
    expect(out.locator("span.tok-line-number").first).to_have_text("     1→")
    assert out.locator("span.tok-keyword").count() > 5
    assert out.locator("span.tok-string").count() > 0
    # The numbers are dimmed, not coloured as code; the code after them is.
    first_line = out.locator("span.tok-line-number").first.evaluate("n => n.nextSibling && n.nextSibling.textContent")
    assert first_line and not first_line.startswith("→")
    if os.environ.get("FOLDLINE_SHOTS"):
        read.screenshot(path=os.environ["FOLDLINE_SHOTS"] + "/read-ts.png")


def test_code_past_the_cap_stays_plain_and_closed_code_waits(signed_in: Page, panel: Panel) -> None:
    page = signed_in
    asked = prism_requests(page)
    agent = panel.agent("big code")
    panel.put(agent, "user", [{"type": "text", "text": "Write it"}])
    big = "".join(f"def f{i}(x):\n    return x + {i}\n" for i in range(4000))  # about 110,000 characters
    write: dict[str, Any] = {
        "type": "tool-Write",
        "toolCallId": "call_big",
        "state": "output-available",
        "input": {"file_path": "/srv/big.py", "content": big},
        "output": "File created successfully at: /srv/big.py",
    }
    small: dict[str, Any] = {
        "type": "tool-Write",
        "toolCallId": "call_small",
        "state": "output-available",
        "input": {"file_path": "/srv/small.py", "content": "def small():\n    return 1\n"},
        "output": "File created successfully at: /srv/small.py",
    }
    mid = panel.put(agent, "assistant", [small, write])
    open_agent(page, agent)
    settle(page)
    assert asked == []  # closed folds: no code on screen, no highlighter
    fold = page.locator(f'details.tool[data-message="{mid}"][data-part="0"]')
    fold.locator("summary").click()
    expect(fold.locator("pre.diff")).to_have_attribute("data-coloured", "python")
    expect(fold.locator("dl.kv dt:text-is('content') + dd pre")).to_have_attribute("data-coloured", "python")
    expect(fold.locator("dl.kv dt:text-is('file_path') + dd pre")).not_to_have_attribute("data-lang", "python")
    expect(fold.locator("pre.diff span.tok-keyword")).to_have_text(["def", "return"])
    fold.locator("summary").click()
    fold = page.locator(f'details.tool[data-message="{mid}"][data-part="1"]')
    fold.locator("summary").click()
    content = fold.locator("dl.kv dt:text-is('content') + dd pre")
    expect(content).to_have_attribute("data-coloured", "too long")
    expect(content.locator("span")).to_have_count(0)
    expect(fold.locator("pre.diff")).to_have_attribute("data-coloured", "too long")
