"""Foldline: a transcript service for coding agents."""

__version__ = "0.1.0"

from .client import Client
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
