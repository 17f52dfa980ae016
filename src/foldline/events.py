"""Live changes: who is waiting on which conversation, and the server-sent event stream.

A write in this process wakes its followers at once. On PostgreSQL, a write by another process
(another ``foldline serve``, ``foldline import --watch``) wakes them through ``LISTEN``/``NOTIFY``
(``Transcripts.listen``). On SQLite, which has no notices, the store watches its write-ahead
log and says that *something* was written; the :class:`Hub` then looks at once at the write
counters of every followed conversation, in one query for the whole process however many streams
are open, and wakes the followers of those that moved. It also looks every ``poll_seconds``, in
case a notice was lost. An idle stream costs nothing but its socket until its next heartbeat.

A stream sends what it owes in batches (a catch-up of 100,000 messages starts at once and never
holds them all), and checks its follower's access each time it wakes and at every heartbeat, so
a revoked token or a removed member stops receiving within one heartbeat (at once on a
revocation notice, :meth:`Hub.notify_all`). A share link's stream asks every second, so an
expired share, or one revoked by a process whose notice does not reach this one (SQLite), ends
within a second or two.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections import defaultdict
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

import orjson
from starlette.concurrency import run_in_threadpool

from .limits import Slots
from .service import Transcripts
from .store import EVERYONE, SOMETHING

HEARTBEAT_SECONDS = 15.0
# Messages sent per look at the store: a catch-up's first look reads few, so its first event
# comes at once; each look after reads twice as many, up to BATCH.
FIRST_BATCH, BATCH = 20, 200

log = logging.getLogger("foldline")


class Hub:
    """Wakes the event streams of a conversation when it changes."""

    def __init__(self, seqs: Callable[[list[str]], dict[str, int]] | None = None, poll_seconds: float = 1.0) -> None:
        self._lock = threading.Lock()
        self._waiters: dict[str, set[tuple[asyncio.AbstractEventLoop, asyncio.Event]]] = defaultdict(set)
        self._seqs = seqs
        self._poll_seconds = poll_seconds
        self._known: dict[str, int] = {}
        self._look: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def notify(self, conversation_id: str) -> None:
        if conversation_id == EVERYONE:
            self.notify_all()
            return
        if conversation_id == SOMETHING:
            self.look_now()
            return
        with self._lock:
            waiters = list(self._waiters.get(conversation_id, ()))
        for loop, event in waiters:
            loop.call_soon_threadsafe(event.set)

    def notify_all(self) -> None:
        """Wake every stream (after a revocation, so each checks its access again)."""
        with self._lock:
            waiters = [w for group in self._waiters.values() for w in group]
        for loop, event in waiters:
            loop.call_soon_threadsafe(event.set)

    async def wait(self, conversation_id: str, timeout: float) -> bool:
        """Wait until the conversation changes (True) or ``timeout`` passes (False)."""
        entry = (asyncio.get_running_loop(), asyncio.Event())
        with self._lock:
            self._waiters[conversation_id].add(entry)
        try:
            await asyncio.wait_for(entry[1].wait(), timeout)
            return True
        except TimeoutError:
            return False
        finally:
            with self._lock:
                self._waiters[conversation_id].discard(entry)
                if not self._waiters[conversation_id]:
                    del self._waiters[conversation_id]

    def followed(self) -> list[str]:
        with self._lock:
            return list(self._waiters)

    def look_now(self) -> None:
        """Make the poller look at once (from any thread)."""
        if self._loop is not None and self._look is not None:
            self._loop.call_soon_threadsafe(self._look.set)

    async def poll(self) -> None:
        """Until cancelled: a look at every followed conversation's write counter, when told that
        something was written and at least once per interval."""
        if self._seqs is None:
            return
        self._loop, self._look = asyncio.get_running_loop(), asyncio.Event()
        while True:
            try:
                await asyncio.wait_for(self._look.wait(), self._poll_seconds)
            except TimeoutError:
                pass
            self._look.clear()
            ids = self.followed()
            if not ids:
                self._known.clear()
                continue
            try:
                seqs = await run_in_threadpool(self._seqs, ids)
            except Exception:  # a failed look must not end live follow; the next one tries again
                log.warning("live follow: looking for other processes' writes failed", exc_info=True)
                continue
            self._wake_moved(seqs)

    def _wake_moved(self, seqs: dict[str, int]) -> None:
        # A conversation seen for the first time is woken once: its follower then reads what it
        # may have missed between its last look and this one.
        # One no longer there (deleted by another process) is woken once too: its follower
        # learns it is gone and its stream ends.
        for conversation_id, seq in seqs.items():
            if self._known.get(conversation_id) != seq:
                self.notify(conversation_id)
        for conversation_id in self._known.keys() - seqs.keys():
            self.notify(conversation_id)
        self._known = dict(seqs)


def frame(seq: int, message: dict[str, Any]) -> bytes:
    return b"id: %d\nevent: message\ndata: " % seq + orjson.dumps(message) + b"\n\n"


def deleted_frame(agent_id: str, call: str | None) -> bytes:
    """The last event of a stream whose conversation was deleted."""
    return b"event: deleted\ndata: " + orjson.dumps({"agent_id": agent_id, "call": call}) + b"\n\n"


async def stream(
    changes: Callable[[int, int], Sequence[tuple[int, dict[str, Any]]]],
    wait: Callable[[float], Awaitable[bool]],
    since: int,
    disconnected: Callable[[], Awaitable[bool]],
    allowed: Callable[[], bool],
    batch: int = BATCH,
    check_seconds: float = HEARTBEAT_SECONDS,
    gone: Callable[[], bytes | None] = lambda: None,
) -> AsyncIterator[bytes]:
    """Send every message written after ``since`` in its cut form, then follow.

    ``changes(seq, n)`` returns at most ``n`` messages after ``seq`` (``n`` grows from
    ``FIRST_BATCH`` to ``batch``); ``allowed()`` says whether the follower may still read the
    conversation (the stream ends when it may not, with the event ``gone()`` gives when there is
    one: the conversation was deleted), asked each time the stream wakes and at least every
    ``check_seconds``; a heartbeat goes every ``HEARTBEAT_SECONDS`` of quiet.
    """
    async for chunk in _follow(changes, wait, since, disconnected, allowed, batch, check_seconds, gone):
        yield chunk


def follow(
    t: Transcripts,
    hub: Hub,
    streams: Slots,
    account: str,
    agent_id: str,
    call: str | None,
    *,
    since: int,
    allowed: Callable[[], bool],
    disconnected: Callable[[], Awaitable[bool]],
    slot: str | None = None,
    check_seconds: float = HEARTBEAT_SECONDS,
) -> AsyncIterator[bytes]:
    """The event stream of a conversation ``account`` may read (else the one not-found, now):
    its changes from ``since``, woken by ``hub``, in a slot of ``streams`` counted against
    ``slot`` (default: the account; a 429 now when none is left; taken now and given back when
    the stream ends, is closed, or is dropped unstarted), ending once ``allowed()`` says no,
    which it is asked each time it wakes and at least every ``check_seconds``."""
    conv = t.conversation(account, agent_id, call)
    holder = account if slot is None else slot
    streams.acquire(holder)  # taken now, atomically: a refusal can still be sent
    body = stream(
        lambda seq, n: t.changes(conv, seq, n),
        lambda timeout: hub.wait(conv.id, timeout),
        since,
        disconnected,
        allowed,
        check_seconds=check_seconds,
        gone=lambda: deleted_frame(conv.parent_id or conv.id, conv.call_id) if t.deleted(conv.id) else None,
    )
    return Held(body, lambda: streams.release(holder))


class Held:
    """An event stream holding its slot until it ends, is closed, or is dropped before it started
    (an async generator that never started runs no ``finally``)."""

    def __init__(self, body: AsyncIterator[bytes], release: Callable[[], None]) -> None:
        self._body, self._release = body, release
        self._held = True

    def __aiter__(self) -> Held:
        return self

    async def __anext__(self) -> bytes:
        try:
            return await self._body.__anext__()
        except BaseException:
            self._free()
            raise

    async def aclose(self) -> None:
        try:
            await self._body.aclose()  # type: ignore[attr-defined]
        finally:
            self._free()

    def _free(self) -> None:
        if self._held:
            self._held = False
            self._release()

    def __del__(self) -> None:
        self._free()


async def _follow(
    changes: Callable[[int, int], Sequence[tuple[int, dict[str, Any]]]],
    wait: Callable[[float], Awaitable[bool]],
    since: int,
    disconnected: Callable[[], Awaitable[bool]],
    allowed: Callable[[], bool],
    batch: int,
    check_seconds: float,
    gone: Callable[[], bytes | None],
) -> AsyncIterator[bytes]:
    opened = False
    quiet = 0.0  # seconds waited since the last wake-up
    size = min(FIRST_BATCH, batch)
    while not await disconnected():
        found = await run_in_threadpool(changes, since, size)
        if not opened:  # sent after the first look, so a client that sees it misses nothing later
            opened = True
            yield b"retry: 2000\n\n"
        for seq, message in found:
            since = seq
            yield frame(seq, message)
        if len(found) >= size:
            size = min(size * 2, batch)
            continue  # more to catch up on: no waiting
        woken = await wait(min(check_seconds, HEARTBEAT_SECONDS - quiet))
        if not await run_in_threadpool(allowed):
            last = await run_in_threadpool(gone)
            if last is not None:
                yield last
            return
        quiet = 0.0 if woken else quiet + min(check_seconds, HEARTBEAT_SECONDS - quiet)
        if quiet >= HEARTBEAT_SECONDS:
            quiet = 0.0
            yield b": still here\n\n"
