"""Limits that keep one client from exhausting the service: bodies bounded while they are read,
and per-account caps on long or heavy requests (event streams, whole-part reads).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import defaultdict
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from typing import Any

import anyio.to_thread
import orjson
from starlette.responses import StreamingResponse

from .errors import FoldlineError, PayloadTooLarge, TooManyRequests, Unavailable, error_body

ASGIApp = Callable[..., Any]


class BodyLimit:
    """ASGI middleware: a request body over its route's limit is refused with 413 while it is
    read (a declared ``Content-Length`` over the limit before a byte of it is read), whatever
    the route, so no body is ever buffered past its limit."""

    def __init__(self, app: ASGIApp, limit_for: Callable[[str], int]) -> None:
        self.app = app
        self.limit_for = limit_for

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.limit_for(scope["path"])
        declared = dict(scope["headers"]).get(b"content-length", b"")
        if declared.isdigit() and int(declared) > limit:
            await too_large(send, limit)
            return
        seen = 0

        async def bounded() -> Any:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise PayloadTooLarge(f"the body is over the limit of {limit} bytes")
            return message

        await self.app(scope, bounded, send)


async def too_large(send: Any, limit: int) -> None:
    body = orjson.dumps(error_body(PayloadTooLarge(f"the body is over the limit of {limit} bytes")))
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
               (b"connection", b"close")]  # fmt: skip
    await send({"type": "http.response.start", "status": 413, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class Slots:
    """At most ``limit`` requests of one kind per account at once; one more is a 429 (or
    ``refusal``: a :class:`Gate` refuses with 503)."""

    def __init__(self, what: str, limit: int, refusal: type[FoldlineError] = TooManyRequests) -> None:
        self.what, self.limit, self.refusal = what, limit, refusal
        self._lock = threading.Lock()
        self._taken: dict[str, int] = defaultdict(int)

    def acquire(self, account: str) -> None:
        with self._lock:
            if self._taken[account] >= self.limit:
                raise self.refusal(self.refused())
            self._taken[account] += 1

    def refused(self) -> str:
        return f"at most {self.limit} {self.what} at once per account"

    def release(self, account: str) -> None:
        with self._lock:
            self._taken[account] -= 1
            if self._taken[account] <= 0:
                del self._taken[account]

    @contextmanager
    def taken(self, account: str) -> Iterator[None]:
        self.acquire(account)
        try:
            yield
        finally:
            self.release(account)

    def streamed(self, account: str, start: Callable[[], tuple[int, Iterator[bytes]]]) -> tuple[int, Iterator[bytes]]:
        """``start()``'s size and chunks, in a slot of ``account``'s (a 429 when none is left) held
        until the last chunk is sent, or the response is dropped unfinished, or ``start`` fails."""
        self.acquire(account)
        try:
            size, chunks = start()
            sending = held_until_sent(chunks, lambda: self.release(account))
            next(sending)  # started (its empty first chunk): from here on, closing it gives the slot back
        except BaseException:
            self.release(account)
            raise
        return size, sending


class Gate(Slots):
    """At most ``limit`` requests of one kind at once in this process, whoever sends them; one
    more is a 503 with ``Retry-After`` at once (never a wait for a pooled connection). Small
    requests pass no gate, so they keep the pool's other connections."""

    EVERYONE = "*"

    def __init__(self, what: str, limit: int, wait: float = 30.0) -> None:
        super().__init__(what, limit, Unavailable)
        self.wait = wait

    def refused(self) -> str:
        return f"the server is running {self.limit} {self.what} at once, its most; try again shortly"

    def while_read(self, start: Callable[[], tuple[int, Iterator[bytes]]]) -> tuple[int, Iterator[bytes]]:
        """``start()``'s size and chunks, in a slot taken at once (else a 503) and given back
        when ``start()`` returns: its chunks are to be read each in a slot again (a
        :class:`HeldStream` ``paced_by`` this gate), never held while a client takes the bytes."""
        with self.taken(self.EVERYONE):
            return start()

    def try_acquire(self) -> bool:
        try:
            self.acquire(self.EVERYONE)
        except Unavailable:
            return False
        return True

    async def turn(self) -> None:
        """A slot, waited for on the event loop (no thread sits waiting) up to :attr:`wait`
        seconds, else the refusal."""
        deadline = time.monotonic() + self.wait
        pause = 0.002
        while not self.try_acquire():
            if time.monotonic() >= deadline:
                raise self.refusal(self.refused())
            await asyncio.sleep(pause)
            pause = min(pause * 2, 0.05)


def held_until_sent(chunks: Iterator[bytes], release: Callable[[], None]) -> Iterator[bytes]:
    """``chunks``, then ``release()``: at their end, or when the response is dropped unfinished."""
    try:
        yield b""
        yield from chunks
    finally:
        close = getattr(chunks, "close", None)
        if close is not None:
            close()
        release()


class HeldStream(StreamingResponse):
    """A response of ``chunks`` (from :meth:`Slots.streamed`) that closes them once it is done,
    however it ends: sent, or its client gone (dropped by the send deadline, say). Left to the
    garbage collector, a dropped sending kept its slots (and what its chunks hold) until a
    collection came round."""

    def __init__(self, chunks: Iterator[bytes], paced_by: Gate | None = None, **kwargs: Any) -> None:
        super().__init__(chunks if paced_by is None else paced(chunks, paced_by), **kwargs)
        self._chunks = chunks

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:  # no chunk is being read now: a thread reading one is waited for
            close = getattr(self._chunks, "close", None)
            if close is not None:
                close()


async def paced(chunks: Iterator[bytes], gate: Gate) -> AsyncIterator[bytes]:
    """``chunks``, each read in a thread in a slot of ``gate``'s (waited for on the event loop;
    the answer has begun, so one that gets none in time ends it short), none held while the
    client takes the bytes."""
    while True:
        await gate.turn()
        try:
            chunk = await anyio.to_thread.run_sync(next, chunks, None)
        finally:
            gate.release(Gate.EVERYONE)
        if chunk is None:
            return
        yield chunk
