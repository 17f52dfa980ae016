"""Foldline: a transcript service for coding agents."""

import typing

__version__ = "0.1.0"

from .errors import (
    BadRequest,
    Conflict,
    FoldlineError,
    Forbidden,
    InsufficientStorage,
    Invalid,
    NotFound,
    PayloadTooLarge,
    TooManyRequests,
    TransportError,
    Unauthorized,
    Unavailable,
)

if typing.TYPE_CHECKING:
    from .client import Client


def __getattr__(name: str) -> typing.Any:
    # The client (and httpx under it) loads on first use: the command line and the server, which
    # import this package, start without it.
    if name == "Client":
        from .client import Client

        globals()["Client"] = Client
        return Client
    raise AttributeError(f"module 'foldline' has no attribute {name!r}")


__all__ = [
    "BadRequest",
    "Client",
    "Conflict",
    "FoldlineError",
    "Forbidden",
    "InsufficientStorage",
    "Invalid",
    "NotFound",
    "PayloadTooLarge",
    "TooManyRequests",
    "TransportError",
    "Unauthorized",
    "Unavailable",
    "__version__",
]
