"""The searchable text of a part: the fields search indexes and slices read.

A ``text`` or ``reasoning`` part has its ``text``; a tool part (``tool-NAME`` or ``dynamic-tool``)
has its ``input``, ``output`` and ``errorText``, each as the panel draws it (a string as it is,
any other JSON value as 2-space indented JSON, non-ASCII kept). Other parts (files, sources,
``data-*``) have no searchable text.
"""

from __future__ import annotations

from typing import Any

from ..cut import output_text
from ..message import tool_name

FIELDS = ("text", "output", "errorText", "input")
TOOL_FIELDS = ("input", "output", "errorText")


def searchable(part: Any) -> list[tuple[str, str]]:
    """``(field, text)`` for each searchable field ``part`` holds, in a fixed order."""
    if not isinstance(part, dict):
        return []
    if part.get("type") in ("text", "reasoning"):
        value = part.get("text")
        return [("text", value)] if isinstance(value, str) else []
    if tool_name(part) is None:
        return []
    return [(field, output_text(part[field])) for field in TOOL_FIELDS if field in part]
