"""Storage behind one interface: :class:`Store`, opened from a database URL by :func:`open_store`."""

from __future__ import annotations

from pathlib import Path

from .base import Conversation, MessageRow, StaleWrite, Store, StoredPart, TextTools

__all__ = [
    "Conversation",
    "MessageRow",
    "StaleWrite",
    "Store",
    "StoredPart",
    "TextTools",
    "normalize_url",
    "open_store",
]


def normalize_url(url: str) -> str:
    """``postgresql://`` (or ``postgres://``) uses psycopg 3; a bare path is a SQLite file."""
    if url.startswith(("postgresql://", "postgres://")):
        return "postgresql+psycopg://" + url.split("://", 1)[1]
    if "://" not in url:
        return "sqlite:///" + str(Path(url).expanduser().resolve())
    return url


def open_store(url: str, migrate: bool = True) -> Store:
    """Open (and by default migrate) the store at ``url``."""
    url = normalize_url(url)
    store: Store
    if url.startswith("sqlite"):
        from .sqlite import SQLiteStore

        store = SQLiteStore(url)
    elif url.startswith("postgresql"):
        from .postgres import PostgresStore

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
