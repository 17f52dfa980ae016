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


def contains(text: str, term: str) -> bool:
    return pattern(term).search(text) is not None


def fts_query(terms: Sequence[str]) -> str:
    """An FTS5 query that every term must match, each as a literal string."""
    return " AND ".join('"' + term.replace('"', '""') + '"' for term in terms)


def like_pattern(term: str) -> str:
    """A ``LIKE`` pattern (escape ``\\``) matching ``term`` anywhere."""
    escaped = term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"
