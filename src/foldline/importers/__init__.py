"""Importing the session logs that coding agents write, through the write door (one module per format)."""

from .detect import has_session_logs
from .importer import import_paths
from .summary import Summary

__all__ = ["Summary", "has_session_logs", "import_paths"]
