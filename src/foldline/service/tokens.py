"""Tokens: how they are made, stored (as hashes) and remembered for a few seconds, and the time stamps they carry."""

from __future__ import annotations

import hashlib
import secrets
import threading
import time
from datetime import UTC, datetime, timedelta

TOKEN_CACHE_MAX = 10_000  # tokens remembered at once (past it, the cache starts again empty)


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def later(stamp: str, delta: timedelta) -> str:
    moment = datetime.fromisoformat(stamp.replace("Z", "+00:00")) + delta
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def minutes_before(stamp: str, minutes: int) -> str:
    return later(stamp, timedelta(minutes=-minutes))


def new_token() -> str:
    return "fl_" + secrets.token_urlsafe(32)


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()


class TokenCache:
    """Token hash -> (account id, monotonic time it is good until), at most :data:`TOKEN_CACHE_MAX`."""

    def __init__(self) -> None:
        self._tokens: dict[str, tuple[str, float]] = {}
        self._lock = threading.Lock()

    def get(self, key: str) -> str | None:
        known = self._tokens.get(key)
        return known[0] if known is not None and known[1] > time.monotonic() else None

    def put(self, key: str, account: str, seconds: float) -> None:
        with self._lock:
            if len(self._tokens) >= TOKEN_CACHE_MAX:
                self._tokens.clear()
            self._tokens[key] = (account, time.monotonic() + seconds)

    def clear(self) -> None:
        with self._lock:
            self._tokens.clear()
