"""Moved to :mod:`foldline.search.fields`. This alias stays only for ``store/migrations.py``
(migration 7 indexes stored parts with it); remove it once that import reads
``from ..search.fields import searchable``."""

from .search.fields import FIELDS, TOOL_FIELDS, searchable

__all__ = ["FIELDS", "TOOL_FIELDS", "searchable"]
