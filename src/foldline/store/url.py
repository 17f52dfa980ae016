"""Database URLs, read in one place: a bare path is a SQLite file, ``postgresql://`` a server."""

from __future__ import annotations

from pathlib import Path


def normalize_url(url: str) -> str:
    """The SQLAlchemy URL for ``url``: ``postgresql://`` (or ``postgres://``) uses psycopg 3;
    a bare path is a SQLite file."""
    if url.startswith(("postgresql://", "postgres://")):
        return "postgresql+psycopg://" + url.split("://", 1)[1]
    if "://" not in url:
        return "sqlite:///" + str(Path(url).expanduser().resolve())
    return url


def sqlite_file(url: str) -> Path | None:
    """The file of a SQLite store (a bare path or a ``sqlite:///`` URL); ``None`` for a server's URL."""
    url = normalize_url(url)
    if not url.startswith("sqlite:///"):
        return None
    path = url.removeprefix("sqlite:///")
    if not path or path == ":memory:":
        return None
    return Path(path)
