"""The first run of ``foldline serve``: something real to look at, at once.

When the local workspace has no agents yet, the user's own Claude Code sessions
(``~/.claude/projects``) and Codex sessions (``$CODEX_HOME/sessions``, by default
``~/.codex/sessions``) are imported; on a machine with neither, the sample sessions shipped
with Foldline are.
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

import click

from ..local import Local
from ..transcripts import Transcripts
from .importer import import_paths
from .summary import Summary


def session_dirs() -> list[Path]:
    """The folders where Claude Code and Codex keep their sessions on this machine, if they exist."""
    codex_home = Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")
    candidates = [Path.home() / ".claude" / "projects", codex_home / "sessions"]
    return [path for path in candidates if path.is_dir()]


def samples_dir() -> Path:
    return Path(str(resources.files("foldline").joinpath("samples")))


def import_on_first_run(transcripts: Transcripts, local: Local) -> Summary | None:
    """Import the local sessions (or the samples) if the local workspace is empty; say what was done."""
    if transcripts.store.agents(local.workspace_id):
        return None
    found = session_dirs()
    where = ", ".join(str(p) for p in found) if found else "the sample sessions"
    summary = import_paths(
        transcripts, found or [samples_dir()], account_id=local.account_id, workspace_id=local.workspace_id
    )
    click.echo(f"First run: {summary.line()} from {where}")
    return summary
