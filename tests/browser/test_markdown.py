"""Markdown in the panel: what it draws, that hostile text executes nothing, and that no text can
take the page down (issue 9 item 9: linear work, bounded nesting, plain text when it cannot draw).

No test here asserts a time: a renderer that freezes on one of these texts is caught by
pytest-timeout, and each render measured in the page must come back with a finite duration.
"""

from __future__ import annotations

import math
import re

import pytest
from playwright.sync_api import Page, expect

from .conftest import Panel, settle
from .test_panel import open_agent

pytestmark = pytest.mark.browser

AFTER = "**after** the storm, a `normal` message"
TEXT_BOUND = 65_536  # past it a text part arrives cut (FOLDLINE_TEXT_BOUND): a fold, drawn as text

# The three texts from the issue, and two that reach the parser itself (under the size bound).
PATHOLOGICAL = {
    "20k-quotes": (">" * 20_000, "nested"),  # replaced the whole view: "Maximum call stack size exceeded"
    "3000-level-list": ("- " * 3_000 + "deep", "nested"),  # crashed the tab
    "100k-brackets": ("[" * 100_000 + "](" * 100_000, "characters"),  # froze the tab for 42 s
    "200-level-indented-list": ("\n".join("  " * i + f"- level {i}" for i in range(200)), "nested"),
    "60k-brackets-parsed": ("[" * 60_000 + "](" * 60_000, None),  # under the bound: markdown-it parses it
}


def text_of(page: Page, mid: str) -> str:
    text: str = page.locator(f'[data-message="{mid}"][data-part="0"]').evaluate("n => n.textContent")
    return text


@pytest.mark.parametrize("name", list(PATHOLOGICAL))
def test_a_pathological_text_is_drawn_as_text_and_the_page_stays_up(signed_in: Page, panel: Panel, name: str) -> None:
    payload, why = PATHOLOGICAL[name]
    errors: list[str] = []
    signed_in.on("pageerror", lambda e: errors.append(str(e)))
    agent = panel.agent(f"markdown {name}")
    bad = panel.put(agent, "assistant", [{"type": "text", "text": payload}])
    good = panel.put(agent, "assistant", [{"type": "text", "text": AFTER}])
    open_agent(signed_in, agent)

    after = signed_in.locator(f'[data-message="{good}"][data-part="0"]')
    expect(after.locator(".md strong")).to_have_text("after")
    expect(after.locator(".md code")).to_have_text("normal")
    part = signed_in.locator(f'[data-message="{bad}"][data-part="0"]')
    if len(payload) > TEXT_BOUND:  # never given to the renderer on the page: a fold with both ends
        expect(part.locator("summary")).to_contain_text("Long text")
    elif why is None:
        expect(part.locator(".md-note")).to_have_count(0)
        assert text_of(signed_in, bad) == payload  # all of it, as words: no link can be made of it
    else:
        expect(part.locator(".md-plain pre")).to_have_count(1)
        assert part.locator(".md-plain pre").evaluate("n => n.textContent") == payload
        expect(part.locator(".md-note")).to_contain_text(f"Shown as plain text: {why}" if why == "nested" else why)
    assert errors == []
    assert signed_in.locator("main .msg").count() == 2  # the view is the transcript, not an error

    # The renderer itself, called in the page: it returns (a finite time), whatever the text.
    took, cls, length = signed_in.evaluate(
        """async (text) => {
            const { renderMarkdown } = await import("/static/markdown.js");
            const t0 = performance.now();
            const node = renderMarkdown(text);
            return [performance.now() - t0, node.className, node.textContent.length];
        }""",
        payload,
    )
    assert math.isfinite(took)
    assert ("md-plain" in cls) == (why is not None)
    assert length >= len(payload)


def test_a_text_whose_render_throws_is_a_note_not_an_exception(signed_in: Page) -> None:
    cls, note = signed_in.evaluate(
        """async () => {
            const { renderMarkdown } = await import("/static/markdown.js");
            const node = renderMarkdown({ toString() { throw new RangeError("Maximum call stack size exceeded"); } });
            return [node.className, node.querySelector(".md-note").textContent];
        }"""
    )
    assert "md-plain" in cls
    assert note == "Shown as plain text: it could not be drawn as Markdown."


def test_plain_text_summaries_are_linear_and_bounded(signed_in: Page, panel: Panel) -> None:
    """Titles and summary rows strip markers with the same parser; a huge title is cut, not parsed whole."""
    title = "[" * 100_000 + "](" * 100_000
    agent = panel.agent("**bold** " + "*_" * 245)  # titles are at most 500 characters
    signed_in.goto("/")
    shown = signed_in.locator(f'li[data-agent="{agent}"] .agent-title')
    expect(shown).to_contain_text("bold")
    assert (shown.text_content() or "").startswith("bold ")  # the markers of "**bold**" went
    took, out = signed_in.evaluate(
        """async (text) => {
            const { plainText } = await import("/static/markdown.js");
            const t0 = performance.now();
            const out = plainText(text);
            return [performance.now() - t0, out];
        }""",
        title,
    )
    assert math.isfinite(took)
    assert out.endswith("…") and len(out) <= 4_001


def test_markdown_is_drawn_as_before(signed_in: Page, panel: Panel) -> None:
    text = "\n".join(
        [
            "# Title",
            "",
            "Some **bold**, *em*, _em too_, ~~gone~~, `code` and a [link](https://example.com/a).",
            "A bare https://example.org/x, an <https://example.net/y>, a mail <mailto:a@example.com>;",
            "www.example.com and example.com stay text.",
            "",
            "- one",
            "- two",
            "  - nested",
            "",
            "3. three",
            "4. four",
            "",
            "> quoted",
            "",
            "```python",
            "print('hi')",
            "```",
            "",
            "| a | b |",
            "|:--|--:|",
            "| 1 | 2 |",
            "",
            "---",
            "",
            "![dot](data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=)",
        ]
    )
    agent = panel.agent("markdown look")
    mid = panel.put(agent, "assistant", [{"type": "text", "text": text}])
    open_agent(signed_in, agent)
    md = signed_in.locator(f'[data-message="{mid}"][data-part="0"] .md')
    expect(md.locator("h2")).to_have_text("Title")  # the text's highest heading: under the page's h1
    expect(md.locator("strong")).to_have_text("bold")
    expect(md.locator("em")).to_have_text(["em", "em too"])
    expect(md.locator("del")).to_have_text("gone")
    expect(md.locator("p > code")).to_have_text("code")
    links = md.locator("a")
    expect(links).to_have_text(
        ["link", "https://example.org/x", "https://example.net/y", "mailto:a@example.com"]
    )
    for a in links.all():
        assert a.get_attribute("target") == "_blank"
        assert a.get_attribute("rel") == "noopener noreferrer nofollow"
    assert "www.example.com and example.com stay text." in (md.text_content() or "")
    expect(md.locator("ul > li")).to_have_count(3)
    expect(md.locator("ul > li > ul > li")).to_have_text("nested")
    assert md.locator("ul > li").first.evaluate("n => n.firstChild.nodeType") == 3  # tight: no <p>
    assert md.locator("ol").get_attribute("start") == "3"
    expect(md.locator("blockquote")).to_have_text("quoted")
    pre = md.locator("pre.code-block")
    expect(pre).to_have_attribute("data-lang", "python")
    assert pre.locator("code").evaluate("n => n.textContent") == "print('hi')"
    expect(md.locator(".table-wrap table th")).to_have_text(["a", "b"])
    assert md.locator(".table-wrap td").last.evaluate("n => n.style.textAlign") == "right"
    expect(md.locator("hr")).to_have_count(1)
    expect(md.locator("img")).to_have_attribute("alt", "dot")
    expect(md.locator(".md-note")).to_have_count(0)


HOSTILE = [
    "<script>alert('script')</script>",
    "<img src=x onerror=alert('img')>",
    "[x](javascript:alert('link'))",
    "[upper](JaVaScRiPt:alert('upper'))",
    "[entity](&#106;avascript:alert('entity'))",
    "[spaced]( javascript:alert('spaced') )",
    "[data](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "[vb](vbscript:msgbox(1))",
    "<javascript:alert('auto')>",
    "![pic](javascript:alert('image'))",
    "![svg](data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+PC9zdmc+)",
    "![same origin](/signout)",
    "[ref][r]\n\n[r]: javascript:alert('ref')",
    "<div onclick=\"alert('div')\">\n\n*raw block*\n\n</div>",
    "<iframe srcdoc=\"<script>alert('iframe')</script>\"></iframe>",
    "<svg><script>alert('svg')</script></svg>",
    "<a href=\"javascript:alert('a')\">raw link</a>",
    "```\"><img src=x onerror=alert('fence')>\ncode\n```",
    "| <img src=x onerror=alert('cell')> |\n|---|\n| <script>alert('td')</script> |",
    "**<b onmouseover=\"alert('b')\">hover</b>**",
]


def test_hostile_markdown_executes_nothing(signed_in: Page, panel: Panel) -> None:
    dialogs: list[str] = []
    signed_in.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    agent = panel.agent("hostile markdown")
    mid = panel.put(agent, "assistant", [{"type": "text", "text": "\n\n".join(HOSTILE)}])
    each = panel.put(agent, "user", [{"type": "text", "text": one} for one in HOSTILE])  # one part each
    open_agent(signed_in, agent)
    part = signed_in.locator(f'[data-message="{mid}"][data-part="0"]')
    expect(part.locator(".md")).to_have_count(1)
    expect(signed_in.locator(f'[data-message="{each}"] .md')).to_have_count(len(HOSTILE))
    part.hover()
    signed_in.locator("main .md").last.hover()
    settle(signed_in)  # the hover's handlers, and anything they queued, have run

    assert dialogs == []
    assert signed_in.locator("main script, main iframe, main svg, main [onerror], main [onclick]").count() == 0
    assert signed_in.locator("main [onmouseover], main [srcdoc], main img[src=x]").count() == 0
    for img in signed_in.locator("main .md img").all():
        assert (img.get_attribute("src") or "").startswith("data:image/png")
    for link in signed_in.locator("main .md a").all():
        assert re.match(r"(https?:|mailto:)", link.get_attribute("href") or ""), link.get_attribute("href")
    body = part.evaluate("n => n.textContent")
    assert "<script>alert('script')</script>" in body  # raw HTML is shown as text
    assert "<img src=x onerror=alert('img')>" in body
    assert "javascript:alert('link')" in body  # the javascript: link is words, not a link
    assert part.locator("a").count() == 0
    assert part.locator("pre.code-block").get_attribute("data-lang") is None  # a hostile info string is no lang
    expect(signed_in.locator("#signout")).to_be_visible()  # the /signout image was not fetched
