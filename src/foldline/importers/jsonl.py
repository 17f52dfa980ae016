"""Reading a JSONL session log: one JSON object a line; a line that is not one is passed over."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

Json = dict[str, Any]


def read_lines(path: Path) -> Iterator[Json]:
    """The JSON objects of a file, in order. A torn or foreign line (a file being written) is skipped."""
    with path.open("rb") as f:
        for raw in f:
            if not raw.strip():
                continue
            try:
                obj = orjson.loads(raw)
            except orjson.JSONDecodeError:
                continue
            if isinstance(obj, dict):
                yield obj


def first_lines(path: Path, count: int = 20) -> list[Json]:
    """The first ``count`` objects (enough to tell the format and the session id)."""
    found: list[Json] = []
    for obj in read_lines(path):
        found.append(obj)
        if len(found) >= count:
            break
    return found
