"""``foldline serve``: open the store, make the local account, print how to call it, run uvicorn."""

from __future__ import annotations

import logging

import click
import uvicorn

from .app import create_app
from .importers.first_run import import_on_first_run
from .importers.watch import attach_watcher
from .local import ensure_local
from .settings import Settings
from .store import open_store
from .transcripts import Transcripts


def run(settings: Settings, host: str, port: int, watch: bool = False, first_import: bool = True) -> None:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    transcripts = Transcripts(open_store(settings.db), settings=settings)
    local = ensure_local(transcripts, settings.db)
    if first_import:
        import_on_first_run(transcripts, local)
    app = create_app(transcripts)
    if watch:
        attach_watcher(app, transcripts, local)
    base = f"http://{host}:{port}"
    click.echo(f"Foldline on {settings.db}")
    click.echo(f"  panel  {base}/?token={local.token}")
    click.echo(f"  API    {base}/api  (Authorization: Bearer {local.token})")
    click.echo(f"  spec   {base}/api/openapi.json")
    click.echo(f"  local workspace {local.workspace_id}")
    uvicorn.run(app, host=host, port=port, log_level="info")
