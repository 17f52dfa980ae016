"""The Go opencode's SQLite store (``<project>/.opencode/opencode.db``, with its ``-wal``) as
Foldline messages (opencode-ai/opencode, the archived TUI; not the TypeScript sst/opencode).

Read by :mod:`.agent_store`, shared with Crush; an opencode store has no ``messages.provider``.
"""

from __future__ import annotations

from pathlib import Path

from .agent_store import groups_for, parse_for, store_of
from .formats import Format, Head

NAME = "opencode"


def sniff(head: Head) -> bool:
    store = store_of(head)
    return store is not None and not store.crush


def locations() -> list[Path]:
    """None: opencode keeps its store in the project it runs in, which is imported by naming it."""
    return []


FORMAT = Format(NAME, "opencode", (".db",), sniff, groups_for(NAME), parse_for(NAME), locations)
