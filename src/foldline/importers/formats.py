"""The agent log formats Foldline reads: one module per format, registered here.

Each format module (``claude_code``, ``codex``, ...) defines one ``FORMAT``, a :class:`Format`:

- ``name``: the source name stored on its agents (``"gemini-cli"``), and ``label`` for people;
- ``suffixes``: the file name endings worth reading under a folder (``".jsonl"``, ``".json"``, ...);
- ``sniff(head)``: whether a file is one of its logs, told from the content (``Head``: its first
  bytes and first JSON lines), never from the name;
- ``groups(head, finding)``: the sessions that file holds or belongs to, added to ``finding``
  (most formats: one file, one session; a Claude Code session spans its subagent files; an agent's
  SQLite store holds many sessions);
- ``parse(group, registry, namespace)``: one session parsed whole, a :class:`~.session.Session`;
- ``locations()``: the folders where the agent keeps its logs on this machine, existing or not.

``FORMATS`` is tried in order and the first whose ``sniff`` says yes reads the file, so a format
whose lines could pass for another's (Gemini CLI's JSONL beside Claude Code's) comes first.
Adding an agent is one module and one line in ``FORMATS``.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from ..registry import Registry
from .jsonl import first_lines
from .session import Json, Session

HEAD_BYTES = 64 * 1024  # the bytes of a file that sniffing sees (``Head.data``)
HEAD_LINES = 20  # the JSON lines of a file that sniffing sees (``Head.lines``)


@dataclass
class Group:
    """The files of one session."""

    format: str  # a Format's name
    main: Path  # the file that names the session (for a store of many sessions, the store)
    session_id: str
    agents: list[Path] = field(default_factory=list)  # its other files: subagents' logs, a database's -wal
    orphan: bool = False  # a Claude Code agent file without its session
    shared: bool = False  # its main file holds other sessions too (a SQLite store, an Aider log)

    @property
    def record(self) -> Path:
        """The key of what the last import saw of its files: the main file's path, or for a file
        shared by many sessions, that path and the session (each is checked on its own)."""
        return Path(f"{self.main}#{self.session_id}") if self.shared else self.main

    @property
    def files(self) -> list[Path]:
        return [self.main, *self.agents]


@dataclass
class Finding:
    """The sessions found so far in one import, and the files passed over with the reason."""

    groups: dict[tuple[Path, str], Group] = field(default_factory=dict)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    ids: dict[Path, str | None] = field(default_factory=dict)  # a format's per-file memo (Claude Code's ids)

    def add(self, group: Group) -> None:
        self.groups.setdefault((group.main, group.session_id), group)

    def has(self, main: Path) -> bool:
        return any(key[0] == main for key in self.groups)


class Head:
    """A file's first bytes, and the JSON objects of its first lines, read once for every format."""

    def __init__(self, path: Path):
        self.path = path
        with path.open("rb") as f:
            self.data = f.read(HEAD_BYTES)

    @cached_property
    def lines(self) -> list[Json]:
        """The JSON objects of the first lines, each read whole (a JSONL log's first line may be long)."""
        return first_lines(self.path, HEAD_LINES)

    @property
    def blank(self) -> bool:
        return not self.data.strip()


@dataclass(frozen=True)
class Format:
    name: str
    label: str
    suffixes: tuple[str, ...]
    sniff: Callable[[Head], bool]
    groups: Callable[[Head, Finding], None]
    parse: Callable[[Group, Registry, uuid.UUID], Session]
    locations: Callable[[], list[Path]]


def one_session(name: str, session_id: Callable[[Head], str]) -> Callable[[Head, Finding], None]:
    """``groups`` for a format whose every file is one session."""

    def groups(head: Head, finding: Finding) -> None:
        finding.add(Group(name, head.path, session_id(head)))

    return groups


def registered() -> tuple[Format, ...]:
    """Every format, in the order they are tried."""
    from . import (
        aider,
        amp,
        antigravity,
        claude_code,
        codex,
        continue_cli,
        copilot_cli,
        copilot_vscode,
        crush,
        cursor,
        droid,
        gemini_cli,
        opencode,
        openhands,
        pi,
        windsurf,
    )

    # SQLite stores first: told from their first bytes, before any format reads a binary file's lines.
    # Gemini and VS Code documents carry a ``sessionId`` a Claude Code line would: tried next,
    # with Amp's, told from their first bytes before any format reads a pretty-printed file's lines
    return (
        crush.FORMAT,
        opencode.FORMAT,
        continue_cli.FORMAT,
        gemini_cli.FORMAT,
        copilot_vscode.FORMAT,
        amp.FORMAT,
        claude_code.FORMAT,
        codex.FORMAT,
        copilot_cli.FORMAT,
        cursor.FORMAT,
        aider.FORMAT,
        openhands.FORMAT,
        pi.FORMAT,
        droid.FORMAT,
        windsurf.FORMAT,
        antigravity.FORMAT,
    )


def by_name(name: str) -> Format:
    return next(f for f in registered() if f.name == name)


def suffixes() -> tuple[str, ...]:
    return tuple(dict.fromkeys(s for f in registered() for s in f.suffixes))


def sniff(head: Head) -> Format | None:
    return next((f for f in registered() if f.sniff(head)), None)
