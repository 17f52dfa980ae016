"""Waiting for a condition, not for a time: the one helper every test that polls uses."""

from __future__ import annotations

import time
from collections.abc import Callable

POLL_SECONDS = 0.05


def eventually(check: Callable[[], bool], seconds: float = 10, what: str = "the condition did not come true") -> None:
    """Poll ``check`` until it holds; fail with ``what`` after ``seconds`` (a broken feature fails, it does not hang).

    Browser tests poll from Python too: the panel's CSP forbids the eval behind ``wait_for_function``.
    """
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(POLL_SECONDS)
