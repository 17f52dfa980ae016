"""Settings, from the CLI and ``FOLDLINE_*`` environment variables (read when a Settings is made)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_DB = "foldline.db"


def default_db() -> str:
    return os.environ.get("FOLDLINE_DB") or DEFAULT_DB


def env_number(name: str, default: str) -> float:
    raw = os.environ.get(name) or default
    try:
        return float(raw)
    except ValueError:
        raise ValueError(f"{name} must be a number, not {raw!r}") from None


def default_registry() -> Path | None:
    raw = os.environ.get("FOLDLINE_REGISTRY")
    return Path(raw) if raw else None


def default_redact() -> bool:
    raw = (os.environ.get("FOLDLINE_REDACT") or "on").lower()
    if raw not in ("on", "off"):
        raise ValueError(f"FOLDLINE_REDACT is 'on' or 'off', not {raw!r}")
    return raw == "on"


def default_redact_rules() -> Path | None:
    raw = os.environ.get("FOLDLINE_REDACT_RULES")
    return Path(raw) if raw else None


IMPORT_MAX_LINE = 256 * 2**20  # bytes: a longer line of a JSONL log is skipped by an import


def import_max_line() -> int:
    """The longest line of a JSONL log an import reads (``FOLDLINE_IMPORT_MAX_LINE``, bytes)."""
    found = int(env_number("FOLDLINE_IMPORT_MAX_LINE", str(IMPORT_MAX_LINE)))
    if found < 1:
        raise ValueError("FOLDLINE_IMPORT_MAX_LINE must be at least 1 byte")
    return found


@dataclass(frozen=True)
class Settings:
    db: str = field(default_factory=default_db)
    bound: int = field(default_factory=lambda: int(env_number("FOLDLINE_BOUND", "4096")))
    text_bound: int = field(default_factory=lambda: int(env_number("FOLDLINE_TEXT_BOUND", "65536")))
    max_body: int = field(default_factory=lambda: int(env_number("FOLDLINE_MAX_BODY", str(32 * 1024 * 1024))))
    registry: Path | None = field(default_factory=default_registry)
    poll_seconds: float = field(default_factory=lambda: env_number("FOLDLINE_POLL_SECONDS", "1.0"))
    # Serving (docs/security.md): deadlines on slow clients, and a cap on open connections.
    header_timeout: float = field(default_factory=lambda: env_number("FOLDLINE_HEADER_TIMEOUT", "10"))
    body_timeout: float = field(default_factory=lambda: env_number("FOLDLINE_BODY_TIMEOUT", "60"))
    # A client that takes nothing of a response for this many seconds is dropped.
    send_timeout: float = field(default_factory=lambda: env_number("FOLDLINE_SEND_TIMEOUT", "30"))
    keep_alive: float = field(default_factory=lambda: env_number("FOLDLINE_KEEP_ALIVE", "5"))
    max_connections: int = field(default_factory=lambda: int(env_number("FOLDLINE_MAX_CONNECTIONS", "4000")))
    # Per account, at once (429 past them): open event streams, and whole-part reads.
    max_streams: int = field(default_factory=lambda: int(env_number("FOLDLINE_MAX_STREAMS", "50")))
    max_whole_reads: int = field(default_factory=lambda: int(env_number("FOLDLINE_MAX_WHOLE_READS", "4")))
    max_searches: int = field(default_factory=lambda: int(env_number("FOLDLINE_MAX_SEARCHES", "4")))
    # Per process, at once (503 past it): whole-part reads and searches of every account together.
    max_heavy: int = field(default_factory=lambda: int(env_number("FOLDLINE_MAX_HEAVY", "8")))
    # A cut page, or a page with a limit, ends early (with its `next`) once its parts reach this
    # many bytes; its newest message is always sent whole (docs/security.md).
    page_bytes: int = field(default_factory=lambda: int(env_number("FOLDLINE_PAGE_BYTES", str(4 * 1024 * 1024))))
    # Bodies past this many bytes are sent without gzip (compressing them costs more than it saves).
    gzip_max: int = field(default_factory=lambda: int(env_number("FOLDLINE_GZIP_MAX", str(8 * 1024 * 1024))))
    # Threads that run reads against the database (the page read), per process.
    db_threads: int = field(default_factory=lambda: int(env_number("FOLDLINE_DB_THREADS", "4")))
    # Memory for pages this process has sent, each checked against the database on every read
    # (foldline.pagecache); 0 reads every page from the database.
    page_cache_mb: float = field(default_factory=lambda: env_number("FOLDLINE_PAGE_CACHE_MB", "64"))
    # How long a process trusts a token it has found, without asking again (0: ask every time).
    token_cache_seconds: float = field(default_factory=lambda: env_number("FOLDLINE_TOKEN_CACHE_SECONDS", "5"))
    # Seconds a page of search hits may take; past it the page ends early, partial, with a cursor
    # that goes on from where it stopped (0: each page gives only its engine's first step).
    search_seconds: float = field(default_factory=lambda: env_number("FOLDLINE_SEARCH_SECONDS", "1.0"))
    # The most a request waits on the database (a statement, a lock, a free connection, another
    # writer) before it is answered 503 with Retry-After (docs/security.md).
    db_wait: float = field(default_factory=lambda: env_number("FOLDLINE_DB_WAIT_SECONDS", "30"))
    # SQLite's durability: "full" (an acknowledged write survives a power loss) or "normal"
    # (faster; survives a crash of the process, but a power loss may drop the last writes).
    sqlite_synchronous: str = field(default_factory=lambda: os.environ.get("FOLDLINE_SQLITE_SYNCHRONOUS", "full"))
    # Secrets replaced by a marker before anything is stored (docs/security.md), and a TOML file
    # of extra rules and an allowlist (foldline.redaction.config).
    redact: bool = field(default_factory=default_redact)
    redact_rules: Path | None = field(default_factory=default_redact_rules)
    # The longest line of a JSONL log (and the largest JSON document) an import reads, in bytes:
    # a longer one is skipped and reported in the summary (docs/import.md).
    import_max_line: int = field(default_factory=import_max_line)
    # An import indexes for search only what would leave more than this many million code points
    # (about MB of text) pending: the rest waits for a server's indexer, the next import, or
    # `import --wait-index`; searches read the pending chunks meanwhile (docs/import.md).
    # Worker processes that parse sessions ahead of an import's writes, at most one per core
    # (0: the importing process parses each itself); docs/import.md.
    import_workers: int = field(default_factory=lambda: int(env_number("FOLDLINE_IMPORT_WORKERS", "4")))
    import_backlog_mb: float = field(default_factory=lambda: env_number("FOLDLINE_IMPORT_BACKLOG_MB", "32"))

    def __post_init__(self) -> None:
        if self.bound < 2:
            raise ValueError("the cut's bound (FOLDLINE_BOUND) must be at least 2 code points")
        if self.text_bound < self.bound:
            raise ValueError("FOLDLINE_TEXT_BOUND must be at least the cut's bound (FOLDLINE_BOUND)")
        if self.max_body < 1 or self.poll_seconds <= 0 or self.page_bytes < 1:
            raise ValueError("FOLDLINE_MAX_BODY, FOLDLINE_POLL_SECONDS and FOLDLINE_PAGE_BYTES must be positive")
        limits = (self.header_timeout, self.body_timeout, self.send_timeout, self.keep_alive, self.max_connections,
                  self.max_streams)  # fmt: skip
        if self.db_wait <= 0:
            raise ValueError("FOLDLINE_DB_WAIT_SECONDS must be positive")
        if min(self.token_cache_seconds, self.search_seconds, self.page_cache_mb, self.import_backlog_mb) < 0:
            raise ValueError(
                "FOLDLINE_TOKEN_CACHE_SECONDS, FOLDLINE_SEARCH_SECONDS, FOLDLINE_PAGE_CACHE_MB and "
                "FOLDLINE_IMPORT_BACKLOG_MB must not be negative"
            )
        if min(*limits, self.max_whole_reads, self.max_searches, self.max_heavy, self.db_threads) <= 0:
            raise ValueError("the serving timeouts and FOLDLINE_MAX_CONNECTIONS must be positive")
        if self.redact and self.redact_rules is not None:
            from .redaction import load  # a rules file that cannot be used is said at once

            load(self.redact_rules)
        if self.import_workers < 0:
            raise ValueError("FOLDLINE_IMPORT_WORKERS must not be negative")
        if self.import_max_line < 1:
            raise ValueError("FOLDLINE_IMPORT_MAX_LINE must be at least 1 byte")
        if self.sqlite_synchronous.lower() not in ("full", "normal"):
            raise ValueError("FOLDLINE_SQLITE_SYNCHRONOUS is 'full' or 'normal'")
