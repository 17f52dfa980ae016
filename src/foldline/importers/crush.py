"""Crush's SQLite store (``<project>/.crush/crush.db``, with its ``-wal``) as Foldline messages.

Read by :mod:`.agent_store`, shared with the Go opencode Crush grew from; a Crush store is told
from an opencode one by its ``messages.provider`` column (Crush's own migrations added it).
"""

from __future__ import annotations

from pathlib import Path

from .agent_store import groups_for, parse_for, store_of
from .formats import Format, Head

NAME = "crush"


def sniff(head: Head) -> bool:
    store = store_of(head)
    return store is not None and store.crush


def locations() -> list[Path]:
    """None: Crush keeps its store in the project it runs in, which is imported by naming it."""
    return []


FORMAT = Format(NAME, "Crush", (".db",), sniff, groups_for(NAME), parse_for(NAME), locations)
