"""A search term as each engine takes it, literally, and the test of a match that SQLite's answers
are checked with.

A term matches where it occurs as a substring, ignoring case as the engine folds it: on SQLite
as FTS5's trigram tokenizer folds (:mod:`.fold`; its index and the chunks it has not reached
yet answer alike), on PostgreSQL as its ``ILIKE`` does. A hit's occurrences are found with
Python's ``re.IGNORECASE`` (:func:`pattern`), which matches all that FTS5 folds alike but
U+FFFD, U+FFFE and U+FFFF to one another (and more: İ and ı to i, Cherokee ...). Every
character is literal: FTS5 gets each term as a quoted string (inner quotes doubled),
PostgreSQL a ``LIKE`` pattern with ``%``, ``_`` and ``\\`` escaped.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from .fold import FOLD, SAME

TRIGRAM = 3  # a term shorter than this has no trigram to look up: it is checked row by row


def indexed(term: str) -> bool:
    return len(term) >= TRIGRAM


@lru_cache(maxsize=256)
def pattern(term: str) -> re.Pattern[str]:
    return re.compile(re.escape(term), re.IGNORECASE)


@lru_cache(maxsize=256)
def fts_pattern(term: str) -> re.Pattern[str]:
    """``term`` as a pattern matching what FTS5 folds alike: each character that others fold
    the same as, a class of them all (``k``: ``[kKK]``), no flags."""
    return re.compile("".join(_same_as(c) for c in term))


def _same_as(c: str) -> str:
    same = SAME.get(FOLD.get(ord(c), ord(c)))
    return re.escape(c) if same is None else "[" + re.escape(same) + "]"


# The only characters outside ASCII that FTS5 folds to an ASCII letter (ſ K), and those letters.
FOLDS_TO_ASCII = tuple(chr(c) for c, to in FOLD.items() if c >= 0x80 and to < 0x80)
FOLDS_TO_ASCII_UTF8 = tuple(c.encode() for c in FOLDS_TO_ASCII)
FOLDED_TO = frozenset(chr(FOLD[ord(c)]) for c in FOLDS_TO_ASCII)


def contains(text: str, term: str) -> bool:
    """Whether ``term`` occurs in ``text`` ignoring case as FTS5 folds it, as :func:`fts_pattern`
    finds it (the quick path of :func:`contains_utf8` first)."""
    if term.isascii():
        if lowered(term) in text.encode().lower():
            return True
        if not (folded_to(term) and any(c in text for c in FOLDS_TO_ASCII)):
            return False
    return fts_pattern(term).search(text) is not None


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
    return fts_pattern(term).search(text.decode("utf-8", "surrogateescape")) is not None


@lru_cache(maxsize=256)
def folded_to(term: str) -> bool:
    """Whether ASCII ``term`` holds a letter that a character of :data:`FOLDS_TO_ASCII` matches."""
    return not FOLDED_TO.isdisjoint(term.lower())


def folds_to_ascii(text: bytes) -> bool:
    """Whether UTF-8 ``text`` holds one of :data:`FOLDS_TO_ASCII` (none in ASCII: the quickest scan first)."""
    return not text.isascii() and any(c in text for c in FOLDS_TO_ASCII_UTF8)


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
