"""Maintenance: stamping stored messages so their reads send them as stored (``foldline maintenance restamp``)."""

from __future__ import annotations

from collections.abc import Callable

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
