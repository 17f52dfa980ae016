"""Maintenance: stamping stored messages so their reads send them as stored (``foldline maintenance
restamp``), and the search index built after the writes (:mod:`foldline.indexer`, ``foldline status``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .core import Core
from .stored import passes_read_checks, whole_or_none

RESTAMP_BATCH = 500  # messages looked at per step of `restamp`


class Maintenance(Core):
    def restamp(self, progress: Callable[[int, int], None] = lambda stamped, left: None) -> tuple[int, int]:
        """Stamp with :attr:`read_stamp` every stored message that passes today's read checks
        (those stored before stamps, or under another registry's metadata schemas), so their
        reads send them as stored; ``progress(stamped, kept)`` after each batch. A message that
        fails them is kept as it is and keeps every check on each read. Nothing is rewritten and
        no follower is told. Returns (stamped, kept)."""
        stamped = kept = 0
        after: tuple[str, str] | None = None
        while batch := self._store.unstamped(self.read_stamp, after, RESTAMP_BATCH):
            for conv, message_id in batch:
                row = self._store.message(conv, message_id)
                message = whole_or_none(row) if row is not None else None
                sound = message is not None and passes_read_checks(message, self.registry)
                if sound and row is not None and self._store.stamp(conv, message_id, row.seq, self.read_stamp):
                    stamped += 1
                else:
                    kept += 1
            after = (batch[-1][0].id, batch[-1][1])
            progress(stamped, kept)
        return stamped, kept

    # -- the search index, built after the writes ----------------------------------------

    def index_pending(self) -> int:
        """Give one batch of pending chunks to the engine's search index (the indexer's step, a
        short transaction of its own); the chunks indexed (0: nothing was pending)."""
        if not self._store.has_pending():  # a read: an idle indexer takes no write lock
            return 0
        return self._store.index_pending()[0]

    def last_chunk(self) -> int:
        """The id of the newest chunk written: it grows with every write of searchable text."""
        return self._store.last_chunk()

    def backlog(self, account: str | None = None) -> dict[str, Any]:
        """What the search index has not reached yet: every chunk (``account`` None, for the
        operator's ``foldline status``) or those of the transcripts ``account`` may read."""
        found = self._store.backlog(account)
        age = found.oldest_seconds
        return {"pending_chunks": found.chunks, "pending_code_points": found.chars,
                "oldest_pending_seconds": None if age is None else round(age, 1)}  # fmt: skip
