"""Client-side bounds on every wait on PostgreSQL, for a server that cannot say no.

The server's ``statement_timeout`` and ``lock_timeout`` bound what it runs; a server frozen
outright (stopped, its host paused, a link that swallows packets) answers nothing, and its
kernel still acknowledges what it is sent, so neither they nor TCP keepalives ever fire. So
each connection bounds its own waits: its connecting by ``connect_timeout``, and each wait
for an answer (a statement, a fetch, a commit) by :attr:`BoundedConnection.bound` seconds,
past which the connection is closed (the pool drops it) and the wait fails as a lost
connection would: a 503 with ``Retry-After``. When the server is back, new connections work.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg import errors as pg_errors
from sqlalchemy import Engine, event

GRACE = 2.0  # seconds past the server's own timeouts, so that they, when they can, answer first
SMALL = 3.0  # seconds a small check (a ping, a kept page's check) waits: past it, it goes the long way
CONNECTING = 5  # seconds connecting waits at most (it takes milliseconds)


class BoundedConnection(psycopg.Connection[Any]):
    """A psycopg connection whose every wait for the server ends after :attr:`bound` seconds
    (``None``: no bound, as a migration takes the time it takes)."""

    bound: float | None = None

    def wait(self, gen: Any, interval: float = 0.1, timeout: float | None = None) -> Any:
        try:
            return super().wait(gen, interval, self.bound if timeout is None else timeout)
        except pg_errors._WaitTimeout:
            self.close()  # mid-protocol: it cannot be used again
            raise


class BoundedAsyncConnection(psycopg.AsyncConnection[Any]):
    """:class:`BoundedConnection` for the event loop's page checks."""

    bound: float | None = None

    async def wait(self, gen: Any, interval: float = 0.1, timeout: float | None = None) -> Any:
        try:
            return await super().wait(gen, interval, self.bound if timeout is None else timeout)
        except pg_errors._WaitTimeout:
            await self.close()
            raise


class SmallChecks(BoundedAsyncConnection):
    """The page checks' connections: a check is one small statement, bounded by :data:`SMALL`."""

    bound = SMALL


def bound_options(wait: float) -> dict[str, Any]:
    """The connection options that bound connecting (a server frozen after taking the TCP
    connection never answers its start) and find a link gone dead."""
    seconds = max(2, round(wait + GRACE))
    return {"connect_timeout": min(seconds, CONNECTING), "keepalives": 1, "keepalives_idle": seconds,
            "keepalives_interval": 1, "keepalives_count": 3}  # fmt: skip


def bound_waits(engine: Engine, wait: float) -> None:
    """Make ``engine``'s connections :class:`BoundedConnection`\\ s, each wait bounded by
    ``wait`` seconds and :data:`GRACE` (set again at each checkout: :func:`unbounded` lifts it
    for one)."""
    bound = wait + GRACE

    @event.listens_for(engine, "do_connect")
    def connect(dialect: Any, record: Any, cargs: Any, cparams: Any) -> Any:
        conn = BoundedConnection.connect(*cargs, **cparams)
        conn.bound = bound
        return conn

    @event.listens_for(engine, "checkout")
    def bounded(dbapi_conn: Any, record: Any, proxy: Any) -> None:
        if isinstance(dbapi_conn, BoundedConnection):
            dbapi_conn.bound = bound


@contextmanager
def small(dbapi_conn: Any) -> Iterator[None]:
    """This connection's waits bounded by :data:`SMALL` for a small check (a ping)."""
    if not isinstance(dbapi_conn, BoundedConnection):
        yield
        return
    was, dbapi_conn.bound = dbapi_conn.bound, SMALL
    try:
        yield
    finally:
        dbapi_conn.bound = was


def unbounded(dbapi_conn: Any) -> None:
    """Lift the bound of this checked-out connection's waits until it is checked out again."""
    if isinstance(dbapi_conn, BoundedConnection):
        dbapi_conn.bound = None
