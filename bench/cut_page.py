"""Benchmark: a cut page costs the same whatever the conversation stores.

    .venv/bin/python bench/cut_page.py            # prints the table and writes docs/benchmarks.md
    .venv/bin/python bench/cut_page.py --no-write # prints only

For each backend (a temp SQLite file; a fresh PostgreSQL database at ``FOLDLINE_BENCH_PG``,
default ``postgresql://postgres@127.0.0.1:5432/postgres``, made and dropped here) it builds one
conversation per size in one database, all of the same shape (100 messages, 50 turns; each turn
a user message and an assistant message with one thought and one bash output, both over the cut
bound), and reads the newest 50 messages of each over HTTP from ``foldline serve`` run as its own
process, as a user runs it: cut (``parts=cut``) and whole. (A server in a thread of the bench's
own process would share its interpreter lock, and every median would be Python's 5 ms
thread-switch interval.)
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
from databases import postgres_url, sqlite_url
from throughput import foldline as serve_process

from foldline.service import Transcripts
from foldline.settings import Settings
from foldline.store import open_store

TURNS = 50
PAGE = 50
CUT_ROUNDS = 100
# Characters per turn at scale 1: a 23 000-character bash output and a 5 000-character thought,
# so the conversation stores about 1.4 MB; scales 10 and 100 give about 14 MB and 140 MB.
OUTPUT_CHARS = 23_000
THOUGHT_CHARS = 5_000
SCALES = {"1.4 MB": 1, "14 MB": 10, "140 MB": 100}
DOC = Path(__file__).resolve().parent.parent / "docs" / "benchmarks.md"


@dataclass
class Row:
    backend: str
    size: str
    stored: int
    cut_bytes: int
    whole_bytes: int
    cut_ms: float
    whole_ms: float
    cut_rps: float


def filler(chars: int, seed: int) -> str:
    line = f"{seed:04d} build step ok: compiling module and linking objects ✓\n"
    return (line * (chars // len(line) + 1))[:chars]


def build(transcripts: Transcripts, scale: int) -> tuple[str, str, int]:
    """A conversation of the bench's shape; its agent id, the owner's token, the bytes stored."""
    owner = transcripts.create_account("bench")
    workspace = transcripts.create_workspace("bench", [owner["id"]])
    agent = transcripts.create_agent(owner["id"], workspace["id"], "bench")["id"]
    stored = 0
    for turn in range(TURNS):
        output = filler(OUTPUT_CHARS * scale, turn)
        thought = filler(THOUGHT_CHARS * scale, turn + 1)
        user = {"role": "user", "parts": [{"type": "text", "text": f"turn {turn}: run the build"}]}
        reply = {
            "role": "assistant",
            "parts": [
                {"type": "reasoning", "text": thought},
                {"type": "tool-bash", "toolCallId": f"call-{turn}", "state": "output-available",
                 "input": {"command": "make"}, "output": output},
            ],
        }
        for message in (user, reply):
            transcripts.put_message(owner["id"], agent, str(uuid.uuid4()), message)
        stored += len(output.encode()) + len(thought.encode())
    return agent, owner["token"], stored


@contextmanager
def serving(url: str, agent: str, token: str) -> Iterator[str]:
    """``foldline serve`` on the database at ``url``, in a process of its own; its base URL."""
    server = serve_process(url, 1, f"/api/agents/{agent}/messages?limit=1", token)
    try:
        yield server.base
    finally:
        server.stop()


def timed_ms(call: Callable[[], object]) -> float:
    start = time.perf_counter()
    call()
    return (time.perf_counter() - start) * 1000


def requests_per_second(call: Callable[[], object], seconds: float = 2.0, workers: int = 4) -> float:
    deadline = time.perf_counter() + seconds

    def loop() -> int:
        count = 0
        while time.perf_counter() < deadline:
            call()
            count += 1
        return count

    start = time.perf_counter()
    with ThreadPoolExecutor(workers) as pool:
        total = sum(pool.map(lambda _: loop(), range(workers)))
    return total / (time.perf_counter() - start)


def reader(http: httpx.Client, agent: str, cut: bool) -> Callable[[], bytes]:
    params: dict[str, str | int] = {"limit": PAGE, **({"parts": "cut"} if cut else {})}

    def read() -> bytes:
        response = http.get(f"/api/agents/{agent}/messages", params=params)
        response.raise_for_status()
        return response.content

    return read


def measure(backend: str, sizes: list[str], transcripts: Transcripts) -> list[Row]:
    """Build every size in one database, then time the reads with the sizes interleaved.

    Interleaving keeps a shared machine's drift (other jobs, CPU frequency) out of the comparison.
    """
    built = {size: build(transcripts, SCALES[size]) for size in sizes}
    rows = []
    first_agent, first_token, _ = next(iter(built.values()))
    url = transcripts.settings.db
    with serving(url, first_agent, first_token) as base, httpx.Client(base_url=base, timeout=300) as http:
        cuts, wholes, tokens = {}, {}, {}
        for size, (agent, token, _) in built.items():
            tokens[size] = token
            cuts[size] = reader(http, agent, cut=True)
            wholes[size] = reader(http, agent, cut=False)
        cut_times: dict[str, list[float]] = {size: [] for size in sizes}
        for _ in range(CUT_ROUNDS):
            for size in sizes:
                http.headers["Authorization"] = f"Bearer {tokens[size]}"
                cut_times[size].append(timed_ms(cuts[size]))
        for size in sizes:
            http.headers["Authorization"] = f"Bearer {tokens[size]}"
            whole_ms = statistics.median(timed_ms(wholes[size]) for _ in range(5 if SCALES[size] >= 100 else 15))
            rows.append(Row(backend, size, built[size][2], len(cuts[size]()), len(wholes[size]()),
                            statistics.median(cut_times[size]), whole_ms, requests_per_second(cuts[size])))
            print(format_row(rows[-1]), flush=True)
    return rows



BACKENDS = {"SQLite": sqlite_url, "PostgreSQL": postgres_url}


def run(backends: list[str], sizes: list[str]) -> list[Row]:
    rows = []
    for backend in backends:
        with BACKENDS[backend]() as url:
            store = open_store(url)
            try:
                rows += measure(backend, sizes, Transcripts(store, settings=Settings(db=url)))
            finally:
                store.close()
    return rows


HEADER = (
    "| backend | stored | cut page (bytes) | whole page (bytes) | cut / whole | cut median (ms) "
    "| whole median (ms) | cut page req/s |\n|---|---:|---:|---:|---:|---:|---:|---:|"
)


def format_row(r: Row) -> str:
    return (
        f"| {r.backend} | {r.stored / 1e6:.1f} MB | {r.cut_bytes:,} | {r.whole_bytes:,} | "
        f"{100 * r.cut_bytes / r.whole_bytes:.2f}% | {r.cut_ms:.1f} | {r.whole_ms:.1f} | {r.cut_rps:.0f} |"
    )


def verdicts(rows: list[Row]) -> list[str]:
    """The goals, checked per backend: same cut size and latency within 1.2x; under 1% at the top."""
    out = []
    for backend in dict.fromkeys(r.backend for r in rows):
        mine = [r for r in rows if r.backend == backend]
        small, big = mine[0], mine[-1]
        size_drift = abs(big.cut_bytes - small.cut_bytes) / small.cut_bytes
        ratio = big.cut_ms / small.cut_ms
        share = big.cut_bytes / big.whole_bytes
        out.append(
            f"- {backend}: from {small.size} to {big.size} the cut page changes size by {100 * size_drift:.2f}% "
            f"(goal: within 1%: {'met' if size_drift <= 0.01 else 'MISSED'}), its median latency by "
            f"{ratio:.2f}x (goal: within 1.2x: {'met' if ratio <= 1.2 else 'MISSED'}); at {big.size} the cut "
            f"page is {100 * share:.3f}% of the whole page (goal: under 1%: {'met' if share < 0.01 else 'MISSED'})."
        )
    return out


def write_doc(rows: list[Row]) -> None:
    text = DOC.read_text() if DOC.exists() else ""
    start, end = "<!-- cut_page:start -->", "<!-- cut_page:end -->"
    table = "\n".join([HEADER, *map(format_row, rows), "", *verdicts(rows)])
    block = f"{start}\n{table}\n{end}"
    if start in text and end in text:
        text = text[: text.index(start)] + block + text[text.index(end) + len(end) :]
    else:
        text = (text or "# Benchmarks\n") + "\n" + block + "\n"
    DOC.write_text(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", action="append", choices=list(BACKENDS), help="default: both")
    parser.add_argument("--size", action="append", choices=list(SCALES), help="default: all three")
    parser.add_argument("--no-write", action="store_true", help="do not update docs/benchmarks.md")
    args = parser.parse_args()
    print(HEADER, flush=True)
    rows = run(args.backend or list(BACKENDS), args.size or list(SCALES))
    print()
    print("\n".join(verdicts(rows)))
    if not args.no_write and not args.backend and not args.size:
        write_doc(rows)
        print(f"\nwritten to {DOC.relative_to(Path.cwd()) if DOC.is_relative_to(Path.cwd()) else DOC.name}")


if __name__ == "__main__":
    sys.exit(main())
