"""Limits that keep one client from exhausting the service: bodies bounded while they are read,
and per-account caps on long or heavy requests (event streams, whole-part reads).
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

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
        self._lock = threading.Condition()
        self._taken: dict[str, int] = defaultdict(int)

    def acquire(self, account: str, wait: float = 0.0) -> None:
        """A slot of ``account``'s, waited for up to ``wait`` seconds (none: at once), else the refusal."""
        deadline = time.monotonic() + wait
        with self._lock:
            while self._taken[account] >= self.limit:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise self.refusal(self.refused())
                self._lock.wait(left)
            self._taken[account] += 1

    def refused(self) -> str:
        return f"at most {self.limit} {self.what} at once per account"

    def release(self, account: str) -> None:
        with self._lock:
            self._taken[account] -= 1
            if self._taken[account] <= 0:
                del self._taken[account]
            self._lock.notify()

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
        """``start()``'s size and chunks, the slot held only while they are read: through
        ``start()`` (taken at once, else a 503), then again for each chunk (waited for up to
        :attr:`wait` seconds: the answer has begun, so a chunk that gets no slot ends it short),
        never while a client takes the bytes. A client that stops reading holds no slot."""
        with self.taken(self.EVERYONE):
            size, chunks = start()
        return size, EachHeld(self, chunks, self.wait)


class EachHeld(Iterator[bytes]):
    """``chunks``, each read in a slot of ``gate``'s (:meth:`Gate.while_read`); ``close()``
    closes them, even before the first is asked for."""

    def __init__(self, gate: Gate, chunks: Iterator[bytes], wait: float) -> None:
        self._gate, self._chunks, self._wait = gate, chunks, wait

    def __next__(self) -> bytes:
        self._gate.acquire(Gate.EVERYONE, self._wait)
        try:
            return next(self._chunks)
        finally:
            self._gate.release(Gate.EVERYONE)

    def close(self) -> None:
        close = getattr(self._chunks, "close", None)
        if close is not None:
            close()


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

    def __init__(self, chunks: Iterator[bytes], **kwargs: Any) -> None:
        super().__init__(chunks, **kwargs)
        self._chunks = chunks

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:  # no chunk is being read now: a thread reading one is waited for
            close = getattr(self._chunks, "close", None)
            if close is not None:
                close()
