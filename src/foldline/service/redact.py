"""Redacting a store written before redaction, in place (``foldline redact``)."""

from __future__ import annotations

from collections.abc import Callable

from ..errors import Invalid
from ..store import Conversation, StaleWrite
from .stored import whole_or_none
from .writes import TURN_END_TRIES, Writes

REDACT_BATCH = 200  # messages looked at per step of `redact`


class Redact(Writes):
    def redact_stored(
        self, progress: Callable[[int, int], None] = lambda looked, secrets: None
    ) -> tuple[int, int, int]:
        """Redact every stored message and title in place, as the write door now would: a message
        with a secret is written again (its parts, cut heads and tails, search chunks and index
        with it), then the store leaves no copy of the old text behind (``Store.compact``).
        ``progress(looked, secrets)`` after each batch. Returns (messages looked at, messages
        rewritten, secrets redacted)."""
        if self.redactor is None:
            raise Invalid("redaction is off (FOLDLINE_REDACT=off): nothing to redact with")
        looked = rewritten = secrets = 0
        seen: set[str] = set()
        after: tuple[str, str] | None = None
        while batch := self._store.message_keys(after, REDACT_BATCH):
            for conv, message_id in batch:
                looked += 1
                if conv.id not in seen:
                    seen.add(conv.id)
                    secrets += self._redact_title(conv)
                found = self._redact_one(conv, message_id)
                rewritten, secrets = rewritten + (found > 0), secrets + found
            after = (batch[-1][0].id, batch[-1][1])
            progress(looked, secrets)
        self._store.compact()
        return looked, rewritten, secrets

    def _redact_title(self, conv: Conversation) -> int:
        assert self.redactor is not None
        title, found = self.redactor.text(conv.title) if conv.title is not None else (None, 0)
        if title is not None and found:
            self._store.set_title(conv.id, title)
        return found

    def _redact_one(self, conv: Conversation, message_id: str) -> int:
        assert self.redactor is not None
        for _ in range(TURN_END_TRIES):
            row = self._store.message(conv, message_id)
            message = whole_or_none(row) if row is not None else None
            if row is None or message is None:
                return 0
            found = self.redactor.message(message)[1]
            if not found:
                return 0
            try:
                self._write(conv, message, expect_seq=row.seq, checked=row.checked == self.read_stamp)
            except StaleWrite:
                continue  # written meanwhile: read it again
            return found
        return 0
