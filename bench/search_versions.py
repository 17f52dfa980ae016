"""Benchmark: the search queries of bench/search.py, one store, two builds of the code, alternating.

    .venv/bin/python bench/search_versions.py --size 30MB --build before=OTHER_CHECKOUT/src

The corpus and the store are bench/search.py's (the same generator and seed, written through the
write door, the indexer caught up), built once per backend with this checkout's code. Then a
server of each build (``--build NAME=SRC``, any number: another checkout's ``src``, put first on
the server's ``PYTHONPATH``; then ``now``: this checkout) is started in turn on the same store, ``--rounds`` times
alternating, and each times the queries (bench/search.py's ``time_queries``, every answer
checked). It prints the median over rounds of each round's p50, per backend, query and build.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

import httpx
import search as bench
from search import BACKENDS, Backend, Server

from foldline.registry import Registry
from foldline.settings import Settings


class BuildServer(Server):
    """bench/search.py's server, run with another checkout's ``src`` first on the path."""

    def __init__(self, url: str, src: Path | None) -> None:
        env = dict(os.environ)
        if src is not None:
            env["PYTHONPATH"] = os.pathsep.join([str(src), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        self.port = bench.free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen(
            [sys.executable, bench.__file__, "--serve", url, "--port", str(self.port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        bench.wait_until_up(self.base, self.proc)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=bench.parse_size, default=bench.parse_size("30MB"))
    parser.add_argument("--backends", default="sqlite,postgres")
    parser.add_argument("--build", action="append", default=[], help="NAME=SRC: another checkout's src folder")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--runs", type=int, default=15, help="timed runs of each query per round")
    args = parser.parse_args()
    builds: list[tuple[str, Path | None]] = [(b.split("=", 1)[0], Path(b.split("=", 1)[1])) for b in args.build]
    builds.append(("now", None))
    started = time.perf_counter()

    def log(line: str) -> None:
        print(f"[{time.perf_counter() - started:6.0f} s] {line}", flush=True)

    tmp = Path(tempfile.mkdtemp(prefix="foldline-bench-corpus-"))
    p50s: dict[tuple[str, str, str], list[float]] = {}
    answers: dict[tuple[str, str, str], str] = {}
    try:
        corpus = bench.make_corpus(tmp, bench.read_pools(Registry.load(Settings().registry)), args.size)
        with ExitStack() as stack:
            for key in [b.strip() for b in args.backends.split(",") if b.strip()]:
                name, make_url = BACKENDS[key]
                url = stack.enter_context(make_url())
                b = Backend(name, url, corpus, {})
                b.server.close()
                for step in corpus.steps:
                    b.build(step)
                if name == "PostgreSQL":
                    with b.store.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
                        conn.exec_driver_sql("ANALYZE")
                log(f"{name}: {bench.human(corpus.steps[-1].stored)} stored")
                for r in range(args.rounds):
                    for build, src in builds:
                        server = BuildServer(url, src)
                        try:
                            with httpx.Client(base_url=server.base, timeout=600, headers=b.auth) as http:
                                got = bench.time_queries(http, b.workspace, bench.queries(corpus, True), args.runs)
                        finally:
                            server.close()
                        for q, answer, times in got:
                            p50s.setdefault((name, q.name, build), []).append(statistics.median(times))
                            answers[(name, q.name, build)] = answer
                            log(f"  round {r} {name} {build} {q.name}: {answer}; p50 {statistics.median(times):.1f} ms")
                b.store.engine.dispose()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"\n{bench.human(args.size)} stored; the median of {args.rounds} alternating rounds' p50 (ms)\n")
    names = [name for name, _ in builds]
    print("| backend | query | " + " | ".join(names) + " | " + " | ".join(f"{n}'s answer" for n in names) + " |")
    print("|---" * (2 + 2 * len(names)) + "|")
    rows: dict[tuple[str, str], dict[str, float]] = {}
    for (backend, query, build), values in p50s.items():
        rows.setdefault((backend, query), {})[build] = statistics.median(values)
    for (backend, query), by in rows.items():
        cells = " | ".join(f"{by[n]:.1f}" for n in names)
        said = " | ".join(answers[(backend, query, n)] for n in names)
        print(f"| {backend} | {query} | {cells} | {said} |")


if __name__ == "__main__":
    main()
