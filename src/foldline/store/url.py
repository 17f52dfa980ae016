"""Database URLs, read in one place: a bare path is a SQLite file, ``postgresql://`` a server."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlsplit

from .errors import BadURL

# A scheme, as a URL starts: `postgresql:`, `mysql:` … (one letter is a Windows drive, a path).
SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]+):")
POSTGRES = ("postgresql://", "postgres://", "postgresql+psycopg://")
URL_SHAPE = "a PostgreSQL URL reads postgresql://USER@HOST:PORT/DATABASE; a SQLite file is a plain path"


def normalize_url(url: str) -> str:
    """The SQLAlchemy URL for ``url``: ``postgresql://`` (or ``postgres://``) uses psycopg 3;
    a bare path is a SQLite file. A malformed URL is :class:`BadURL`, never taken for a file."""
    if not url.strip():
        raise BadURL("no database given (the database setting is empty)", "give a SQLite file path or a URL")
    if url.startswith(POSTGRES):
        rest = url.split("://", 1)[1]
        check_server_url(url)
        return "postgresql+psycopg://" + rest
    if url.startswith("sqlite://"):
        return url
    scheme = SCHEME.match(url)
    if scheme is not None:
        name = scheme.group(1).lower()
        if name.startswith("postgres") or name == "sqlite":
            raise BadURL(f"malformed database URL: {shown(url)}", URL_SHAPE)
        if "://" in url:
            raise BadURL(f"Foldline stores its data in SQLite or PostgreSQL, not {name}: {shown(url)}", URL_SHAPE)
        raise BadURL(
            f"{shown(url)} looks like a URL, not a file",
            f"{URL_SHAPE} (write ./{url} for a file whose name has a colon)",
        )
    return "sqlite:///" + str(Path(url).expanduser().resolve())


def check_server_url(url: str) -> None:
    """Refuse what libpq would misread: a port that is not a number, a second database."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 (reading it checks it)
    except ValueError as exc:
        raise BadURL(f"malformed database URL ({exc}): {shown(url)}", URL_SHAPE) from None
    if parts.path.count("/") > 1:
        raise BadURL(f"malformed database URL (one database name, no slash in it): {shown(url)}", URL_SHAPE)


def shown(url: str) -> str:
    """``url`` as it may be printed: a SQLite file as its path, a server's URL without its password."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return str(Path(url).expanduser().resolve()) if url.strip() and not SCHEME.match(url) else url
    if scheme == "sqlite":
        return rest.removeprefix("/") or url
    at = rest.rfind("@")
    if at < 0:
        return url
    user = rest[:at].split(":", 1)[0]
    return f"{scheme.replace('+psycopg', '')}://{user}@{rest[at + 1 :]}"


def sqlite_file(url: str) -> Path | None:
    """The file of a SQLite store (a bare path or a ``sqlite:///`` URL); ``None`` for a server's URL."""
    url = normalize_url(url)
    if not url.startswith("sqlite:///"):
        return None
    path = url.removeprefix("sqlite:///")
    if not path or path == ":memory:":
        return None
    return Path(path)
