"""``foldline import PATH...``: import the session logs of every agent Foldline reads, with a progress bar."""

from __future__ import annotations

from pathlib import Path

import click
import orjson

from ..errors import Unusable
from ..importers import Summary, has_session_logs
from ..importers.ahead import ahead
from ..indexer import Indexer
from ..local_account import ensure_local
from ..settings import default_db
from ..store import sqlite_file
from .common import service, settings_for
from .progress import progress_bar

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
    with ahead(settings_for(db), paths) as pool, service(db) as transcripts:
        from ..importers import import_paths
        from ..importers.watch import follow

        if not existed and file is not None and file.exists():  # a new, empty store: maybe not the one meant
            click.echo(f"created a new store at {file}; pass --db or set FOLDLINE_DB to use another", err=True)
        if account_id is None or workspace_id is None:
            local = ensure_local(transcripts, db)
            account_id = account_id or local.account_id
            workspace_id = workspace_id or local.workspace_id
        # Beside the writes, the index takes only a backlog too big to search in time; the rest
        # waits for a server, the next import, or --wait-index (searches read it meanwhile).
        keep = int(transcripts.settings.import_backlog_mb * 1_000_000)
        indexer = Indexer(transcripts, keep=keep)
        indexer.start()
        try:
            with progress_bar(not as_json) as told:
                summary = import_paths(
                    transcripts, paths, account_id=account_id, workspace_id=workspace_id, progress=told, pool=pool
                )
            if wait_index:
                indexer.stop()
                indexer.catch_up()
            report(summary, as_json)
            if watch:  # a process that stays: it indexes everything, as a server does
                if pool is not None:
                    pool.close()  # what it follows comes a few lines at a time
                indexer.stop()
                indexer = Indexer(transcripts)
                indexer.start()
                folders = ", ".join(str(Path(p).expanduser().resolve()) for p in paths)
                click.echo(f"watching {folders} for new session lines (Ctrl-C to stop)", err=True)
                follow(transcripts, list(paths), account_id, workspace_id, lambda s: report(s, as_json))
        finally:
            indexer.stop()
