"""The cut: one big field of a part replaced by its head, its tail and its size.

The cut is computed when a part is written; a page read only picks the stored cut.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from .message import tool_name

BOUND = 4096

TOOL_STATES_WITH_TEXT = {"output-available": "output", "output-error": "errorText"}


@dataclass(frozen=True, slots=True)
class Cut:
    field: str
    bytes: int
    head: str
    tail: str


def output_text(value: Any) -> str:
    """A tool output as the panel draws it: the string itself, or 2-space indented JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, indent=2, ensure_ascii=False)


def cut_text(field: str, text: str, bound: int = BOUND, half: int | None = None) -> Cut | None:
    """Cut ``text`` when it is longer than ``bound`` code points; ``None`` otherwise.

    Head and tail are ``half`` code points each (by default ``bound // 2``: 2048 for the default
    bound). Python strings index code points, so a cut never splits one.
    """
    if len(text) <= bound:
        return None
    half = bound // 2 if half is None else half
    return Cut(field, len(text.encode("utf-8")), text[:half], text[-half:])


def candidate(part: dict[str, Any]) -> tuple[str, str] | None:
    """The field of ``part`` that may be cut, with its text, or ``None``.

    A thought's or a text part's text; a tool's output or error text; an attachment's ``data:`` URL (a file sent
    inline is sent by reference, as the seed's follow-up asked). Whether a tool's part is sent
    cut is the registry's call, made when it is read.
    """
    kind = part.get("type")
    if kind in ("reasoning", "text"):  # a text part is cut past the larger text bound
        text = part.get("text")
        return ("text", text) if isinstance(text, str) else None
    if kind in ("file", "reasoning-file"):
        url = part.get("url")
        return ("url", url) if isinstance(url, str) and url.startswith("data:") else None
    field = TOOL_STATES_WITH_TEXT.get(str(part.get("state")))
    if field is None or tool_name(part) is None or field not in part:
        return None
    return field, output_text(part[field])
