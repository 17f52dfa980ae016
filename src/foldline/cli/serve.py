"""``foldline serve``: open the store, make the local account, say how to call it, run uvicorn."""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING

import click

from ..importers.ahead import Ahead, ahead
from ..importers.first_run import import_on_first_run, session_dirs
from ..importers.watch import Watcher
from ..indexer import QUIET_SECONDS, Indexer
from ..local_account import Local, ensure_local
from ..service import Transcripts
from ..settings import Settings
from ..store import shown, sqlite_file
from .common import db_option, service, settings_for
from .progress import progress_bar

if TYPE_CHECKING:  # the web app loads only when serving: every other command starts faster
    from ..app import Background


@click.command()
@db_option
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    envvar="FOLDLINE_HOST",
    help="The address to listen on: 127.0.0.1 is this machine only; 0.0.0.0 every network interface.",
)
@click.option(
    "--port",
    default=8765,
    show_default=True,
    envvar="FOLDLINE_PORT",
    type=click.IntRange(1, 65535),
    help="The port to listen on.",
)
@click.option("--watch", is_flag=True, help="Follow this machine's agents' session folders live (see docs/import.md).")
@click.option(
    "--import/--no-import",
    "first_import",
    default=None,
    help="On first run (an empty local workspace), import this machine's agents' sessions, "
    "or the samples without any. Default: on a SQLite file yes, on PostgreSQL (a team's database) no.",
)
@click.option("--workers", default=1, show_default=True, type=click.IntRange(1, 64), help="Processes serving the app.")
def serve(db: str, host: str, port: int, watch: bool, first_import: bool | None, workers: int) -> None:
    """Run the service (the API and the panel)."""
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    from .. import server  # uvicorn loads for serve alone

    server.check_address(host, port)  # before anything is printed, opened or imported
    settings = settings_for(db)
    if first_import is None:
        first_import = sqlite_file(settings.db) is not None
    # A first run's import gets workers, forked before the store is opened (importers.ahead); they
    # are gone before the server starts.
    folders = [str(p) for p in session_dirs()] if first_import else []
    with ahead(settings, folders) as pool, service(settings.db) as transcripts:
        run(transcripts, settings, host, port, watch, first_import, workers, pool)


def run(
    transcripts: Transcripts, settings: Settings, host: str, port: int, watch: bool, first_import: bool, workers: int,
    pool: Ahead | None = None,
) -> None:  # fmt: skip
    # A team's database (PostgreSQL) gets no "local" account unless this machine's sessions go
    # into it (--import, --watch): its people sign in with accounts of their own.
    team = sqlite_file(settings.db) is None
    local = ensure_local(transcripts, settings.db) if first_import or watch or not team else None
    if first_import and local is not None:
        with progress_bar() as told:
            first = import_on_first_run(transcripts, local, told, pool)
        if first is not None:
            click.echo(first.line())
    if pool is not None:
        pool.close()
    # The search indexer beside the app (one per serving process group: with several workers,
    # this supervising process runs it, as it runs the watcher).
    from .. import server
    from ..app import create_app

    # It lets an import in another process write first (up to the import's own backlog bound).
    quiet_keep = int(settings.import_backlog_mb * 1_000_000)
    background: list[Background] = [Indexer(transcripts, quiet=QUIET_SECONDS, quiet_keep=quiet_keep)]
    if watch and local is not None:
        background += watchers(transcripts, local)
    base = f"http://{'127.0.0.1' if host in ('0.0.0.0', '::') else host}:{port}"
    click.echo(f"Foldline on {shown(settings.db)}")
    if host in ("0.0.0.0", "::"):
        click.echo(f"  listening on every network interface: others reach it at this machine's address, port {port}")
    if local is not None:
        click.echo(f"  panel  {base}/signin#token={local.token}")
        click.echo(f"  API    {base}/api  (Authorization: Bearer {local.token})")
    else:
        click.echo(f"  panel  {base}/signin  (sign in with an account's token)")
        click.echo("  no local account in a team's database: make the first one with")
        click.echo("    foldline account create NAME --json   (its token is shown once)")
    click.echo(f"  spec   {base}/api/openapi.json")
    if local is not None:
        click.echo(f"  local workspace {local.workspace_id}")
    if workers == 1:
        server.run(create_app(transcripts, background), settings, host, port, log_level="info")
        return
    # Each worker opens the store itself (from the environment); this process supervises them
    # and runs the folder watcher, whose writes reach every worker's followers.
    os.environ["FOLDLINE_DB"] = settings.db
    for work in background:
        work.start()
    try:
        server.run("foldline.app:from_environment", settings, host, port, workers, log_level="info")
    finally:
        for work in background:
            work.stop()


def watchers(transcripts: Transcripts, local: Local) -> list[Background]:
    """A watcher of this machine's session folders, and of those that appear later."""
    folders = [str(p) for p in session_dirs()]
    if folders:
        click.echo(f"watching {', '.join(folders)} for new session lines (and agents' folders made later)")
    else:
        click.echo("--watch: no agent's session folder on this machine yet; following them as they appear")
    return [Watcher(transcripts, local, folders, found=lambda: [str(p) for p in session_dirs()])]
