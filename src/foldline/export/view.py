"""What a writer is given: a part, with the fields too big to hold read in pieces, and the
writer's interface (each call gives the document's text, in pieces)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..cut import output_text
from ..message import tool_name

Pieces = Callable[[], Iterator[str]]  # a field's text, read again from its start at each call

SUBAGENT_LABEL_KEYS = ("description", "subagent_type", "agent_type", "name")


@dataclass
class PartView:
    """A part for a writer. ``part`` is the stored part, less any field in ``streamed``, which
    gives that field's text (as the panel draws it) in pieces; ``omitted``: fields left out
    (an attachment's ``data:`` URL too big to inline), with their size in bytes."""

    part: dict[str, Any]
    streamed: dict[str, Pieces] = field(default_factory=dict)
    omitted: dict[str, int] = field(default_factory=dict)

    @property
    def kind(self) -> str:
        return str(self.part.get("type", ""))

    @property
    def tool(self) -> str | None:
        return tool_name(self.part)

    def has(self, name: str) -> bool:
        return name in self.streamed or name in self.part

    def text(self, name: str) -> Pieces:
        """The field's text as the panel draws it (a string as it is, other JSON indented)."""
        if name in self.streamed:
            return self.streamed[name]
        value = self.part.get(name)
        text = "" if value is None and name not in self.part else output_text(value)
        return lambda: iter((text,))

    def head(self, name: str, size: int) -> str:
        """The first ``size`` code points of a field (for a fold's summary)."""
        got: list[str] = []
        held = 0
        for piece in self.text(name)():
            got.append(piece[: size - held])
            held += len(got[-1])
            if held >= size:
                break
        return "".join(got)

    def subagent_label(self) -> str | None:
        found = self.part.get("input")
        if isinstance(found, dict):
            for key in SUBAGENT_LABEL_KEYS:
                value = found.get(key)
                if isinstance(value, str) and value.strip():
                    return value.strip()
        return None


class Writer(Protocol):
    """A document, written as the export walks the transcript: each call gives its text in pieces."""

    def begin(self, title: str, agent: dict[str, Any]) -> Iterator[str]: ...

    def message(self, role: str, created_at: str | None) -> Iterator[str]: ...

    def part(self, view: PartView) -> Iterator[str]: ...

    def end_message(self) -> Iterator[str]: ...

    def subagent(self, label: str) -> Iterator[str]: ...

    def end_subagent(self) -> Iterator[str]: ...

    def end(self) -> Iterator[str]: ...
