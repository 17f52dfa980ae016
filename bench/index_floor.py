"""Benchmark: what the engines' own trigram indexes cost a write, with no Foldline code at all.

    .venv/bin/python bench/index_floor.py                  # 20 MB of text, 3 rounds, both backends
    .venv/bin/python bench/index_floor.py --mb 5 --rounds 1 --backends sqlite

The floor under the write door's search cost (issue 8 asks for at most +30% over writing with no
searchable text). The text is every string of the real session logs in ``tests/data/transcripts``
(prompts, answers, thoughts, tool inputs and outputs), cut in lines and drawn at random with a
fixed seed up to ``--mb`` (as ``bench/search.py`` builds its corpus), cut in Foldline's chunks
(``foldline.store.chunks.CHUNK`` code points) and written 20 chunks a transaction into a bare
table, two ways in turn:

- **the text alone**: ``INSERT`` into ``t(id, text)``;
- **with the engine's index**, as Foldline builds it: SQLite FTS5 (``tokenize='trigram'``,
  ``detail='none'``, external content) given each row; PostgreSQL a GIN ``gin_trgm_ops`` index on
  the column (text compressed with lz4 both ways, as migration 8 has it).

SQLite runs on a temp file in WAL with ``synchronous=FULL`` (Foldline's default); PostgreSQL on a
fresh database at ``FOLDLINE_BENCH_PG`` (default ``postgresql://postgres@127.0.0.1:5432/postgres``),
made and dropped here. The figure is CPU time, this process's plus (PostgreSQL) its backend's, the
median of ``--rounds``; wall time on a shared machine swings with its load.
"""

from __future__ import annotations

import argparse
import os
import random
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import psycopg
from databases import postgres_url

from foldline.store.chunks import CHUNK

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "transcripts"
BATCH = 20


def strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def corpus(chars: int) -> list[str]:
    """``chars`` code points of the logs' strings, in Foldline's chunks."""
    lines = [line for path in sorted(DATA.rglob("*.jsonl")) for line in path.read_bytes().splitlines() if line.strip()]
    pool = [piece for line in lines for s in strings(_parsed(line)) for piece in s.splitlines() if piece]
    rng, drawn, size = random.Random(8), [], 0
    while size < chars:
        drawn.append(rng.choice(pool))
        size += len(drawn[-1]) + 1
    text = "\n".join(drawn)[:chars]
    return [text[start : start + CHUNK] for start in range(0, len(text), CHUNK)]


def _parsed(line: bytes) -> Any:
    """A log line's JSON (a line of a log that is not JSON Lines counts as none)."""
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        return None


def sqlite_write(chunks: list[str], indexed: bool) -> float:
    with tempfile.TemporaryDirectory() as folder:
        db = sqlite3.connect(Path(folder) / "floor.db", isolation_level=None)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=FULL")
        db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, text TEXT)")
        if indexed:
            db.execute(
                "CREATE VIRTUAL TABLE t_fts USING fts5("
                "text, content='t', content_rowid='id', tokenize='trigram', detail='none')"
            )
        started = time.process_time()
        for first in range(0, len(chunks), BATCH):
            db.execute("BEGIN")
            for n, chunk in enumerate(chunks[first : first + BATCH], start=first + 1):
                db.execute("INSERT INTO t (id, text) VALUES (?, ?)", (n, chunk))
                if indexed:
                    db.execute("INSERT INTO t_fts (rowid, text) VALUES (?, ?)", (n, chunk))
            db.execute("COMMIT")
        spent = time.process_time() - started
        db.close()
        return spent


def backend_cpu(conn: psycopg.Connection[Any]) -> float:
    """CPU seconds of this connection's PostgreSQL backend (it runs on this machine)."""
    fields = Path(f"/proc/{conn.info.backend_pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def postgres_write(url: str, chunks: list[str], indexed: bool) -> float:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
        conn.execute("DROP TABLE IF EXISTS t")
        conn.execute("CREATE TABLE t (id integer PRIMARY KEY, text text COMPRESSION lz4)")
        if indexed:
            conn.execute("CREATE INDEX t_trgm ON t USING gin (text gin_trgm_ops)")
        started, backend = time.process_time(), backend_cpu(conn)
        for first in range(0, len(chunks), BATCH):
            with conn.transaction(), conn.cursor() as cursor:
                rows = list(enumerate(chunks[first : first + BATCH], start=first + 1))
                cursor.executemany("INSERT INTO t (id, text) VALUES (%s, %s)", rows)
        spent = time.process_time() - started + backend_cpu(conn) - backend
        conn.execute("DROP TABLE t")
        return spent


def measure(write: Callable[[bool], float], rounds: int) -> tuple[float, float]:
    alone, indexed = [], []
    for _ in range(rounds):
        alone.append(write(False))
        indexed.append(write(True))
    return statistics.median(alone), statistics.median(indexed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=20, help="millions of code points written (default 20)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--backends", nargs="+", choices=("sqlite", "postgresql"), default=["sqlite", "postgresql"])
    args = parser.parse_args()
    chunks = corpus(int(args.mb * 1_000_000))
    points = sum(map(len, chunks))
    print(f"{points:,} code points in {len(chunks)} chunks, {args.rounds} rounds; load {os.getloadavg()[0]:.1f}\n")
    print("| backend | the text alone, CPU s | with the engine's index, CPU s | index per code point "
          "| index / text alone |")  # fmt: skip
    print("|---|---:|---:|---:|---:|")
    for backend in args.backends:
        if backend == "sqlite":
            alone, indexed = measure(lambda on: sqlite_write(chunks, on), args.rounds)
        else:
            with postgres_url() as url:
                alone, indexed = measure(lambda on: postgres_write(url, chunks, on), args.rounds)
        per_point = (indexed - alone) / points * 1e9
        print(f"| {backend} | {alone:.2f} | {indexed:.2f} | {per_point:.0f} ns | {indexed / alone:.0f}x |")
    print(f"\nload {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
