"""What an import did: agents and messages written, and the files passed over with the reason."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Summary:
    agents: int = 0  # agents that got at least one new or changed message
    messages: int = 0  # messages written (new or changed)
    parts: int = 0  # parts of those messages
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, reason)
    unchanged: int = 0  # sessions found already up to date
    # (path, claimed session, what was done): files claiming a session another file was first imported from
    foreign: list[tuple[str, str, str]] = field(default_factory=list)
    forgotten: int = 0  # sessions whose agent was deleted with --forget: passed over

    def add(self, other: Summary) -> None:
        self.agents += other.agents
        self.messages += other.messages
        self.parts += other.parts
        self.skipped.extend(other.skipped)
        self.unchanged += other.unchanged
        self.foreign.extend(other.foreign)
        self.forgotten += other.forgotten

    def to_json(self) -> dict[str, Any]:
        return {
            "agents": self.agents,
            "messages": self.messages,
            "parts": self.parts,
            "skipped": [{"path": path, "reason": reason} for path, reason in self.skipped],
            "foreign": [{"path": path, "session": session, "reason": reason} for path, session, reason in self.foreign],
            "forgotten": self.forgotten,
            "unchanged": self.unchanged,
        }

    def line(self) -> str:
        text = f"imported {self.messages} messages ({self.parts} parts) into {self.agents} agents"
        if self.unchanged:
            text += f", {self.unchanged} sessions already up to date"
        if self.forgotten:
            text += f", {self.forgotten} deleted sessions passed over (deleted with --forget)"
        if self.skipped:
            text += f", skipped {len(self.skipped)} files"
        if self.foreign:
            text += f", {len(self.foreign)} files claiming another file's session imported apart"
        return text
