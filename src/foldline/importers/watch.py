"""Following session folders live: new lines are imported as Claude Code or Codex write them.

``follow`` runs in the foreground (``foldline import --watch``); ``attach_watcher`` runs the
same loop in a background thread that starts and stops with the app (``foldline serve
--watch``). Each change re-imports only the sessions whose files changed, and of those only
the new and changed messages.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import click
import watchfiles

from ..local import Local
from ..transcripts import Transcripts
from .first_run import session_dirs
from .importer import import_paths
from .summary import Summary

log = logging.getLogger(__name__)


def is_log(change: watchfiles.Change, path: str) -> bool:
    return change != watchfiles.Change.deleted and path.endswith(".jsonl")


def follow(
    transcripts: Transcripts,
    paths: list[str],
    account_id: str,
    workspace_id: str,
    on_import: Callable[[Summary], None] | None = None,
    stop: threading.Event | None = None,
) -> None:
    """Import the changed session files under ``paths`` until ``stop`` is set (or forever)."""
    for changes in watchfiles.watch(*paths, watch_filter=is_log, stop_event=stop, debounce=300, step=100):
        changed = sorted({path for _, path in changes if Path(path).is_file()})
        if not changed:
            continue
        try:
            summary = import_paths(transcripts, changed, account_id=account_id, workspace_id=workspace_id)
            if on_import is not None and (summary.messages or summary.skipped):
                on_import(summary)
        except Exception:  # one bad batch must not end the watch: told, and the next change is read
            log.warning("foldline watch: importing %d changed file(s) failed", len(changed), exc_info=True)


class Watcher:
    """A background thread following some folders, stopped on request."""

    def __init__(self, transcripts: Transcripts, local: Local, paths: list[str]):
        self.stop_event = threading.Event()
        self.thread = threading.Thread(
            target=follow,
            args=(transcripts, paths, local.account_id, local.workspace_id, None, self.stop_event),
            name="foldline-watch",
            daemon=True,
        )

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.stop_event.set()
        self.thread.join(5)


def attach_watcher(app: Any, transcripts: Transcripts, local: Local, paths: list[str] | None = None) -> Watcher | None:
    """Follow the session folders (default: this machine's) while ``app`` runs."""
    folders = paths if paths is not None else [str(p) for p in session_dirs()]
    if not folders:
        click.echo("--watch: no Claude Code or Codex session folder on this machine, nothing to follow")
        return None
    click.echo(f"watching {', '.join(folders)} for new session lines")
    watcher = Watcher(transcripts, local, folders)
    inner = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(a: Any) -> AsyncIterator[Any]:
        async with inner(a) as state:
            watcher.start()
            try:
                yield state
            finally:
                watcher.stop()

    app.router.lifespan_context = lifespan
    return watcher
