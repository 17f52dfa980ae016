"""Whole exports' cost: time and peak memory of ``Transcripts.export`` for a transcript holding a
20 MB tool output, in each format, on SQLite and PostgreSQL, beside a whole read of the same
transcript (``page_json`` without a limit, which is built in memory at once).

Run: ``.venv/bin/python bench/export.py`` (``--backends sqlite``, ``--output-mb 20``). The
transcript is 200 ordinary messages (a prompt, a thought, a small tool call and an answer each)
and one message whose bash output is ``--output-mb`` MB, written through the write door. Time is
the best of ``RUNS`` exports read to their end (the bytes counted, not kept); peak memory is
tracemalloc's peak of Python allocations during one more export (the driver's bytes and strings
included; SQLite's own page cache is not Python's), less what was allocated before it began.
"""

from __future__ import annotations

import argparse
import time
import tracemalloc
import uuid
from collections.abc import Callable, Iterator
from typing import Any

from databases import postgres_url, sqlite_url
from rich.console import Console
from rich.table import Table

from foldline.service import Transcripts
from foldline.settings import Settings

RUNS = 3
MESSAGES = 200
BACKENDS = {"sqlite": ("SQLite", sqlite_url), "postgres": ("PostgreSQL", postgres_url)}


def tool(output: str) -> dict[str, Any]:
    return {"type": "tool-bash", "toolCallId": uuid.uuid4().hex, "state": "output-available",
            "input": {"command": "make test"}, "output": output}  # fmt: skip


def write(t: Transcripts, output_mb: int) -> tuple[str, str]:
    account = t.create_account("bench")["id"]
    workspace = t.create_workspace("bench", [account])["id"]
    agent = t.create_agent(account, workspace, "export bench")["id"]
    for n in range(MESSAGES):
        t.put_message(account, agent, str(uuid.uuid4()), {"role": "user", "parts": [
            {"type": "text", "text": f"Step {n}: run the tests and tell me what failed."}]})  # fmt: skip
        t.put_message(account, agent, str(uuid.uuid4()), {"role": "assistant", "parts": [
            {"type": "reasoning", "text": "I run the tests first. " * 20},
            tool(f"ran 120 tests in 3.{n:03d}s\n" * 40),
            {"type": "text", "text": f"All tests pass at step {n}."},
        ]})  # fmt: skip
    line = "a line a long build printed, again and again, 0123456789\n"
    big = line * (output_mb * 2**20 // len(line))
    t.put_message(account, agent, str(uuid.uuid4()), {"role": "assistant", "parts": [tool(big)]})
    return account, agent


def consumed(chunks: Iterator[bytes]) -> int:
    return sum(len(chunk) for chunk in chunks)


def timed(run: Callable[[], int]) -> tuple[float, int]:
    best, size = float("inf"), 0
    for _ in range(RUNS):
        start = time.perf_counter()
        size = run()
        best = min(best, time.perf_counter() - start)
    return best, size


def peak(run: Callable[[], int]) -> int:
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        run()
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def measure(label: str, url: str, output_mb: int, table: Table) -> None:
    with Transcripts.open(Settings(db=url, page_cache_mb=0)) as t:
        account, agent = write(t, output_mb)
        runs: dict[str, Callable[[], int]] = {
            fmt: (lambda fmt=fmt: consumed(t.export(account, agent, fmt)[2])) for fmt in ("json", "md", "html")
        }
        runs["whole read (page_json)"] = lambda: len(t.page_json(account, agent))
        for name, run in runs.items():
            seconds, size = timed(run)
            table.add_row(label, name, f"{size / 2**20:.1f}", f"{seconds:.2f}", f"{peak(run) / 2**20:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backends", default="sqlite,postgres", help="comma-separated: sqlite, postgres")
    parser.add_argument("--output-mb", type=int, default=20, help="the big tool output's size in MB")
    args = parser.parse_args()
    table = Table(title=f"Whole export: {MESSAGES * 2 + 1} messages, one {args.output_mb} MB output")
    for column in ("backend", "format", "MB out", "seconds (best of 3)", "peak MB (Python)"):
        table.add_column(column, justify="right" if column[0] in "smp" else "left")
    for key in args.backends.split(","):
        label, url_of = BACKENDS[key]
        with url_of() as url:
            measure(label, url, args.output_mb, table)
    Console(width=120).print(table)


if __name__ == "__main__":
    main()
