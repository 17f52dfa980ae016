"""Reading a JSONL session log: one JSON object a line; a line that is not one is passed over.

A line is bounded (``FOLDLINE_IMPORT_MAX_LINE``, 256 MiB by default; ``bounded`` sets it for an
import): a longer one is skipped and noted (``LongLine``), and it is read in pieces of
``PIECE`` bytes, its end found without keeping them, so a 2 GB line costs one piece of memory.
A line longer than one piece but within the bound is read twice: once to find its end, then whole.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Generator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import orjson

from ..settings import import_max_line

Json = dict[str, Any]
PIECE = 1 << 20  # the most of a line read at once before its end is known


@dataclass(frozen=True, slots=True)
class LongLine:
    """A line passed over for being longer than the bound: its file, its number (from 1), its bytes."""

    path: str
    number: int
    size: int
    bound: int

    @property
    def reason(self) -> str:
        return (
            f"line {self.number} is {self.size:,} bytes, longer than the bound of {self.bound:,} bytes "
            "(FOLDLINE_IMPORT_MAX_LINE): that line was skipped, the rest imported"
        )


@dataclass
class Bound:
    """The line bound of an import, and the long lines it passed over (each once)."""

    limit: int
    long: dict[tuple[str, int], LongLine] = field(default_factory=dict)


BOUND: contextvars.ContextVar[Bound | None] = contextvars.ContextVar("foldline_import_bound", default=None)


@contextlib.contextmanager
def bounded(limit: int) -> Iterator[Bound]:
    """Within this block, lines longer than ``limit`` bytes are skipped and noted in the Bound."""
    bound = Bound(limit)
    token = BOUND.set(bound)
    try:
        yield bound
    finally:
        BOUND.reset(token)


class TooLarge(OSError):
    """A JSON document larger than the bound: not read (it would be read whole)."""

    def __init__(self, size: int, limit: int):
        super().__init__(0, f"the document is {size:,} bytes, larger than the bound of {limit:,} bytes "
                            "(FOLDLINE_IMPORT_MAX_LINE)")  # fmt: skip


def check_size(path: Path) -> None:
    """Refuse a document (read whole) larger than the bound."""
    limit, size = current_bound().limit, path.stat().st_size
    if size > limit:
        raise TooLarge(size, limit)


def current_bound() -> Bound:
    return BOUND.get() or Bound(import_max_line())


def raw_lines(path: Path) -> Generator[bytes]:
    """The lines of a file as bytes, a line longer than the bound left out (and noted)."""
    bound = current_bound()
    with path.open("rb") as f:
        number = 0
        for raw, size in pieces(f, bound.limit):
            number += 1
            if raw is None:
                bound.long.setdefault((str(path), number), LongLine(str(path), number, size, bound.limit))
            else:
                yield raw


def pieces(f: IO[bytes], limit: int) -> Iterator[tuple[bytes | None, int]]:
    """Each line of ``f`` and its length without the line break; None in its place when that
    length is past ``limit``."""
    at = 0
    while True:
        raw = f.readline(PIECE)
        if not raw:
            return
        if raw.endswith(b"\n") or len(raw) < PIECE:
            at += len(raw)
            length = len(raw.rstrip(b"\r\n"))
            yield (raw if length <= limit else None), length
            continue
        size, raw = len(raw), b""  # a long line: its end found piece by piece, none of them kept
        while True:
            more = f.readline(PIECE)
            size += len(more)
            if not more or more.endswith(b"\n"):
                break
        length = size - 1 if more.endswith(b"\n") else size
        if length > limit:
            at += size
            yield None, length
            continue
        f.seek(at)
        yield f.read(size), length
        at += size


def read_lines(path: Path) -> Iterator[Json]:
    """The JSON objects of a file, in order. A torn or foreign line (a file being written) is skipped."""
    for raw in raw_lines(path):
        if not raw.strip():
            continue
        try:
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        if isinstance(obj, dict):
            yield obj


def first_raw_line(path: Path) -> bytes:
    """The file's first line within the bound (empty if it has none)."""
    lines = raw_lines(path)
    try:
        return next(lines, b"")
    finally:
        lines.close()


def first_lines(path: Path, count: int = 20) -> list[Json]:
    """The first ``count`` objects (enough to tell the format and the session id)."""
    found: list[Json] = []
    for obj in read_lines(path):
        found.append(obj)
        if len(found) >= count:
            break
    return found
