"""Search: the query's terms, the hits in a matching chunk, and paging by cursor.

A query is words separated by white space and ``"quoted phrases"``; every term must occur in
the same chunk of one field (case-insensitive substring; each character literal). A phrase is a
``"`` at the start of a word, through the next ``"`` that ends a word; any other ``"`` is an
ordinary character. A match is one occurrence of any term that starts in the chunk's own range,
with exact code-point offsets in its field. A result (``.results``) is one field of one part
with its matches; results come newest chunk first.
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
from .results import Place, place_of

MAX_QUERY = 256  # code points; at most the chunks' overlap, so a match never outgrows a row
DEFAULT_LIMIT, MAX_LIMIT = 20, 100
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


Fetch = Callable[[int | None, int], Found]  # (newest chunk id wanted, how many) → chunks
FETCH_MOST = 256  # chunks a page asks for at once, at most (it starts at limit + 1 and doubles)


def page(
    fetch: Fetch, terms: list[str], limit: int, cursor: Cursor | None, tools: TextTools, keep: Callable[[TextRow], bool]
) -> Json:
    """``limit`` results from ``cursor`` on (one field of one part each, with every match the
    page read in it: :mod:`.results`), and the cursor of the next match (or ``None``).

    Chunks are read newest first, ``limit + 1`` at first and twice as many each time after, until
    the match that starts result ``limit + 1`` is in hand (a field's chunks are read together: a
    result is whole unless it reached ``MATCHES_MOST``, or the page has read ``chunks_most``
    chunks with matches and the field goes on into another: the page ends there, the result
    says ``more`` and the next page goes on in the same field; so a common word's first page
    reads about as much as one of one match per chunk). A chunk may hold no match of its own (its terms only in the
    overlap it shares with the next chunk). The cursor names a match (a chunk, and how many of
    its matches were sent), so paging goes per match: none is repeated or skipped. A fetch that
    ran out of time ends the page early: ``partial`` is true and ``next`` goes on from where the
    search stopped (a page may then hold fewer results than ``limit``, or none, and its last
    result go on in the next page).
    """
    places: list[Place] = []
    read = [0]  # chunks with matches taken into the page
    upto = cursor.chunk if cursor else None
    following: Cursor | None = None
    stopped: int | None = None
    size = limit + 1
    while following is None:
        found = fetch(upto, size)
        for row in found.rows:
            if not keep(row):
                continue
            following = _take(row, terms, cursor, places, read, limit)
            if following is not None:
                break
        stopped = found.stopped
        if following is not None or stopped is not None or len(found.rows) < size:
            break
        upto = found.rows[-1].id - 1
        size = min(size * 2, FETCH_MOST)
    results = [place.json(tools) for place in places]
    if following is not None:
        return {"hits": results, "next": encode_cursor(following), "partial": False}
    if stopped is not None:
        return {"hits": results, "next": encode_cursor(Cursor(stopped, 0)), "partial": True}
    return {"hits": results, "next": None, "partial": False}


def _take(
    row: TextRow, terms: list[str], cursor: Cursor | None, places: list[Place], read: list[int], limit: int
) -> Cursor | None:
    """Add the chunk's matches (from the cursor's, in its chunk) to the results; the cursor of
    the first match that does not fit this page, if one does not. ``read`` counts the chunks of
    the page that gave matches: once ``chunks_most`` were read, a field that goes on into one
    more chunk ends the page there (its result says ``more``)."""
    skip = cursor.skip if cursor and row.id == cursor.chunk else 0
    spans = occurrences(row, terms)
    if skip >= len(spans):
        return None
    key = place_of(row)
    if places and places[-1].key == key and read[0] >= chunks_most(limit):  # read its share
        places[-1].more = True
        return Cursor(row.id, skip)
    if not places or places[-1].key != key:
        if len(places) == limit:
            return Cursor(row.id, skip)
        places.append(Place(key))
    place = places[-1]
    read[0] += 1
    for n in range(skip, len(spans)):
        if place.full:
            place.more = True
            return Cursor(row.id, n)
        place.add(row, *spans[n])
    return None


def chunks_most(limit: int) -> int:
    """The chunks with matches one page reads at most: as many as a page of one match each needs."""
    return limit + 1


# -- slices ------------------------------------------------------------------------------


def parse_offset(value: Any, where: str) -> int:
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 18:
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise BadRequest(f"'{where}' is a whole number of code points, 0 or more", where=where)
    return value
