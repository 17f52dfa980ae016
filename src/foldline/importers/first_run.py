"""The first run of ``foldline serve``: something real to look at, at once.

When the local workspace has no agents yet, the user's own sessions of every agent Foldline
reads (each format's ``locations()``, docs/import.md's table: Claude Code's
``~/.claude/projects``, Codex's ``$CODEX_HOME/sessions``…) are imported
into it; on a machine with none, the sample sessions shipped with Foldline are, once, into a
workspace of their own, "Samples" (``Transcripts.make_samples_workspace``), so they are never
taken for the user's own and ``foldline samples remove`` (or the panel's button) removes them all.
Since the local workspace stays empty meanwhile, the user's own sessions are still imported by
the first serve that finds them.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from ..local_account import Local
from ..service import Transcripts
from .ahead import Ahead
from .detect import has_session_logs
from .formats import registered
from .importer import Progress, import_paths
from .summary import Summary


def session_dirs() -> list[Path]:
    """The folders where the known agents keep their sessions on this machine, if they exist."""
    candidates = [path for f in registered() for path in f.locations()]
    return [path for path in dict.fromkeys(candidates) if path.is_dir()]


def samples_dir() -> Path:
    return Path(str(resources.files("foldline").joinpath("samples")))


@dataclass(frozen=True)
class FirstRun:
    """What the first run imported, and from where (the session folders, or the samples)."""

    summary: Summary
    sources: list[Path]
    samples: bool

    def line(self) -> str:
        where = ", ".join(str(p) for p in self.sources)
        if self.samples:
            where = 'the sample sessions, in a workspace of their own ("Samples"; `foldline samples remove`)'
        return f"First run: {self.summary.line()} from {where}"


def import_on_first_run(
    transcripts: Transcripts, local: Local, progress: Progress | None = None, pool: Ahead | None = None
) -> FirstRun | None:
    """Import the local sessions (or the samples) if the local workspace is empty, telling
    ``progress`` how far it is; ``pool``'s workers parse ahead (:mod:`.ahead`)."""
    if transcripts.list_agents(local.account_id, local.workspace_id)["agents"]:
        return None
    # A folder an agent made but holds no session yet (a fresh install) is no reason to show an
    # empty panel: the samples come then too.
    found = [path for path in session_dirs() if has_session_logs([path])]
    workspace_id = local.workspace_id
    if not found:
        samples = transcripts.make_samples_workspace(local.account_id)
        if samples is None:
            return None  # the samples came once already (and were maybe removed since)
        workspace_id = samples
    sources = found or [samples_dir()]
    summary = import_paths(
        transcripts, sources, account_id=local.account_id, workspace_id=workspace_id, progress=progress, pool=pool
    )
    return FirstRun(summary, sources, samples=not found)
