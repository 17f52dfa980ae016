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

import math
import re
from collections.abc import Callable, Sequence
from functools import lru_cache
from importlib import resources

import orjson

from .chunks import CHUNK
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


PROBES = 24  # trigrams asked of the index at most (the match is checked whole after)
# The share of the chunks the trigrams asked may let through (were the trigrams independent, by
# the prior): the rarest are asked until together they narrow the chunks to about this.
NARROW_TO = 1e-8


def trigrams(term: str) -> list[str]:
    """The distinct trigrams of ``term``, in order."""
    return list(dict.fromkeys(term[i : i + TRIGRAM] for i in range(len(term) - TRIGRAM + 1)))


@lru_cache(maxsize=1)
def prior() -> tuple[int, dict[str, int]]:
    """How often each trigram (folded as FTS5 folds) occurs in real agent logs, and in how many
    code points: ``trigrams.json``, written by ``scripts/trigram_prior.py``. A trigram it does
    not name occurred fewer than 4 times."""
    data = orjson.loads(resources.files(__package__).joinpath("trigrams.json").read_bytes())
    counts: dict[str, int] = {}
    for n, grams in data["at_least"].items():
        counts.update((grams[i : i + TRIGRAM], int(n)) for i in range(0, len(grams), TRIGRAM))
    return int(data["code_points"]), counts


def seen(gram: str) -> int:
    """How often the prior saw ``gram`` (one it does not name: once)."""
    return prior()[1].get(gram.translate(FOLD), 1)


def share(gram: str) -> float:
    """The share of full chunks (:data:`~.chunks.CHUNK` code points) the prior says hold ``gram``
    at least once."""
    return -math.expm1(-CHUNK * seen(gram) / prior()[0])


def probes(terms: Sequence[str], usable: Callable[[str], bool] = lambda gram: True) -> list[str]:
    """The trigrams of ``terms`` (each of 3 code points or more) the index is asked for, rarest
    first: only the rarest. A trigram's index entry costs the engine what it holds, so asking a
    common one costs much and narrows little (``fla`` is in 31% of a 1 GB store's chunks, ``la3``
    in 0.2%). The rarest are asked until the prior says they let through about
    :data:`NARROW_TO` of the chunks, at most :data:`PROBES`; a trigram overlapping one already
    asked (``la3`` after ``fla``: they share ``la``) says little more, so those come after the
    rest. The index only narrows the rows: each one it lets through is checked for every term
    whole. ``usable``: the trigrams the engine can look up."""
    at: dict[str, set[int]] = {}
    for t, term in enumerate(terms):
        if indexed(term):
            for i in range(len(term) - TRIGRAM + 1):
                gram = term[i : i + TRIGRAM]
                if usable(gram):
                    at.setdefault(gram, set()).add(t * 1_000_000 + i)
    rarest = sorted(at, key=seen)
    chosen: list[str] = []
    covered: set[int] = set()  # the term positions the trigrams asked so far cover
    left = 1.0
    while rarest and left > NARROW_TO and len(chosen) < PROBES:
        apart = next((g for g in rarest if not any(p + d in covered for p in at[g] for d in range(TRIGRAM))), None)
        gram = apart if apart is not None else rarest[0]
        rarest.remove(gram)
        chosen.append(gram)
        covered.update(p + d for p in at[gram] for d in range(TRIGRAM))
        left *= share(gram)
    return chosen


def fts_query(terms: Sequence[str]) -> str:
    """An FTS5 query for rows holding the :func:`probes` of the terms, each a literal string (the
    index keeps no positions, so it cannot match a phrase: it narrows, :func:`contains` decides)."""
    grams = probes(terms)
    return " AND ".join('"' + gram.replace('"', '""') + '"' for gram in grams)


def like_pattern(term: str) -> str:
    """A ``LIKE`` pattern (escape ``\\``) matching ``term`` anywhere."""
    escaped = term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"
