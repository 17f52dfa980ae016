"""Bounded answers: the size an agent reads at most in one answer, and the cursor of a transcript
window that knows which version of the transcript it was made on."""

from __future__ import annotations

from typing import Any

import orjson

from ..errors import BadRequest, Conflict
from ..wire import parse_before

ANSWER_MAX = 64 * 1024  # characters of JSON text in one answer, at most
SLICE_MAX = 60_000  # code points of a field in one read_part answer (the rest of the answer is small)
FIELD_HEAD = 2_000  # code points of each big field shown when a part is too big to send whole
HIT_CONTEXT = 2_000  # code points either side of a hit in the read_part arguments a hit suggests


def text_of(answer: Any) -> str:
    """An answer as the agent reads it: compact JSON, non-ASCII as it is."""
    return orjson.dumps(answer).decode()


def fits(answer: Any) -> bool:
    return len(text_of(answer)) <= ANSWER_MAX


def window_cursor(before: str, seq: int) -> str:
    """The cursor of the window before message ``before`` of a transcript at write ``seq``."""
    return f"{before}.{seq}"


def parse_window_cursor(cursor: Any) -> tuple[str, int]:
    """``(before, seq)`` of a cursor :func:`window_cursor` made; anything else is a 400."""
    bad = BadRequest("'before' must be a 'next' from a previous read_transcript", where="before")
    if not isinstance(cursor, str) or cursor.count(".") != 1:
        raise bad
    before, seq = cursor.split(".")
    if not (seq.isascii() and seq.isdigit() and len(seq) <= 10):
        raise bad
    try:
        parse_before(before)
    except BadRequest:
        raise bad from None
    return before, int(seq)


def stale(made: int, now: int) -> Conflict:
    return Conflict(
        f"the transcript changed since this cursor was made (at write {made}, now {now}): the window "
        "it named may have moved; read_transcript again without 'before' for the newest messages",
        where="before",
    )
