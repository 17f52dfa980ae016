"""Finding sessions: which files are logs, of which format, and which files make one session.

The format is told from the content, never the name: Codex lines are ``{timestamp, type,
payload}`` envelopes (or, in mid-2025 files, a bare ``{id, instructions}`` header); Claude Code
lines carry a ``sessionId`` or a Claude line type. A Claude Code session is its main file plus
its subagent files: ``agent-*.jsonl`` beside it with the same ``sessionId``, and
``<session>/subagents/agent-*.jsonl``. An agent file whose session is not on disk is a session
of its own.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from .jsonl import Json, first_lines

CODEX_TYPES = {"session_meta", "response_item", "event_msg", "turn_context", "compacted"}
CLAUDE_TYPES = {
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


@dataclass
class Group:
    """The files of one session."""

    format: str  # "claude-code" or "codex"
    main: Path
    session_id: str
    agents: list[Path] = field(default_factory=list)
    orphan: bool = False  # a Claude Code agent file without its session

    @property
    def files(self) -> list[Path]:
        return [self.main, *self.agents]


def log_files(paths: Iterable[str | Path]) -> list[Path]:
    """Every ``.jsonl`` file under these files and folders, in a stable order."""
    found: dict[Path, None] = {}
    for raw in paths:
        path = Path(raw).expanduser()
        if path.is_dir():
            for child in sorted(path.rglob("*.jsonl")):
                if child.is_file():
                    found[child.resolve()] = None
        else:
            found[path.resolve()] = None
    return list(found)


def sniff(lines: list[Json]) -> str | None:
    for d in lines:
        kind = d.get("type")
        if kind in CODEX_TYPES and "payload" in d:
            return "codex"
        if "record_type" in d or ("instructions" in d and "id" in d and "type" not in d):
            return "codex"
        if isinstance(d.get("sessionId"), str) or kind in CLAUDE_TYPES:
            return "claude-code"
    return None


def codex_id(lines: list[Json], path: Path) -> str:
    for d in lines:
        if d.get("type") == "session_meta" and isinstance(d.get("payload"), dict):
            found = d["payload"].get("id")
        elif "instructions" in d and "type" not in d:
            found = d.get("id")
        else:
            continue
        if isinstance(found, str):
            return found
    return path.stem[-36:]


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


def unreadable(path: Path, exc: OSError) -> tuple[str, str]:
    """A file passed over because it cannot be read (a dangling link, a file deleted meanwhile)."""
    return str(path), f"cannot be read: {exc.strerror or exc}"


def agent_files_of(
    main: Path, session_id: str, ids: dict[Path, str | None], skipped: list[tuple[str, str]]
) -> list[Path]:
    """The subagent files of a main session file; a sibling that cannot be read is passed over."""
    found = sorted(main.with_suffix("").joinpath("subagents").glob("agent-*.jsonl"))
    for sibling in sorted(main.parent.glob("agent-*.jsonl")):
        if sibling not in ids:
            try:
                ids[sibling] = claude_id(first_lines(sibling, 5), sibling)
            except OSError as exc:
                ids[sibling] = None  # told once, however many sessions share the folder
                skipped.append(unreadable(sibling, exc))
        if ids[sibling] == session_id:
            found.append(sibling)
    return found


def find_groups(paths: Iterable[str | Path]) -> tuple[list[Group], list[tuple[str, str]]]:
    """The sessions under these paths, and the files passed over with the reason."""
    groups: dict[Path, Group] = {}
    skipped: list[tuple[str, str]] = []
    ids: dict[Path, str | None] = {}
    for path in log_files(paths):
        try:
            lines = first_lines(path)
            if not lines and blank(path):
                continue  # an empty log (Claude Code leaves some): nothing to import yet
        except OSError as exc:
            skipped.append(unreadable(path, exc))
            continue
        kind = sniff(lines)
        if kind is None:
            skipped.append((str(path), "not a Claude Code or Codex session log"))
        elif kind == "codex":
            groups.setdefault(path, Group("codex", path, codex_id(lines, path)))
        else:
            claude_group(path, claude_id(lines, path), groups, ids, skipped)
    return list(groups.values()), list(dict.fromkeys(skipped))


def has_session_logs(paths: Iterable[str | Path]) -> bool:
    """Whether a Claude Code or Codex session log is under these paths (stops at the first)."""
    for path in log_files(paths):
        try:
            if sniff(first_lines(path)) is not None:
                return True
        except OSError:
            continue
    return False


def blank(path: Path) -> bool:
    with path.open("rb") as f:
        return not f.read(4096).strip()


def claude_group(
    path: Path,
    session_id: str,
    groups: dict[Path, Group],
    ids: dict[Path, str | None],
    skipped: list[tuple[str, str]],
) -> None:
    main = session_file_of(path, session_id) if is_agent_file(path) else path
    if main is None:
        groups.setdefault(path, Group("claude-code", path, session_id, orphan=True))
        return
    if main in groups:
        return
    try:
        if main != path:
            session_id = claude_id(first_lines(main), main)
        agents = agent_files_of(main, session_id, ids, skipped)
    except OSError as exc:  # the session file went away (or its folder cannot be listed)
        skipped.append(unreadable(main, exc))
        return
    groups[main] = Group("claude-code", main, session_id, agents)
