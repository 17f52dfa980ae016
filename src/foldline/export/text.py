"""Text in pieces, as both documents need it: the longest run of backticks (a Markdown fence
must be longer), and HTML escaping with the redaction marks drawn, across pieces' edges."""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Iterator

RUN = re.compile(r"`+")
MARKER = re.compile(r"\[REDACTED:([a-z0-9][a-z0-9-]{0,63})\]")
MARKER_MAX = 80  # code points: a marker is never longer, so a '[' further back than this starts none


def longest_run(pieces: Iterable[str]) -> int:
    """The longest run of backticks in the text, a run across two pieces counted whole."""
    longest = carry = 0
    for piece in pieces:
        if not piece:
            continue
        for found in RUN.finditer(piece):
            n = found.end() - found.start() + (carry if found.start() == 0 else 0)
            longest = max(longest, n)
        trailing = len(piece) - len(piece.rstrip("`"))
        carry = carry + trailing if trailing == len(piece) else trailing
    return longest


def one_line(text: str, most: int = 200) -> str:
    """A title or label on one line: whitespace runs as one space, at most ``most`` code points."""
    return " ".join(text.split())[:most]


def escaped(pieces: Iterable[str]) -> Iterator[str]:
    """The text escaped for HTML, each redaction marker drawn as a mark; a marker cut by two
    pieces' edge is held back until its end has come."""
    held = ""
    for piece in pieces:
        text = held + piece
        cut = text.rfind("[")
        if cut >= 0 and "]" not in text[cut:] and len(text) - cut < MARKER_MAX:
            text, held = text[:cut], text[cut:]
        else:
            held = ""
        if text:
            yield marked(html.escape(text))
    if held:
        yield marked(html.escape(held))


def marked(escaped_text: str) -> str:
    """Redaction markers in escaped text drawn as a mark saying what kind of secret was removed
    (escaping leaves a marker's characters as they are)."""
    return MARKER.sub(
        lambda m: f'<span class="redacted" title="a secret was removed here ({m.group(1)})">{m.group(0)}</span>',
        escaped_text,
    )
