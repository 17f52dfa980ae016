"""Search: the query's terms, the hits in a matching chunk, and paging by cursor.

A query is words separated by white space and ``"quoted phrases"``; every term must occur in
the same chunk of one field (case-insensitive substring; each character literal). A phrase is a
``"`` at the start of a word, through the next ``"`` that ends a word; any other ``"`` is an
ordinary character. A hit is one occurrence of any term that starts in the chunk's own range,
with exact code-point offsets in its field. Hits come newest chunk first, then by offset.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import BadRequest
from ..registry import TextTools
from ..store import Found, TextRow
from ..store.chunks import OVERLAP
from ..store.terms import pattern

MAX_QUERY = 256  # code points; at most the chunks' overlap, so a match never outgrows a row
DEFAULT_LIMIT, MAX_LIMIT = 20, 100
SNIPPET = 80  # code points of context each side of a match
WORD = re.compile(r'"([^"]+)"(?=\s|$)|(\S+)')

assert MAX_QUERY <= OVERLAP

Json = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Cursor:
    chunk: int  # the chunk of the next hit
    skip: int  # hits of that chunk already sent


def parse_query(q: Any) -> list[str]:
    """The query's terms (case-insensitive duplicates dropped), or a 400 on ``q``."""
    if not isinstance(q, str) or not q.strip():
        raise BadRequest("'q' must be a non-empty search", where="q")
    if len(q) > MAX_QUERY:
        raise BadRequest(f"'q' is at most {MAX_QUERY} characters", where="q")
    if "\x00" in q or not _utf8(q):
        raise BadRequest("'q' holds a character that cannot be searched for", where="q")
    found: dict[str, str] = {}
    for match in WORD.finditer(q):
        term = match.group(1) if match.group(1) is not None else match.group(2)
        if term.strip():
            found.setdefault(term.casefold(), term)
    if not found:
        raise BadRequest("'q' must be a non-empty search", where="q")
    return list(found.values())


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def parse_limit(limit: Any) -> int:
    if limit is None:
        return DEFAULT_LIMIT
    if isinstance(limit, str) and limit.isascii() and limit.isdigit() and len(limit) <= 9:
        limit = int(limit)
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise BadRequest(f"'limit' is a whole number from 1 to {MAX_LIMIT}", where="limit")
    return limit


def encode_cursor(cursor: Cursor) -> str:
    return base64.urlsafe_b64encode(f"{cursor.chunk}.{cursor.skip}".encode()).decode().rstrip("=")


def parse_cursor(cursor: Any) -> Cursor | None:
    if cursor is None:
        return None
    bad = BadRequest("'cursor' must be a 'next' from a previous search", where="cursor")
    if not isinstance(cursor, str) or not cursor.isascii() or not 1 <= len(cursor) <= 64:
        raise bad
    try:
        chunk, skip = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode("ascii").split(".")
    except (ValueError, UnicodeDecodeError):
        raise bad from None
    if not (chunk.isdigit() and skip.isdigit() and len(chunk) <= 18 and len(skip) <= 9):
        raise bad
    return Cursor(int(chunk), int(skip))


def occurrences(row: TextRow, terms: list[str]) -> list[tuple[int, int]]:
    """``(start, end)`` in the chunk's text of each occurrence of a term that starts in the
    chunk's own range; none unless every term is in the chunk."""
    found: set[tuple[int, int]] = set()
    for term in terms:
        spans = [m.span() for m in pattern(term).finditer(row.text)]
        if not spans:
            return []
        found.update(span for span in spans if span[0] < row.owned)
    return sorted(found)


def drawn(tools: TextTools, tool: str | None) -> bool:
    """Whether a cut read sends this part cut when it has a stored cut (as the store decides)."""
    if tool is None or tool in tools.names:
        return True
    return tool not in tools.others and tool.startswith(tools.prefixes)


def hit(row: TextRow, start: int, end: int, tools: TextTools) -> Json:
    """One hit: where the match is (offsets in the field) and a snippet around it."""
    lo, hi = max(0, start - SNIPPET), min(len(row.text), end + SNIPPET)
    at, to = row.start + start, row.start + end
    hidden = row.shown is not None and drawn(tools, row.tool) and to > row.shown and at < row.length - row.shown
    return {
        "agent_id": row.agent_id,
        "call": row.call_id,
        "message_id": row.message_id,
        "part": row.idx,
        "field": row.field,
        "start": at,
        "end": to,
        "hidden": hidden,
        "role": row.role,
        "tool": row.tool,
        "title": row.title,
        "snippet": {"text": row.text[lo:hi], "start": start - lo, "end": end - lo},
    }


Fetch = Callable[[int | None, int], Found]  # (newest chunk id wanted, how many) → chunks


def page(
    fetch: Fetch, terms: list[str], limit: int, cursor: Cursor | None, tools: TextTools, keep: Callable[[TextRow], bool]
) -> Json:
    """``limit`` hits from ``cursor`` on, and the cursor of the next one (or ``None``).

    Chunks are read ``limit + 1`` at a time until ``limit + 1`` hits are in hand (a chunk may
    hold none of its own: its terms only in the overlap it shares with the next chunk). A fetch
    that ran out of time ends the page early: ``partial`` is true and ``next`` goes on from
    where the search stopped (a page may then hold fewer hits than ``limit``, or none).
    """
    hits: list[tuple[Cursor, Json]] = []
    upto = cursor.chunk if cursor else None
    stopped: int | None = None
    while len(hits) <= limit:
        found = fetch(upto, limit + 1)
        for row in found.rows:
            if not keep(row):
                continue
            skip = cursor.skip if cursor and row.id == cursor.chunk else 0
            spans = occurrences(row, terms)
            hits += [(Cursor(row.id, n), hit(row, *spans[n], tools)) for n in range(skip, len(spans))]
            if len(hits) > limit:
                break
        stopped = found.stopped
        if stopped is not None or len(found.rows) <= limit:
            break
        upto = found.rows[-1].id - 1
    if len(hits) > limit:
        following, partial = encode_cursor(hits[limit][0]), False
    elif stopped is not None:
        following, partial = encode_cursor(Cursor(stopped, 0)), True
    else:
        following, partial = None, False
    return {"hits": [h for _, h in hits[:limit]], "next": following, "partial": partial}


# -- slices ------------------------------------------------------------------------------


def parse_offset(value: Any, where: str) -> int:
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 18:
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise BadRequest(f"'{where}' is a whole number of code points, 0 or more", where=where)
    return value
