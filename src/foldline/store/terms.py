"""A search term as each engine takes it, literally, and the one test of a match that both the
engines' answers and the hits are checked with.

A term matches where it occurs as a substring, ignoring case (Python's ``re.IGNORECASE``, which
both engines' folding agrees with for the scripts that have case). Every character is literal:
FTS5 gets each term as a quoted string (inner quotes doubled), PostgreSQL a ``LIKE`` pattern
with ``%``, ``_`` and ``\\`` escaped.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

TRIGRAM = 3  # a term shorter than this has no trigram to look up: it is checked row by row


def indexed(term: str) -> bool:
    return len(term) >= TRIGRAM


@lru_cache(maxsize=256)
def pattern(term: str) -> re.Pattern[str]:
    return re.compile(re.escape(term), re.IGNORECASE)


# The only characters outside ASCII that ``re.IGNORECASE`` matches to an ASCII letter.
FOLDS_TO_ASCII = ("\u0130", "\u0131", "\u017f", "\u212a")  # İ ı ſ K (Kelvin)


FOLDS_TO_ASCII_UTF8 = tuple(c.encode() for c in FOLDS_TO_ASCII)


# The ASCII letters they match (those of a term without any of them match ASCII letters only).
FOLDED_TO = frozenset("iks")


def contains(text: str, term: str) -> bool:
    """Whether ``term`` occurs in ``text`` ignoring case, as :func:`pattern` finds it (the
    quick path of :func:`contains_utf8` first)."""
    if term.isascii():
        if lowered(term) in text.encode().lower():
            return True
        if not (folded_to(term) and any(c in text for c in FOLDS_TO_ASCII)):
            return False
    return pattern(term).search(text) is not None


def contains_utf8(text: bytes, term: str) -> bool:
    """:func:`contains` of a text given as its UTF-8 (as SQLite hands a chunk over, undecoded).

    An ASCII term is first looked for by ASCII's case folding over the bytes (whose bytes past
    ASCII never match ASCII ones): found there, it is a match. Not found, it is no match unless
    the term has a letter that one of :data:`FOLDS_TO_ASCII` matches and the text holds one;
    only then does the pattern decide. Most chunks a search reads hold no match: they cost one
    lowering and one search of their bytes."""
    if term.isascii():
        if lowered(term) in text.lower():
            return True
        if not (folded_to(term) and folds_to_ascii(text)):
            return False
    return pattern(term).search(text.decode("utf-8", "surrogateescape")) is not None


@lru_cache(maxsize=256)
def folded_to(term: str) -> bool:
    """Whether ASCII ``term`` holds a letter that a character of :data:`FOLDS_TO_ASCII` matches."""
    return not FOLDED_TO.isdisjoint(term.lower())


def folds_to_ascii(text: bytes) -> bool:
    """Whether UTF-8 ``text`` holds one of :data:`FOLDS_TO_ASCII`, by the quickest scans first:
    none in ASCII; İ ı ſ only where a 0xC4 or 0xC5 lead byte is (one byte is a ``memchr``)."""
    if text.isascii():
        return False
    dotted, dotless, long_s, kelvin = FOLDS_TO_ASCII_UTF8
    if (b"\xc4" in text or b"\xc5" in text) and (dotted in text or dotless in text or long_s in text):
        return True
    return kelvin in text


@lru_cache(maxsize=256)
def lowered(term: str) -> bytes:
    return term.lower().encode()


PROBES = 24  # trigrams of one term asked of the index at most (the match is checked whole after)


def trigrams(term: str) -> list[str]:
    """The distinct trigrams of ``term`` the index is asked for: all of them up to ``PROBES``,
    else ``PROBES`` spread evenly from its first to its last (the index only narrows the rows;
    the whole term is checked on each row it lets through)."""
    every = list(dict.fromkeys(term[i : i + TRIGRAM] for i in range(len(term) - TRIGRAM + 1)))
    if len(every) <= PROBES:
        return every
    step = (len(every) - 1) / (PROBES - 1)
    return [every[round(i * step)] for i in range(PROBES)]


def fts_query(terms: Sequence[str]) -> str:
    """An FTS5 query for rows holding every trigram of every term, each a literal string (the
    index keeps no positions, so it cannot match a phrase: it narrows, :func:`contains` decides)."""
    grams = dict.fromkeys(g for term in terms for g in trigrams(term))
    return " AND ".join('"' + gram.replace('"', '""') + '"' for gram in grams)


def like_pattern(term: str) -> str:
    """A ``LIKE`` pattern (escape ``\\``) matching ``term`` anywhere."""
    escaped = term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"
