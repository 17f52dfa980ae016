"""Finding sessions: which files are logs, of which format, and which files make one session.

The format is told from the content, never the name: each registered format (``formats``) is
asked in turn whether a file's head is one of its logs, and the first that says yes groups it
into sessions.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from .claude_files import is_sidecar, unreadable
from .formats import Finding, Group, Head, sniff, suffixes

__all__ = ["Group", "find_groups", "has_session_logs", "log_files"]


def log_files(paths: Iterable[str | Path]) -> list[Path]:
    """Every file under these files and folders that some format may read, in a stable order."""
    endings = suffixes()
    found: dict[Path, None] = {}
    for raw in paths:
        path = Path(raw).expanduser()
        if path.is_dir():
            root = path.resolve()
            for child in sorted(path.rglob("*")):
                # a link out of the folder being imported is never followed: its target is not this folder's
                if child.name.endswith(endings) and child.is_file() and child.resolve().is_relative_to(root):
                    found[child.resolve()] = None
        else:
            found[path.resolve()] = None
    return list(found)


def find_groups(paths: Iterable[str | Path]) -> tuple[list[Group], list[tuple[str, str]]]:
    """The sessions under these paths, and the files passed over with the reason."""
    finding = Finding()
    for path in log_files(paths):
        if is_sidecar(path):
            continue
        try:
            head = Head(path)
            if head.blank:
                continue  # an empty log (Claude Code leaves some): nothing to import yet
            kind = sniff(head)
            if kind is None:
                finding.skipped.append((str(path), "not a session log of a known agent"))
            else:
                kind.groups(head, finding)
        except OSError as exc:
            finding.skipped.append(unreadable(path, exc))
    return list(finding.groups.values()), list(dict.fromkeys(finding.skipped))


def has_session_logs(paths: Iterable[str | Path]) -> bool:
    """Whether a session log of a known agent is under these paths (stops at the first)."""
    for path in log_files(paths):
        try:
            if sniff(Head(path)) is not None:
                return True
        except OSError:
            continue
    return False
