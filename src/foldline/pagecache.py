"""Transcript pages this process has sent, kept by the conversation's ``seq`` they were read at.

A page is a pure function of its conversation's stored rows and the page's parameters, and a
conversation's ``seq`` grows with every write to it (messages, parts, turn-ends). So a page read
asks the database only whether the conversation is still visible to the caller and still at the
``seq`` of the kept copy (:meth:`Store.read_page`'s ``known_seq``): one small statement. When it
is, the kept bytes are sent; when not, the page is read and kept anew. Access is decided by the
database on every read, never by the cache, and several processes each keep their own copies,
each checked against the one database.

What the cache cannot see: rows changed behind Foldline's back (SQL typed by hand into the
database) are sent as they were until the conversation's next write. Set
``FOLDLINE_PAGE_CACHE_MB=0`` to read every page from the database.
"""

from __future__ import annotations

import threading
from typing import NamedTuple

from cachetools import LRUCache

# (conversation id, subagent call or None, cut, limit, before): what makes a page.
PageKey = tuple[str, str | None, bool, int | None, int | None]


# What an entry costs besides its page's bytes and its call id: the key's tuple and agent id,
# the kept tuple, the bytes object's header and the cache's own dict and LRU order entries
# (measured with tracemalloc: about 600 bytes on CPython 3.11, the dict's growth included).
ENTRY_BYTES = 640


class Kept(NamedTuple):
    seq: int
    body: bytes
    size: int  # what it is counted as against the cache's memory (_size)


class PageCache:
    """Least recently used pages, up to ``most_bytes`` in all; a page over an eighth of that is
    not kept (one whole transcript must not push out every cut page)."""

    def __init__(self, most_bytes: int) -> None:
        self.most_bytes = most_bytes
        self._largest = most_bytes // 8
        self._pages: LRUCache[PageKey, Kept] = LRUCache(maxsize=max(most_bytes, 1), getsizeof=_size)
        self._lock = threading.Lock()  # pages are read on the event loop and in the read threads

    def get(self, key: PageKey) -> Kept | None:
        if not self._largest:
            return None
        with self._lock:
            return self._pages.get(key)

    def put(self, key: PageKey, seq: int, body: bytes) -> None:
        size = len(body) + len(key[1] or "") + ENTRY_BYTES
        if len(body) > self._largest or size > self.most_bytes:
            return
        with self._lock:
            # The last read wins, even one of an older seq (a slower reader, or a database put
            # back from a backup): a copy that no longer holds costs one more read, then heals.
            self._pages[key] = Kept(seq, body, size)

    def forget(self, conversation_id: str) -> None:
        """Drop the pages of a conversation (deleted: none of them is sent again)."""
        with self._lock:
            for key in [k for k in self._pages if k[0] == conversation_id]:
                del self._pages[key]

    def __len__(self) -> int:
        return len(self._pages)


def _size(kept: Kept) -> int:
    return kept.size
