"""Foldline: a transcript service for coding agents."""

__version__ = "0.1.0"

from .client import Client
from .errors import (
    BadRequest,
    Conflict,
    FoldlineError,
    Forbidden,
    Invalid,
    NotFound,
    PayloadTooLarge,
    TooManyRequests,
    TransportError,
    Unauthorized,
)

__all__ = [
    "BadRequest",
    "Client",
    "Conflict",
    "FoldlineError",
    "Forbidden",
    "Invalid",
    "NotFound",
    "PayloadTooLarge",
    "TooManyRequests",
    "TransportError",
    "Unauthorized",
    "__version__",
]
