"""The indexer: the chunks each write stored pending, given to the engine's search index after
the write committed, a short batch at a time (:meth:`~foldline.service.Transcripts.index_pending`).

It runs beside ``foldline serve`` (a :class:`~foldline.app.Background`, started and stopped with
the app) and ``foldline import``. A search never waits for it: every search also reads the
pending chunks. Pending is a column, so a stop, a crash or ``kill -9`` loses nothing: the next
start resumes. Any number may run on one PostgreSQL store; on SQLite the write lock takes them
in turn.

A server's indexer indexes everything. An import's (``keep``) lets its writes go first: it
indexes only while more than ``keep`` code points are pending, so a first import of a few
hundred MB is not slowed by index work that a server does later, and searches meanwhile walk a
backlog small enough to answer in time (``FOLDLINE_IMPORT_BACKLOG_MB``, docs/import.md).

A server's indexer (``quiet``) lets another process's writes go first too: while the backlog
grows by writes that are not its own process's (an import beside it), and stays under the same
bound, it waits until ``quiet`` seconds have passed without them. The server does not tax an
import it is not serving; it indexes the import's chunks when the import is done.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .service import Transcripts


log = logging.getLogger("foldline")

IDLE_SECONDS = 0.5  # how often an idle indexer looks for other processes' writes (its own wake it)
PAUSE_SECONDS = 0.002  # between two batches: a writer waiting for SQLite's lock takes it then
RETRY_SECONDS = 5.0  # after a failed batch (the database away): it rolled back, nothing is lost
LOOK_SECONDS = 0.5  # how often an indexer with ``keep`` measures the backlog (a read of its sums)
QUIET_SECONDS = 1.0  # a server's indexer waits this long after another process's last write


class Indexer:
    """Index the backlog in a thread of its own until stopped; woken by this process's writes."""

    def __init__(
        self, transcripts: Transcripts, idle: float = IDLE_SECONDS, keep: int = 0, quiet: float = 0.0,
        quiet_keep: int = 0,
    ) -> None:  # fmt: skip
        self.transcripts = transcripts
        self.idle = idle
        self.keep = keep  # code points left pending for another indexer (0: index everything)
        self.quiet = quiet  # seconds without another process's writes before indexing (0: no wait)
        self.quiet_keep = quiet_keep  # ... unless more code points than this are pending
        self._behind = False
        self._next_look = 0.0
        self._own = False  # this process wrote since the last look at the newest chunk
        self._last: int | None = None  # the newest chunk's id at that look
        self._others_at = -float("inf")  # when another process's writes last added chunks
        self._small = True  # the backlog was under quiet_keep at the last look at its size
        self._next_size = 0.0
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._stop.clear()
        self.transcripts.listeners.append(self.wake)
        self._thread = threading.Thread(target=self._run, daemon=True, name="foldline-indexer")
        self._thread.start()

    def stop(self) -> None:
        """Stop after the batch in hand (it commits; the rest stays pending for the next start)."""
        self._stop.set()
        self._wake.set()
        if self.wake in self.transcripts.listeners:
            self.transcripts.listeners.remove(self.wake)
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def wake(self, conversation_id: str = "") -> None:
        """Look for pending chunks now (a listener on this process's writes)."""
        self._own = True
        self._wake.set()

    def catch_up(self) -> int:
        """Index in the calling thread until nothing is pending; the chunks indexed."""
        done = 0
        while chunks := self.transcripts.index_pending():
            done += chunks
        return done

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                done = self.transcripts.index_pending() if self._over_keep() and not self._yielding() else 0
            except Exception:
                log.warning("search indexer: a batch failed; trying again in %.0f s", RETRY_SECONDS, exc_info=True)
                self._stop.wait(RETRY_SECONDS)
                continue
            if done:
                self._stop.wait(PAUSE_SECONDS)
                continue
            self._wake.wait(self.idle)
            self._wake.clear()

    def _over_keep(self) -> bool:
        """Whether to index now. With ``keep``: while the backlog is over it, and once over, until
        it is down to half (so the writes are not interrupted by every other batch). Behind, it
        looks after every batch; else at most every :data:`LOOK_SECONDS`."""
        if not self.keep:
            return True
        now = time.monotonic()
        if self._behind or now >= self._next_look:
            self._next_look = now + LOOK_SECONDS
            pending = int(self.transcripts.backlog()["pending_code_points"])
            self._behind = pending > (self.keep // 2 if self._behind else self.keep)
        return self._behind

    def _yielding(self) -> bool:
        """With ``quiet``: whether another process's writes go first. Before each batch the
        newest chunk's id is read (one index lookup): chunks written since the last look while
        this process wrote nothing are another process's. The backlog's size, a sum over every
        pending chunk, is read at most every :data:`LOOK_SECONDS`."""
        if not self.quiet:
            return False
        last = self.transcripts.last_chunk()
        now = time.monotonic()
        if self._last is not None and last > self._last and not self._own:
            self._others_at = now
        self._last, self._own = last, False
        if now - self._others_at >= self.quiet:
            return False
        if now >= self._next_size:
            self._next_size = now + LOOK_SECONDS
            self._small = int(self.transcripts.backlog()["pending_code_points"]) <= self.quiet_keep
        return self._small
