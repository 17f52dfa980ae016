"""Live changes: who is waiting on which conversation, and the server-sent event stream.

A write in this process wakes its followers at once. On PostgreSQL, a write by another process
(another ``foldline serve``, ``foldline import --watch``) wakes them through ``LISTEN``/``NOTIFY``
(``Transcripts.listen``). On SQLite, which has no such notice, those writes are found by a poll
every ``poll_seconds``, one indexed query per follower; the poll also runs on PostgreSQL, as a
safety net while its notice connection is being made again.
"""

from __future__ import annotations

import asyncio
import threading
from collections import defaultdict
from collections.abc import AsyncIterator, Callable
from typing import Any

import orjson
from starlette.concurrency import run_in_threadpool

HEARTBEAT_SECONDS = 15.0


class Hub:
    """Wakes the event streams of a conversation when this process writes to it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiters: dict[str, set[tuple[asyncio.AbstractEventLoop, asyncio.Event]]] = defaultdict(set)

    def notify(self, conversation_id: str) -> None:
        with self._lock:
            waiters = list(self._waiters.get(conversation_id, ()))
        for loop, event in waiters:
            loop.call_soon_threadsafe(event.set)

    async def wait(self, conversation_id: str, timeout: float) -> None:
        entry = (asyncio.get_running_loop(), asyncio.Event())
        with self._lock:
            self._waiters[conversation_id].add(entry)
        try:
            await asyncio.wait_for(entry[1].wait(), timeout)
        except TimeoutError:
            pass
        finally:
            with self._lock:
                self._waiters[conversation_id].discard(entry)
                if not self._waiters[conversation_id]:
                    del self._waiters[conversation_id]


def frame(seq: int, message: dict[str, Any]) -> bytes:
    return b"id: %d\nevent: message\ndata: " % seq + orjson.dumps(message) + b"\n\n"


async def stream(
    changes: Callable[[int], Any],
    wait: Callable[[float], Any],
    since: int,
    disconnected: Callable[[], Any],
    poll_seconds: float,
) -> AsyncIterator[bytes]:
    """Send every message written after ``since`` in its cut form, then follow."""
    quiet, opened = 0.0, False
    while not await disconnected():
        batch = await run_in_threadpool(changes, since)
        if not opened:  # sent after the first look, so a client that sees it misses nothing later
            opened = True
            yield b"retry: 2000\n\n"
        for seq, message in batch:
            since = seq
            yield frame(seq, message)
        if batch:
            quiet = 0.0
        elif quiet >= HEARTBEAT_SECONDS:
            quiet = 0.0
            yield b": still here\n\n"
        await wait(poll_seconds)
        quiet += poll_seconds
