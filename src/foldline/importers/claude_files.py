"""Which files make one Claude Code session, and how to tell a Claude Code log.

A session is its main file plus its subagent files: ``agent-*.jsonl`` beside it with the same
``sessionId``, and ``<session>/subagents/agent-*.jsonl``. An agent file whose session is not on
disk is a session of its own (an orphan).
"""

from __future__ import annotations

import os
from pathlib import Path

from .codex import is_codex_line
from .formats import Finding, Group, Head
from .jsonl import Json, first_lines

NAME = "claude-code"
LINE_TYPES = {
    "user",
    "assistant",
    "system",
    "summary",
    "file-history-snapshot",
    "queue-operation",
    "ai-title",
    "last-prompt",
    "permission-mode",
    "attachment",
    "progress",
}


def sniff(head: Head) -> bool:
    """A Claude Code line carries a ``sessionId`` or one of its line types; the first line that
    either Claude Code or Codex would claim decides."""
    for d in head.lines:
        if is_codex_line(d):
            return False
        if isinstance(d.get("sessionId"), str) or (isinstance(d.get("type"), str) and d["type"] in LINE_TYPES):
            return True
    return False


def claude_id(lines: list[Json], path: Path) -> str:
    return next((str(d["sessionId"]) for d in lines if isinstance(d.get("sessionId"), str)), path.stem)


def is_agent_file(path: Path) -> bool:
    return path.name.startswith("agent-")


def session_file_of(agent: Path, session_id: str) -> Path | None:
    """The main file an agent file belongs to, if it is on disk."""
    if agent.parent.name == "subagents":
        candidate = agent.parent.parent.with_name(agent.parent.parent.name + ".jsonl")
    else:
        candidate = agent.parent / f"{session_id}.jsonl"
    return candidate if candidate.is_file() else None


def is_sidecar(path: Path) -> bool:
    """A subagent's ``agent-*.meta.json`` beside its log: read with the log, not a log itself."""
    return path.name.endswith(".meta.json") and path.with_name(path.name[: -len(".meta.json")] + ".jsonl").is_file()


def unreadable(path: Path, exc: OSError) -> tuple[str, str]:
    """A file passed over because it cannot be read (a dangling link, a file deleted meanwhile)."""
    return str(path), f"cannot be read: {exc.strerror or exc}"


def agent_files_of(main: Path, session_id: str, finding: Finding) -> list[Path]:
    """The subagent files of a main session file; a sibling that cannot be read is passed over."""
    ids = finding.ids
    found = sorted(main.with_suffix("").joinpath("subagents").glob("agent-*.jsonl"))
    for sibling in sorted(main.parent.glob("agent-*.jsonl")):
        if sibling not in ids:
            try:
                ids[sibling] = claude_id(first_lines(sibling, 5), sibling)
            except OSError as exc:
                ids[sibling] = None  # told once, however many sessions share the folder
                finding.skipped.append(unreadable(sibling, exc))
        if ids[sibling] == session_id:
            found.append(sibling)
    return found


def groups(head: Head, finding: Finding) -> None:
    path = head.path
    session_id = claude_id(head.lines, path)
    main = session_file_of(path, session_id) if is_agent_file(path) else path
    if main is None:
        finding.add(Group(NAME, path, session_id, orphan=True))
        return
    if finding.has(main):
        return
    try:
        if main != path:
            session_id = claude_id(first_lines(main), main)
        agents = agent_files_of(main, session_id, finding)
    except OSError as exc:  # the session file went away (or its folder cannot be listed)
        finding.skipped.append(unreadable(main, exc))
        return
    finding.add(Group(NAME, main, session_id, agents))


def locations() -> list[Path]:
    """``~/.claude/projects``; ``$CLAUDE_CONFIG_DIR`` replaces ``~/.claude``, as in Claude Code."""
    return [Path(os.environ.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude") / "projects"]
