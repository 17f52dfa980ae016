"""The export's text in pieces (foldline.export.text, .markdown): a run of backticks and a
redaction marker cut by two pieces' edge count as one; fences no content closes."""

from __future__ import annotations

import html
import re

from hypothesis import given
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from foldline.export.markdown import code, fenced
from foldline.export.text import escaped, longest_run

PIECES = st.lists(st.text(alphabet="`a\n[]REDACTED:-gthub<>&\"'", max_size=40), max_size=8)


@given(PIECES)
def test_the_longest_run_is_that_of_the_joined_text(pieces: list[str]) -> None:
    runs = re.findall("`+", "".join(pieces))
    assert longest_run(pieces) == max(map(len, runs), default=0)


@given(PIECES)
def test_escaping_in_pieces_is_escaping_the_whole(pieces: list[str]) -> None:
    assert "".join(escaped(pieces)) == "".join(escaped(["".join(pieces)]))
    unmarked = "".join(escaped(pieces)).replace('<span class="redacted" title="a secret was removed here (', "")
    assert "<" not in unmarked.replace("</span>", "")  # nothing but the mark is markup


def test_a_marker_cut_by_two_pieces_is_one_mark() -> None:
    got = "".join(escaped(["token [REDACTED:git", "hub-token] <b>"]))
    assert got == ('token <span class="redacted" title="a secret was removed here (github-token)">'
                   "[REDACTED:github-token]</span> &lt;b&gt;")  # fmt: skip
    assert "".join(escaped(["a [ b", " c"])) == html.escape("a [ b c")


@given(st.lists(st.text(alphabet="`~ \na", max_size=30), min_size=1, max_size=6))
def test_no_content_closes_its_fence(pieces: list[str]) -> None:
    joined = "".join(pieces)
    document = "".join(fenced(lambda: iter(pieces), "text")) + "after\n"
    blocks = [t for t in MarkdownIt("commonmark").parse(document) if t.type == "fence"]
    assert len(blocks) == 1
    assert blocks[0].content == (joined if joined.endswith("\n") or not joined else joined + "\n")


def test_a_code_span_holds_its_backticks() -> None:
    for name in ("bash", "a`b", "``x", "mcp__x__`"):
        rendered = MarkdownIt("commonmark").renderInline(code(name))
        assert rendered == f"<code>{html.escape(name, quote=False)}</code>", name
