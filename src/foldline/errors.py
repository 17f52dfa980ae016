"""One error tree for the service and the client.

    FoldlineError
    ├── BadRequest          400  malformed JSON, invalid Unicode, a query that makes no sense
    ├── Unauthorized        401  no token, or one that is not known
    ├── Forbidden           403  a member of the workspace writing to an agent it does not own
    ├── NotFound            404  one answer for every cause, so it reveals nothing
    ├── Conflict            409  a turn-end that kept racing the agent's own writes
    ├── PayloadTooLarge     413  a body over the configured limit
    ├── Invalid             422  the write door refused the message; ``where`` names the field
    ├── TooManyRequests     429  an account past its cap of open event streams or whole-part reads
    ├── Unavailable         503  the database cannot answer now (unreachable, too slow, busy): try again
    ├── InsufficientStorage 507  the database's disk is full: nothing of the request was stored
    └── TransportError      ---  (client only) the server could not be reached

    Unusable                     what keeps Foldline from running here (a database it cannot
                                 open, an address it cannot serve on): never sent over HTTP

The server turns each into ``{"error": {"code", "message", "where"?}}`` in one place
(:func:`error_body`); the client turns that body back into the same class.
A message never echoes the payload.
"""

from __future__ import annotations

from typing import Any


class FoldlineError(Exception):
    status: int = 500
    code: str = "internal"

    def __init__(self, message: str = "", where: str | None = None) -> None:
        super().__init__(message or self.code)
        self.message = message or self.code
        self.where = where


class BadRequest(FoldlineError):
    status = 400
    code = "bad_request"


class Unauthorized(FoldlineError):
    status = 401
    code = "unauthorized"

    def __init__(self, message: str = "a valid bearer token is required", where: str | None = None):
        super().__init__(message, where)


class Forbidden(FoldlineError):
    status = 403
    code = "forbidden"


class NotFound(FoldlineError):
    """``what`` says what was not found (``account 0f3c…``) for the operator's command line;
    it is never sent over HTTP."""

    status = 404
    code = "not_found"

    def __init__(self, message: str = "not found", where: str | None = None, *, what: str | None = None) -> None:
        # The message is fixed on purpose: a not-found must read the same whatever its cause.
        super().__init__("not found")
        self.what = what


class Conflict(FoldlineError):
    status = 409
    code = "conflict"


class PayloadTooLarge(FoldlineError):
    status = 413
    code = "too_large"


class Invalid(FoldlineError):
    status = 422
    code = "invalid"


class TooManyRequests(FoldlineError):
    status = 429
    code = "too_many_requests"


class Unavailable(FoldlineError):
    """Sent with ``Retry-After: RETRY_SECONDS``."""

    status = 503
    code = "unavailable"


RETRY_SECONDS = 2  # what a 503's Retry-After asks a client to wait


class InsufficientStorage(FoldlineError):
    status = 507
    code = "insufficient_storage"


class TransportError(FoldlineError):
    code = "transport"


BY_CODE: dict[str, type[FoldlineError]] = {
    cls.code: cls
    for cls in (
        BadRequest,
        Unauthorized,
        Forbidden,
        NotFound,
        Conflict,
        PayloadTooLarge,
        Invalid,
        TooManyRequests,
        Unavailable,
        InsufficientStorage,
    )
}


class Unusable(Exception):
    """What keeps Foldline from running here, said so a person can act on it: ``problem`` names
    its target (a file, a URL without its password, an address) and ``fix`` the likely remedy."""

    def __init__(self, problem: str, fix: str = "") -> None:
        super().__init__(problem + (f"\n  {fix}" if fix else ""))
        self.problem = problem
        self.fix = fix

    def lines(self) -> str:
        return str(self)


def error_body(exc: FoldlineError) -> dict[str, Any]:
    error: dict[str, Any] = {"code": exc.code, "message": exc.message}
    if exc.where:
        error["where"] = exc.where
    return {"error": error}


def from_body(status: int, body: Any) -> FoldlineError:
    """The client's side of :func:`error_body`."""
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        return FoldlineError(f"unexpected response ({status})")
    cls = BY_CODE.get(str(error.get("code")), FoldlineError)
    exc = cls(str(error.get("message", "")), error.get("where"))
    exc.status = status
    return exc
