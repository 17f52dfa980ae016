"""The indexer: the chunks each write stored pending, given to the engine's search index after
the write committed, a short batch at a time (:meth:`~foldline.service.Transcripts.index_pending`).

It runs beside ``foldline serve`` (a :class:`~foldline.app.Background`, started and stopped with
the app) and ``foldline import``. A search never waits for it: every search also reads the
pending chunks. Pending is a column, so a stop, a crash or ``kill -9`` loses nothing: the next
start resumes. Any number may run on one PostgreSQL store; on SQLite the write lock takes them
in turn.
"""

from __future__ import annotations

import logging
import threading

from .service import Transcripts

log = logging.getLogger("foldline")

IDLE_SECONDS = 0.5  # how often an idle indexer looks for other processes' writes (its own wake it)
PAUSE_SECONDS = 0.002  # between two batches: a writer waiting for SQLite's lock takes it then
RETRY_SECONDS = 5.0  # after a failed batch (the database away): it rolled back, nothing is lost


class Indexer:
    """Index the backlog in a thread of its own until stopped; woken by this process's writes."""

    def __init__(self, transcripts: Transcripts, idle: float = IDLE_SECONDS) -> None:
        self.transcripts = transcripts
        self.idle = idle
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
                done = self.transcripts.index_pending()
            except Exception:
                log.warning("search indexer: a batch failed; trying again in %.0f s", RETRY_SECONDS, exc_info=True)
                self._stop.wait(RETRY_SECONDS)
                continue
            if done:
                self._stop.wait(PAUSE_SECONDS)
                continue
            self._wake.wait(self.idle)
            self._wake.clear()
