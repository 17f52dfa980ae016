"""The cut at unit level: head, tail and size are exact for any text; nothing under the bound is cut."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from foldline.cut import BOUND, candidate, cut_text, output_text

# Any code point except lone surrogates (which no UTF-8 text can hold), astral ones included.
CHARS = st.characters(blacklist_categories=["Cs"])
ASTRAL = st.characters(min_codepoint=0x10000, max_codepoint=0x10FFFF, blacklist_categories=["Cs", "Cn"])


@st.composite
def long_text(draw: st.DrawFn, chars: st.SearchStrategy[str] = CHARS) -> str:
    """Text over the bound: random ends around a random filler, so head and tail edges vary."""
    head = draw(st.text(chars, max_size=3000))
    tail = draw(st.text(chars, max_size=3000))
    filler = draw(st.text(chars, min_size=1, max_size=8))
    extra = draw(st.integers(min_value=1, max_value=BOUND))
    missing = BOUND + extra - len(head) - len(tail)
    return head + filler * max(1, -(-missing // len(filler))) + tail


@settings(max_examples=60, deadline=None)
@given(long_text())
def test_head_tail_and_bytes_are_exact(value: str) -> None:
    cut = cut_text("output", value)
    assert cut is not None
    assert cut.head == value[:2048] and len(cut.head) == 2048
    assert cut.tail == value[-2048:] and len(cut.tail) == 2048
    assert cut.bytes == len(value.encode("utf-8"))
    assert cut.field == "output"


@settings(max_examples=40, deadline=None)
@given(long_text(ASTRAL))
def test_astral_characters_are_never_split(value: str) -> None:
    cut = cut_text("text", value)
    assert cut is not None
    assert len(cut.head) == 2048 and len(cut.tail) == 2048
    assert cut.head.encode("utf-8").decode("utf-8") == value[:2048]
    assert cut.bytes == 4 * len(value) == len(value.encode("utf-8"))


@settings(max_examples=60, deadline=None)
@given(st.text(CHARS, max_size=BOUND))
def test_nothing_at_or_under_the_bound_is_cut(value: str) -> None:
    assert cut_text("output", value) is None


def test_the_bound_itself_is_kept_whole() -> None:
    assert cut_text("output", "é" * BOUND) is None
    cut = cut_text("output", "é" * (BOUND + 1))
    assert cut is not None and cut.bytes == 2 * (BOUND + 1)


def test_a_non_string_output_is_cut_by_its_indented_json() -> None:
    value = {"files": ["ünïcode"] * 2000}
    assert output_text(value) == json.dumps(value, indent=2, ensure_ascii=False)
    found = candidate({"type": "tool-bash", "state": "output-available", "input": {}, "output": value})
    assert found == ("output", output_text(value))


def test_a_text_part_is_a_candidate_whose_bound_the_service_chooses() -> None:
    assert candidate({"type": "text", "text": "x" * 9000}) == ("text", "x" * 9000)


def test_error_text_is_the_candidate_of_a_failed_tool() -> None:
    part = {"type": "dynamic-tool", "toolName": "mcp__x", "state": "output-error", "errorText": "boom"}
    assert candidate(part) == ("errorText", "boom")


def test_parts_without_a_big_field_have_no_candidate() -> None:
    assert candidate({"type": "tool-bash", "state": "input-available", "input": {"command": "x"}}) is None
