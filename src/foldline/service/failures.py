"""What an unexpected failure means for the client: the one error a request gets when the
database (or anything under it) fails in a way no method foresaw."""

from __future__ import annotations

from ..errors import FoldlineError, InsufficientStorage, Unavailable
from ..store.diagnosis import refusal


def as_error(exc: BaseException) -> FoldlineError:
    """A 507 for a full disk, a 503 for a database that cannot answer now, a 500 for the rest."""
    if isinstance(exc, FoldlineError):
        return exc
    found = refusal(exc)
    if found == "full":
        return InsufficientStorage("the database's disk is full: this request changed nothing")
    if found == "busy":
        return Unavailable("the database cannot answer now; try again shortly")
    return FoldlineError("the server failed; the error is logged")
