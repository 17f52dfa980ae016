"""Storage behind one interface: :class:`Store`, opened from a database URL by :func:`open_store`."""

from __future__ import annotations

from .diagnosis import explain
from .errors import BadURL, StaleWrite, StoreError, need_driver
from .rows import (
    EVERYONE,
    SOMETHING,
    AgentFacts,
    AgentRow,
    Backlog,
    Conversation,
    ExportPart,
    Found,
    MessageRow,
    MessageWrite,
    PageRead,
    SeqChecks,
    StoredPart,
    TextRow,
)
from .store import Store
from .url import normalize_url, shown, sqlite_file

__all__ = [
    "BadURL",
    "EVERYONE",
    "AgentFacts",
    "AgentRow",
    "Backlog",
    "SOMETHING",
    "Conversation",
    "ExportPart",
    "Found",
    "MessageRow",
    "MessageWrite",
    "PageRead",
    "SeqChecks",
    "StaleWrite",
    "Store",
    "StoreError",
    "StoredPart",
    "TextRow",
    "explain",
    "normalize_url",
    "open_store",
    "shown",
    "sqlite_file",
]


def open_store(url: str, migrate: bool = True, synchronous: str = "full", wait: float | None = None) -> Store:
    """Open (and by default migrate) the store at ``url``. ``synchronous`` is SQLite's durability:
    ``full`` (the default: an acknowledged write survives a power loss) or ``normal``. ``wait``
    bounds, in seconds, every wait on the database: a statement, a lock, a free connection (PostgreSQL;
    ``None``: no bound on a statement), another writer (SQLite; ``None``: ``BUSY_SECONDS``).

    A database that cannot be opened, reached or migrated is a :class:`StoreError` naming it."""
    given, url = url, normalize_url(url)
    store: Store
    if url.startswith("sqlite"):
        from .sqlite import SQLiteStore

        store = SQLiteStore(url, synchronous, wait)
    elif url.startswith("postgresql"):
        try:
            from .postgres import PostgresStore
        except ImportError as exc:
            raise need_driver() from exc

        store = PostgresStore(url, wait)
    else:
        raise BadURL(f"not a database Foldline can use: {shown(given)}", "give a SQLite path or a postgresql:// URL")
    if migrate:
        try:
            store.migrate()
            store.sweep()  # what a big write that died between its stages left (store/staging.py)
        except BaseException as exc:
            store.close()  # a failed migration leaves no connection open
            failure = explain(exc, given) if isinstance(exc, Exception) else None
            if failure is None or failure is exc:
                raise
            raise failure from exc
    return store
