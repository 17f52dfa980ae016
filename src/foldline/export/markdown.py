"""The Markdown export: what one hands to another agent or pastes in an issue.

Every prompt, answer, thought and tool call (its whole input, output and error) is in a fenced
block whose fence is longer than any run of backticks in it, so no content can close it early;
names and titles go in code spans built the same way. Subagents follow the call that started
them, one heading level down."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from .text import longest_run, one_line
from .view import PartView, Pieces

FIELDS = (("input", "Input", "json"), ("output", "Output", ""), ("errorText", "Error", ""))


def fenced(pieces: Pieces, info: str = "") -> Iterator[str]:
    """The text in a fenced block no run of backticks in it can close (read twice: once to
    measure, once to write)."""
    fence = "`" * max(3, longest_run(pieces()) + 1)
    yield f"{fence}{info}\n"
    last = "\n"
    for piece in pieces():
        if piece:
            last = piece[-1]
            yield piece
    if last != "\n":
        yield "\n"
    yield f"{fence}\n\n"


def code(text: str) -> str:
    """``text`` on one line as a code span no backtick in it can end."""
    text = one_line(text)
    ticks = "`" * (longest_run([text]) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


class Markdown:
    def __init__(self) -> None:
        self.depth = 1

    def begin(self, title: str, agent: dict[str, Any]) -> Iterator[str]:
        yield f"# {one_line(title) or 'Transcript'}\n\n"
        yield f"Agent {code(str(agent.get('id', '')))}, exported whole by Foldline.\n\n"

    def message(self, role: str, created_at: str | None) -> Iterator[str]:
        when = f" · {code(created_at)}" if created_at else ""
        yield f"{'#' * min(6, self.depth + 1)} {one_line(role) or 'message'}{when}\n\n"

    def part(self, view: PartView) -> Iterator[str]:
        name, kind, part = view.tool, view.kind, view.part
        if name is not None:
            yield f"**Tool {code(name)}** ({one_line(str(part.get('state', 'unknown')))})\n\n"
            for field, label, info in FIELDS:
                if view.has(field):
                    yield f"{label}:\n\n"
                    yield from fenced(view.text(field), info)
        elif kind == "text":
            yield from fenced(view.text("text"), "markdown")
        elif kind == "reasoning":
            yield "**Thought**\n\n"
            yield from fenced(view.text("text"), "text")
        elif kind == "step-start":
            return
        elif kind in ("file", "reasoning-file"):
            url = str(part.get("url", ""))
            where = "a data: URL, in the JSON export" if url.startswith("data:") or "url" in view.omitted else code(url)
            facts = f"{code(str(part.get('filename', '')))} ({code(str(part.get('mediaType', '')))})"
            yield f"**File** {facts}: {where}\n\n"
        else:
            yield f"**{code(kind or 'part')}**\n\n"
            text = json.dumps(part, indent=2, ensure_ascii=False)
            yield from fenced(lambda: iter((text,)), "json")

    def end_message(self) -> Iterator[str]:
        return iter(())

    def subagent(self, label: str) -> Iterator[str]:
        self.depth += 1
        yield f"{'#' * min(6, self.depth)} Subagent · {one_line(label)}\n\n"

    def end_subagent(self) -> Iterator[str]:
        self.depth -= 1
        return iter(())

    def end(self) -> Iterator[str]:
        return iter(())
