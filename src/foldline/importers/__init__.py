"""Importing the session logs that coding agents write, through the write door (one module per format)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .detect import has_session_logs
from .summary import Summary

if TYPE_CHECKING:
    from .importer import import_paths

__all__ = ["Summary", "has_session_logs", "import_paths"]


def __getattr__(name: str) -> Any:
    # The importer (and the service and store under it) loads at its first use: the parsers and
    # the write door's own half do not need it, and an import's workers fork before it loads.
    if name == "import_paths":
        from .importer import import_paths

        return import_paths
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
