"""Following session folders live: new lines (or rewritten files) are imported as the agents write them.

A JSONL log is appended to; a JSON document (Gemini CLI's chat, Amp's thread, VS Code's chat,
Continue's session) is rewritten whole, in place or renamed over the old one; a SQLite store
(Crush, opencode) is written to its ``-wal`` (the db itself changes only at a checkpoint). Each
is re-read when it changes: a change to a store's ``<db>-wal`` re-reads ``<db>``, from a copy,
and writes only the messages that changed, like any other re-import.

``follow`` runs in the foreground (``foldline import --watch``); a :class:`Watcher` runs the
same loop in a background thread that the app starts and stops with itself (``foldline serve
--watch`` passes it to ``create_app``). Each change re-imports only the sessions whose files changed, and of those only
the new and changed messages.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path

import watchfiles

from ..local_account import Local
from ..service import Transcripts
from .formats import suffixes
from .importer import import_paths
from .summary import Summary

log = logging.getLogger(__name__)


WAL = "-wal"  # a SQLite store's write-ahead log, beside it: ``<db>-wal``


def is_log(change: watchfiles.Change, path: str) -> bool:
    """Whether a change may be a session's: a file some format reads, or a store's ``-wal``."""
    if change == watchfiles.Change.deleted:
        return False
    return path.endswith(suffixes()) or (path.endswith(WAL) and path[: -len(WAL)].endswith(suffixes()))


def changed_logs(changes: set[tuple[watchfiles.Change, str]]) -> list[str]:
    """The files to import again for some changes: a ``-wal`` stands for its store."""
    found = {path[: -len(WAL)] if path.endswith(WAL) else path for _, path in changes}
    return sorted(path for path in found if Path(path).is_file())


def own_store(transcripts: Transcripts) -> Path | None:
    """The file of the store being written to, when it is a SQLite file (its writes change its
    ``-wal`` all the time: never a reason to read it)."""
    db = transcripts.settings.db
    return None if "://" in db else Path(db).expanduser().resolve()


def follow(
    transcripts: Transcripts,
    paths: list[str],
    account_id: str,
    workspace_id: str,
    on_import: Callable[[Summary], None] | None = None,
    stop: threading.Event | None = None,
    found: Callable[[], list[str]] | None = None,
) -> None:
    """Import the changed session files under ``paths`` until ``stop`` is set (or forever).
    Foldline's own SQLite store, if it lies under them, is never read as an agent's.

    ``found`` names the folders to follow as they are now (``serve --watch``: the agents'
    default locations that exist); it is asked every :data:`RESCAN_SECONDS`, and a folder it names
    that was not followed (an agent installed since, a VS Code workspace opened since) is
    imported whole, then followed too."""
    stop = stop or threading.Event()
    watched = list(paths)
    while not stop.is_set():
        if not watched:  # nothing to follow yet: the folders may come
            stop.wait(RESCAN_SECONDS)
            watched = more_folders(transcripts, watched, found, account_id, workspace_id, on_import)
            continue
        if not watch(transcripts, watched, account_id, workspace_id, on_import, stop, found):
            return
        watched = more_folders(transcripts, watched, found, account_id, workspace_id, on_import)


RESCAN_SECONDS = 10.0  # how often ``follow`` asks for new folders to follow


def watch(
    transcripts: Transcripts, paths: list[str], account_id: str, workspace_id: str,
    on_import: Callable[[Summary], None] | None, stop: threading.Event, found: Callable[[], list[str]] | None,
) -> bool:  # fmt: skip
    """Import changes under ``paths`` until ``stop`` is set (False) or ``found`` names a folder
    not among them (True: watch again, with it)."""
    own = own_store(transcripts)
    looked = time.monotonic()
    for changes in watchfiles.watch(
        *paths, watch_filter=is_log, stop_event=stop, debounce=300, step=100,
        rust_timeout=int(RESCAN_SECONDS * 1000), yield_on_timeout=True,
    ):  # fmt: skip
        changed = [path for path in changed_logs(changes) if Path(path).resolve() != own]
        if changed:
            imported(transcripts, changed, account_id, workspace_id, on_import)
        if found is not None and time.monotonic() - looked >= RESCAN_SECONDS:
            looked = time.monotonic()
            if set(found()) - set(paths):
                return True
    return False


def more_folders(
    transcripts: Transcripts, watched: list[str], found: Callable[[], list[str]] | None, account_id: str,
    workspace_id: str, on_import: Callable[[Summary], None] | None,
) -> list[str]:  # fmt: skip
    """``watched`` and the folders ``found`` names now that it does not hold, each imported whole first."""
    new = [path for path in (found() if found is not None else []) if path not in watched]
    if new:
        log.info("foldline watch: following %s too", ", ".join(new))
        imported(transcripts, new, account_id, workspace_id, on_import)
    return watched + new


def imported(
    transcripts: Transcripts, paths: list[str], account_id: str, workspace_id: str,
    on_import: Callable[[Summary], None] | None,
) -> None:  # fmt: skip
    try:
        summary = import_paths(transcripts, paths, account_id=account_id, workspace_id=workspace_id)
        if on_import is not None and (summary.messages or summary.skipped):
            on_import(summary)
    except Exception:  # one bad batch must not end the watch: told, and the next change is read
        log.warning("foldline watch: importing %d changed file(s) failed", len(paths), exc_info=True)


class Watcher:
    """A background thread following some folders, stopped on request."""

    def __init__(
        self, transcripts: Transcripts, local: Local, paths: list[str], found: Callable[[], list[str]] | None = None
    ):
        self.paths = paths
        self.stop_event = threading.Event()
        self.thread = threading.Thread(
            target=follow,
            args=(transcripts, paths, local.account_id, local.workspace_id, None, self.stop_event, found),
            name="foldline-watch",
            daemon=True,
        )

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.stop_event.set()
        self.thread.join(5)
