"""Importing the session logs that Claude Code and Codex write, through the write door."""

from .importer import import_paths
from .summary import Summary

__all__ = ["Summary", "import_paths"]
