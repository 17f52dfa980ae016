"""Values as they come off the wire, each parsed by one function that every layer calls: the
page fast path (:class:`~foldline.pagecache.PageReads`), the routes' parameter types and the
service. A value refused here is refused the same way wherever it arrives.
"""

from __future__ import annotations

from collections.abc import Iterable

from .errors import BadRequest, NotFound

SEQ_MAX = 2**31 - 1  # positions and seqs are 32-bit INTEGER columns on every backend
PAGE_LIMIT_MAX = 1000  # messages a page read may ask for (`limit`)
INDEX_DIGITS = 9  # a part index has at most this many digits
BEFORE_MESSAGE = "'before' must be a cursor from a previous page's 'next'"


def is_digits(text: str, most: int) -> bool:
    """Only ASCII digits, 1 to ``most`` of them (no sign, space, ``_``, or other scripts' digits)."""
    return text.isascii() and text.isdigit() and len(text) <= most


def parse_counter(text: str, where: str, message: str) -> int:
    """A position or seq from a query string or header: within the 32-bit range every backend keeps."""
    if not is_digits(text, 10) or int(text) > SEQ_MAX:
        raise BadRequest(message, where=where)
    return int(text)


def parse_before(before: str | None) -> int | None:
    """A page's ``before``: a previous page's ``next`` (a message position), or None."""
    return None if before is None else parse_counter(before, "before", BEFORE_MESSAGE)


def parse_page_limit(limit: str) -> int:
    """A page's ``limit``: 1 to :data:`PAGE_LIMIT_MAX` messages."""
    if not is_digits(limit, len(str(PAGE_LIMIT_MAX))) or not 1 <= int(limit) <= PAGE_LIMIT_MAX:
        raise BadRequest(f"'limit' is a whole number from 1 to {PAGE_LIMIT_MAX}", where="limit")
    return int(limit)


def parse_index(index: str | int) -> int:
    """A part's index: one spelling of each (``"00"`` is not ``"0"``); any other is the one not-found."""
    text = str(index)
    if not is_digits(text, INDEX_DIGITS) or text != str(int(text)):
        raise NotFound()
    return int(text)


def bearer_token(authorizations: Iterable[str]) -> str | None:
    """The bearer token of a request's ``Authorization`` headers (each given as sent), or None
    when there is none; more than one header is a 400 (which one counts would be a guess)."""
    found = list(authorizations)
    if len(found) > 1:
        raise BadRequest("send one Authorization header", where="authorization")
    if not found:
        return None
    scheme, _, credentials = found[0].partition(" ")
    token = credentials.strip()
    return token if scheme.lower() == "bearer" and token else None
