"""Storage behind one interface: :class:`Store`, opened from a database URL by :func:`open_store`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

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
from .url import normalize_url, shown, sqlite_file

if TYPE_CHECKING:
    from .store import Store

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


def __getattr__(name: str) -> Any:
    # The store's SQL (and SQLAlchemy) loads at the first use of Store or open_store; its rows,
    # errors and URLs do not need it (an import's workers are forked before it loads).
    if name == "Store":
        from .store import Store

        return Store
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
