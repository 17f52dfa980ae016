"""A database that cannot be used, said so a person can act on it.

:func:`explain` turns a driver's failure (SQLite's, psycopg's, as SQLAlchemy wraps them) into a
:class:`StoreError` naming the file, or the URL without its password, and the likely fix. It
reads the drivers' messages, which are stable: SQLite's result codes and libpq's texts.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlsplit

from .errors import StoreError
from .url import normalize_url, shown, sqlite_file


def explain(exc: BaseException, url: str) -> StoreError | None:
    """What ``exc``, raised while using the database at ``url``, means for a person; ``None``
    when it is not the database's failure."""
    if isinstance(exc, StoreError):
        return exc
    from sqlalchemy.exc import DBAPIError

    cause: BaseException = exc.orig if isinstance(exc, DBAPIError) and exc.orig is not None else exc
    module = type(cause).__module__.split(".")[0]
    if module not in ("sqlite3", "psycopg") and not isinstance(exc, DBAPIError):
        return None
    said = first_line(str(cause))
    try:
        normalized = normalize_url(url)
    except StoreError as bad:
        return bad
    if normalized.startswith("postgresql"):
        return postgres_failure(said, shown(url), normalized)
    file = sqlite_file(url)
    return sqlite_failure(said, file) if file is not None else StoreError(f"SQLite failed: {said}")


def first_line(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else "unknown error"
    return re.sub(r"^\((?:sqlite3|psycopg)\.\w+\) ", "", line)


def sqlite_failure(said: str, file: Path) -> StoreError:
    lower = said.lower()
    if "unable to open" in lower:
        if file.is_dir():
            return StoreError(f"{file} is a folder, not a SQLite file", f"give a file in it: {file / 'foldline.db'}")
        if not file.parent.is_dir():
            return StoreError(
                f"cannot make the SQLite database {file}: the folder {file.parent} does not exist",
                f"create the folder first (mkdir -p {file.parent}), or choose another path",
            )
        return StoreError(
            f"cannot open the SQLite database {file}",
            f"this user needs to read and write the file and its folder {file.parent}",
        )
    if "not a database" in lower or "encrypted" in lower or "malformed" in lower:
        return StoreError(
            f"{file} is not a SQLite database ({said})",
            "point at a Foldline database, or a new file name (this file was left as it was)",
        )
    if "readonly" in lower or "read-only" in lower:
        return StoreError(
            f"cannot write to the SQLite database {file}: it is read-only",
            f"this user needs write access to the file and its folder {file.parent} "
            f"(SQLite keeps {file.name}-wal beside it)",
        )
    if "locked" in lower or "busy" in lower:
        return StoreError(
            f"the SQLite database {file} stayed locked by another process", "wait for it to finish, or stop it"
        )
    if "disk" in lower or "full" in lower:
        return StoreError(f"cannot write to the SQLite database {file}: {said}", "free some disk space")
    return StoreError(f"the SQLite database {file} failed: {said}")


def postgres_failure(said: str, target: str, normalized: str) -> StoreError:
    lower = said.lower()
    parts = urlsplit(normalized)
    host, port = parts.hostname or "localhost", parts.port or 5432
    user = parts.username or "your login name"
    database = parts.path.lstrip("/") or user
    missing = re.search(r'database "([^"]*)" does not exist', said)
    if missing:
        return StoreError(
            f"the PostgreSQL database {missing.group(1)} does not exist: {target}",
            f"create it (createdb -h {host} -p {port} -U {user} {missing.group(1)}), or fix the URL",
        )
    role = re.search(r'role "([^"]*)" does not exist', said)
    if role:
        return StoreError(
            f"PostgreSQL has no role {role.group(1)}: {target}",
            f"use an existing user in the URL, or create it (CREATE ROLE {role.group(1)} LOGIN)",
        )
    if "password" in lower:
        return StoreError(
            f"PostgreSQL refused the password of {user}: {target}",
            "check the user and password (in the URL, PGPASSWORD or ~/.pgpass)",
        )
    if "pg_hba.conf" in lower:
        return StoreError(
            f"PostgreSQL does not accept {user} on {database} from this machine: {target}",
            "allow it in the server's pg_hba.conf, or use another user",
        )
    unreachable = ("refused", "could not connect", "no such file", "timeout", "timed out", "translate host", "resolve")
    if any(word in lower for word in unreachable):
        reason = "connection refused" if "refused" in lower else said
        return StoreError(
            f"cannot reach PostgreSQL at {target} ({reason})",
            f"is the server running and accepting TCP connections on {host}:{port}? check the URL's host and port",
        )
    if "permission denied" in lower or "must be owner" in lower:
        return StoreError(
            f"PostgreSQL refused {user} what Foldline needs on {database} ({said}): {target}",
            f"make {user} the database's owner (ALTER DATABASE {database} OWNER TO {user}), or use its owner",
        )
    return StoreError(f"PostgreSQL failed at {target}: {said}")


# PostgreSQL's SQLSTATEs for "no room": disk_full, insufficient_resources, out_of_memory's class
FULL_STATES = ("53100", "53000")
# ... and for "not now": the connection lost or refused, a statement cancelled or timed out, a
# lock not had in time, the server shutting down or starting
BUSY_STATES = ("57014", "55P03", "57P01", "57P02", "57P03", "08000", "08003", "08006", "08001", "08004")


def refusal(exc: BaseException) -> str | None:
    """``"full"`` when ``exc`` says the database's disk is full, ``"busy"`` when it says the
    database cannot answer now (unreachable, timed out, locked, no connection free in time);
    ``None`` for any other failure."""
    from sqlalchemy.exc import DBAPIError
    from sqlalchemy.exc import TimeoutError as PoolTimeout

    if isinstance(exc, PoolTimeout):
        return "busy"
    cause: BaseException = exc.orig if isinstance(exc, DBAPIError) and exc.orig is not None else exc
    if isinstance(cause, OSError) and cause.errno == 28:  # ENOSPC
        return "full"
    state = getattr(cause, "sqlstate", None)
    if isinstance(state, str):
        return "full" if state in FULL_STATES else "busy" if state in BUSY_STATES else None
    if any(k.__module__.split(".")[0] == "psycopg" and k.__name__ == "OperationalError" for k in type(cause).__mro__):
        return "busy"  # no SQLSTATE: the client's own failure (connection lost, server gone, no answer in time)
    if type(cause).__module__ == "sqlite3":
        lower = str(cause).lower()
        if "disk is full" in lower or "disk i/o error" in lower:
            return "full"
        if "locked" in lower or "busy" in lower or "interrupted" in lower:
            return "busy"
    return None
