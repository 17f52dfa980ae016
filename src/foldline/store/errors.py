"""The store's errors: a leaf, imported by every module of the store and importing none of them.

:mod:`.diagnosis` turns a driver's failure into a :class:`StoreError` a person can act on.
"""

from __future__ import annotations

from ..errors import Conflict, Unusable


class StoreError(Unusable):
    """The database cannot be opened, reached or written."""


class BadURL(StoreError, ValueError):
    """A database URL Foldline will not guess at (``postgresql:/oops``, ``mysql://…``)."""


class PartChanged(Conflict):
    """A part read whole in short reads was written again between two of them: what was sent
    so far is of the old version, so the response ends short (its length said more)."""

    def __init__(self) -> None:
        super().__init__("the part was written again while it was sent: read it again")


class PageTooBig(Exception):
    """A page read with a ``most`` (what the event loop may read itself) holds more bytes: read
    it the ordinary way, in a thread."""


class StaleWrite(Exception):
    """A compare-and-set write found the message changed since it was read."""


def need_driver() -> StoreError:
    return StoreError(
        "PostgreSQL needs its driver, which is not installed",
        "install it: scripts/setup --postgres in a clone of Foldline, or pip install 'foldline[postgres]'",
    )
