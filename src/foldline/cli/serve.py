"""``foldline serve``: open the store, make the local account, say how to call it, run uvicorn."""

from __future__ import annotations

import logging
import os

import click

from .. import serving
from ..app import Background, create_app
from ..importers.first_run import import_on_first_run, session_dirs
from ..importers.watch import Watcher
from ..local import Local, ensure_local
from ..settings import Settings
from ..transcripts import Transcripts
from .common import db_option


@click.command()
@db_option
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8765, show_default=True, type=int)
@click.option("--watch", is_flag=True, help="Follow Claude Code and Codex session folders live.")
@click.option("--no-import", is_flag=True, help="Do not import local sessions or samples on first run.")
@click.option(
    "--workers", default=1, show_default=True, type=click.IntRange(1, 64), help="Processes serving the app."
)
def serve(db: str, host: str, port: int, watch: bool, no_import: bool, workers: int) -> None:
    """Run the service (the API and the panel)."""
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    settings = Settings(db=db)
    transcripts = Transcripts.open(settings)
    try:
        local = ensure_local(transcripts, settings.db)
        if not no_import:
            first = import_on_first_run(transcripts, local)
            if first is not None:
                click.echo(first.line())
        background = watchers(transcripts, local) if watch else []
        base = f"http://{host}:{port}"
        click.echo(f"Foldline on {settings.db}")
        click.echo(f"  panel  {base}/signin#token={local.token}")
        click.echo(f"  API    {base}/api  (Authorization: Bearer {local.token})")
        click.echo(f"  spec   {base}/api/openapi.json")
        click.echo(f"  local workspace {local.workspace_id}")
        if workers == 1:
            serving.run(create_app(transcripts, background), settings, host, port, log_level="info")
            return
        # Each worker opens the store itself (from the environment); this process supervises them
        # and runs the folder watcher, whose writes reach every worker's followers.
        os.environ["FOLDLINE_DB"] = settings.db
        for work in background:
            work.start()
        try:
            serving.run("foldline.app:from_environment", settings, host, port, workers, log_level="info")
        finally:
            for work in background:
                work.stop()
    finally:
        transcripts.close()


def watchers(transcripts: Transcripts, local: Local) -> list[Background]:
    """A watcher of this machine's session folders, if it has any."""
    folders = [str(p) for p in session_dirs()]
    if not folders:
        click.echo("--watch: no Claude Code or Codex session folder on this machine, nothing to follow")
        return []
    click.echo(f"watching {', '.join(folders)} for new session lines")
    return [Watcher(transcripts, local, folders)]
