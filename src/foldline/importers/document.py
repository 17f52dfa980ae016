"""Reading a log that is one JSON document (rewritten whole on every turn), and its times.

An agent that rewrites its document may be caught mid-write, or a copy may be cut short: then
the readable part is kept. The document is cut after the last value that closed, and the
brackets still open are closed, so a session that breaks off imports every message written
whole before the break (and the fields of the one it stopped in that were complete).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from .jsonl import check_size

OPENERS = {ord("{"): ord("}"), ord("["): ord("]")}
CLOSERS = {ord("}"), ord("]")}
QUOTE, BACKSLASH = ord('"'), ord("\\")
CUTS_TRIED = 16  # the last closed values tried as a cut, newest first


def read_document(path: Path) -> Any:
    """The JSON document in ``path``, or its readable part when it breaks off; None if none is.
    A document larger than the import's bound is refused (``jsonl.TooLarge``, an ``OSError``)."""
    check_size(path)
    data = path.read_bytes()
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return readable_part(data)


def readable_part(data: bytes) -> Any:
    """The longest prefix of a broken document that is a document once its open brackets close."""
    cuts: list[tuple[int, bytes]] = []
    stack: list[int] = []
    in_string = escaped = False
    for i, byte in enumerate(data):
        if in_string:
            if escaped:
                escaped = False
            elif byte == BACKSLASH:
                escaped = True
            elif byte == QUOTE:
                in_string = False
        elif byte == QUOTE:
            in_string = True
        elif byte in OPENERS:
            stack.append(OPENERS[byte])
        elif byte in CLOSERS and stack:
            stack.pop()
            if stack:
                cuts.append((i + 1, bytes(reversed(stack))))
                del cuts[:-CUTS_TRIED]
    for end, closing in reversed(cuts):
        try:
            return orjson.loads(data[:end] + closing)
        except orjson.JSONDecodeError:
            continue
    return None


def file_time(path: Path) -> str:
    """A file's modification time in the store's form: the time of a log that states none."""
    moment = datetime.fromtimestamp(path.stat().st_mtime, tz=UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def ms_time(value: Any) -> str | None:
    """An epoch time in milliseconds in the store's form (UTC, milliseconds, ``Z``), or None."""
    if not isinstance(value, int | float) or isinstance(value, bool) or not 0 < value < 10**14:
        return None
    moment = datetime.fromtimestamp(value / 1000, tz=UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
