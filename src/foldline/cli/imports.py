"""``foldline import PATH...``: import the session logs of every agent Foldline reads, with a progress bar."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import click
import orjson

from ..errors import Unusable
from ..importers import Summary, has_session_logs
from ..importers.ahead import Ahead, ahead
from ..importers.detect import find_groups
from ..importers.importer import Found, import_paths, parse_first
from ..indexer import Indexer
from ..local_account import ensure_local
from ..settings import default_db
from ..store import sqlite_file
from .common import service, settings_for
from .progress import progress_bar

if TYPE_CHECKING:
    from ..service import Transcripts

WHERE_LOGS = (
    "Claude Code keeps its session logs in ~/.claude/projects, Codex in ~/.codex/sessions;"
    " docs/import.md says where each other agent keeps its own"
)


def report(summary: Summary, as_json: bool) -> None:
    if as_json:
        click.echo(orjson.dumps(summary.to_json()).decode())
        return
    click.echo(summary.line())
    for path, reason in summary.skipped:
        click.echo(f"  skipped {path}: {reason}")
    for path, _, reason in summary.foreign:
        click.echo(f"  {path}: {reason}")


@click.command("import")
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option("--db", default=default_db, show_default="$FOLDLINE_DB or foldline.db", help="A SQLite file or URL.")
@click.option("--workspace", "workspace_id", help="Workspace id (default: the local workspace).")
@click.option("--account", "account_id", help="Account id that owns the agents (default: the local account).")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@click.option("--watch", is_flag=True, help="Keep following the paths and import new lines as they appear.")
@click.option(
    "--wait-index",
    is_flag=True,
    help="Return only once the search index has every chunk imported (searches find them before, too).",
)
def import_command(
    paths: tuple[str, ...],
    db: str,
    workspace_id: str | None,
    account_id: str | None,
    as_json: bool,
    watch: bool,
    wait_index: bool,
) -> None:
    """Import agents' session logs (files or folders, any mix of agents) into Foldline.

    docs/import.md lists the agents it reads and where each keeps its logs."""
    # Said before any store is opened or made. A watched folder may get its first log later.
    missing = [p for p in paths if not Path(p).expanduser().exists()]
    if missing:
        raise Unusable(f"no such file or folder: {', '.join(missing)}", WHERE_LOGS)
    if not watch and not has_session_logs(paths):
        where = ", ".join(str(Path(p).expanduser().resolve()) for p in paths)
        raise Unusable(f"no session logs of an agent Foldline reads in {where}", WHERE_LOGS)
    file = sqlite_file(db)
    existed = file is None or file.exists()
    # The workers are forked first, with one thread here and no store open (importers.ahead).
    with ahead(settings_for(db), paths) as pool:
        found = find_groups(paths)
        # Into a new store, its local workspace's id is chosen now, and the workers parse the
        # first sessions while the store is made (each is taken only if its plan agrees).
        first = str(uuid.uuid4()) if pool is not None and not existed and workspace_id is None else None
        if pool is not None and first is not None:
            parse_first(pool, found, first)
        with service(db) as transcripts:
            if not existed and file is not None and file.exists():  # a new, empty store: maybe not the one meant
                click.echo(f"created a new store at {file}; pass --db or set FOLDLINE_DB to use another", err=True)
            if account_id is None or workspace_id is None:
                local = ensure_local(transcripts, db, first)
                account_id = account_id or local.account_id
                workspace_id = workspace_id or local.workspace_id
            run(transcripts, Run(paths, found, pool, account_id, workspace_id), as_json, watch, wait_index)


@dataclass(frozen=True)
class Run:
    """An import to run: its paths and the sessions found under them, its workers, who and where."""

    paths: tuple[str, ...]
    found: Found
    pool: Ahead | None
    account_id: str
    workspace_id: str


def run(transcripts: Transcripts, job: Run, as_json: bool, watch: bool, wait_index: bool) -> None:
    # Beside the writes, the index takes only a backlog too big to search in time; the rest
    # waits for a server, the next import, or --wait-index (searches read it meanwhile).
    keep = int(transcripts.settings.import_backlog_mb * 1_000_000)
    indexer = Indexer(transcripts, keep=keep)
    indexer.start()
    try:
        with progress_bar(not as_json) as told:
            summary = import_paths(
                transcripts, job.paths, account_id=job.account_id, workspace_id=job.workspace_id, progress=told,
                pool=job.pool, found=job.found,
            )  # fmt: skip
        if wait_index:
            indexer.stop()
            indexer.catch_up()
        report(summary, as_json)
        if watch:  # a process that stays: it indexes everything, as a server does
            if job.pool is not None:
                job.pool.close()  # what it follows comes a few lines at a time
            indexer.stop()
            indexer = Indexer(transcripts)
            indexer.start()
            folders = ", ".join(str(Path(p).expanduser().resolve()) for p in job.paths)
            click.echo(f"watching {folders} for new session lines (Ctrl-C to stop)", err=True)
            from ..importers.watch import follow

            follow(transcripts, list(job.paths), job.account_id, job.workspace_id, lambda s: report(s, as_json))
    finally:
        indexer.stop()
