"""Storage behind one interface: :class:`Store`, opened from a database URL by :func:`open_store`."""

from __future__ import annotations

from .base import EVERYONE, SOMETHING, AgentFacts, AgentRow, Conversation, MessageRow, StaleWrite, Store, StoredPart
from .url import normalize_url, sqlite_file

__all__ = [
    "EVERYONE",
    "AgentFacts",
    "AgentRow",
    "SOMETHING",
    "Conversation",
    "MessageRow",
    "StaleWrite",
    "Store",
    "StoredPart",
    "normalize_url",
    "open_store",
    "sqlite_file",
]


def open_store(url: str, migrate: bool = True, synchronous: str = "full") -> Store:
    """Open (and by default migrate) the store at ``url``. ``synchronous`` is SQLite's durability:
    ``full`` (the default: an acknowledged write survives a power loss) or ``normal``."""
    url = normalize_url(url)
    store: Store
    if url.startswith("sqlite"):
        from .sqlite import SQLiteStore

        store = SQLiteStore(url, synchronous)
    elif url.startswith("postgresql"):
        try:
            from .postgres import PostgresStore
        except ImportError as exc:
            raise RuntimeError("PostgreSQL needs the postgres extra: pip install 'foldline[postgres]'") from exc

        store = PostgresStore(url)
    else:
        raise ValueError("the database URL must be a SQLite path or a postgresql:// URL")
    if migrate:
        try:
            store.migrate()
        except BaseException:
            store.close()  # a failed migration leaves no connection open
            raise
    return store
