"""Benchmark: the panel's first reads and a rare word on a 10 GB store against a 100 MB one.

    .venv/bin/python bench/scale.py                          # 10 GB per backend; rewrites docs/benchmarks.md
    .venv/bin/python bench/scale.py --size 200MB --small 20MB --no-write   # a quick run
    .venv/bin/python bench/scale.py --backends sqlite --save figures.json
    .venv/bin/python bench/scale.py --report figures.json    # the tables again, from what --save kept

The corpus is bench/search.py's (``make_corpus``: real lines of the test transcripts drawn into
agents of 20 to 120 messages, a rare hex token planted in five messages of the first step), in
two steps: ``--small`` and ``--size`` stored, without search.py's giant outputs (a single output
of ``size / 10`` is not what these figures are about). Each backend is written from the JSONL
as an import writes: agent by agent through ``Transcripts.put_messages`` in-process, in batches
of the importer's size, while a real ``foldline serve`` on the same store indexes the backlog as
the writes go; after each step the bench waits until ``GET /api/status`` shows no backlog. The
backends are built one after the other, each store dropped once measured; the full step's JSONL
is deleted once every backend has it (the small step's is kept for the fresh stores below).

Timed over HTTP against that server, at the small step and at the full size: the first cut
page of a typical agent of the first step (the panel's first request: ``parts=cut&limit=15``;
the server's page cache off, so each is read from the store), the agents list's first page
(``sort=activity&limit=50``) and the rare word (checked: its five hits). Then, as search.py's
``flatness`` does, a fresh store of the small step alone (its own server) is timed in the same
rounds as the full store, so the ratio full / small is not the drift of a shared machine: that
ratio of the medians is the figure judged (at most 1.2x).
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
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import orjson
from rich.console import Console
from rich.table import Table
from search import (
    BACKENDS,
    Corpus,
    Server,
    Step,
    agent_number,
    free_port,
    human,
    make_corpus,
    p99,
    parse_size,
    queries,
    read_pools,
    wait_until_up,
    write_block,
)

from foldline.importers.writer import BATCH_BYTES, BATCH_MESSAGES
from foldline.registry import Registry
from foldline.service import Transcripts
from foldline.settings import Settings
from foldline.store import open_store

RUNS = 40  # interleaved rounds of the three reads
CUT_PAGE = 15  # static/transcript.js PAGE: the panel's first cut page
AGENTS_PAGE = 50  # static/app.js AGENTS_PAGE: the agents list's page
DISK_FACTOR = 4.5  # free disk asked for, times the corpus size: the JSONL and each backend's store
READS = ("cut page", "agents list", "rare word")
GOAL = 1.2

Json = dict[str, Any]


class Serve(Server):
    """``foldline serve`` on a store, in a child process: the app and its search indexer. Its
    page cache is off (``FOLDLINE_PAGE_CACHE_MB=0``): a cut page timed 40 times is read from the
    store each time, as the first view of an agent is, not sent from the copy kept by the first."""

    def __init__(self, url: str) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        command = "from foldline.cli import main; main()"
        self.proc = subprocess.Popen(
            [sys.executable, "-c", command, "serve", "--db", url, "--port", str(self.port), "--no-import"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "FOLDLINE_PAGE_CACHE_MB": "0"},
        )
        wait_until_up(self.base, self.proc)


class Store:
    """One backend's store: written in-process through the write door, served and indexed by
    ``foldline serve`` beside it."""

    def __init__(self, name: str, url: str, corpus: Corpus) -> None:
        self.name, self.url, self.corpus = name, url, corpus
        self.store = open_store(url)
        self.transcripts = Transcripts(self.store, settings=Settings(db=url))
        owner = self.transcripts.create_account("bench")
        self.owner, self.token = owner["id"], owner["token"]
        self.workspace = self.transcripts.create_workspace("bench", [self.owner])["id"]
        self.agents: dict[int, str] = {}
        self.server = Serve(url)
        auth = {"Authorization": f"Bearer {self.token}"}
        self.http = httpx.Client(base_url=self.server.base, timeout=600, headers=auth)

    def write(self, step: Step) -> tuple[float, int]:
        """A step's agents, each in batches of the importer's size: the seconds, the messages."""
        start = time.perf_counter()
        count = 0
        for path in step.files:
            number = agent_number(path)
            agent = self.transcripts.create_agent(self.owner, self.workspace, self.corpus.titles[number])["id"]
            self.agents[number] = agent
            batch: list[tuple[str, Json]] = []
            size = 0
            with path.open("rb") as f:
                for line in f:
                    if batch and (len(batch) >= BATCH_MESSAGES or size + len(line) > BATCH_BYTES):
                        self.transcripts.put_messages(self.owner, agent, batch)
                        batch, size = [], 0
                    message = orjson.loads(line)
                    batch.append((message["id"], message))
                    size += len(line)
                    count += 1
            if batch:
                self.transcripts.put_messages(self.owner, agent, batch)
        return time.perf_counter() - start, count

    def backlog(self) -> Json:
        response = self.http.get("/api/status")
        response.raise_for_status()
        found: Json = response.json()["search_index"]
        return found

    def indexed(self, log: Callable[[str], None]) -> float:
        """Wait until the server's indexer has taken the whole backlog: the seconds waited."""
        start = time.perf_counter()
        told = start
        while (left := self.backlog())["pending_chunks"]:
            if time.perf_counter() - told > 60:
                log(f"  {self.name}: {left['pending_chunks']:,} chunks pending "
                    f"({left['pending_code_points']:,} code points)")  # fmt: skip
                told = time.perf_counter()
            time.sleep(0.5)
        return time.perf_counter() - start

    def build(self, n: int, log: Callable[[str], None]) -> Json:
        step = self.corpus.steps[n]
        grown = step.stored - (self.corpus.steps[n - 1].stored if n else 0)
        written, messages = self.write(step)
        waited = self.indexed(log)
        if self.name == "PostgreSQL":  # what autovacuum does on a live server, done now
            with self.store.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
                conn.exec_driver_sql("ANALYZE")
        row = {"step": n, "stored": step.stored, "bytes": grown, "messages": messages, "agents": len(step.files),
               "write_seconds": written, "index_wait_seconds": waited}  # fmt: skip
        log(f"{self.name}: {human(step.stored)} stored; {human(grown)} written in {written:.0f} s "
            f"({grown / 1e6 / written:.2f} MB/s), the backlog indexed {waited:.0f} s after "
            f"({grown / 1e6 / (written + waited):.2f} MB/s in all)")  # fmt: skip
        return row

    # -- the three reads, as the panel asks them

    def cut_page(self, agent: str) -> Json:
        response = self.http.get(f"/api/agents/{agent}/messages", params={"parts": "cut", "limit": CUT_PAGE})
        response.raise_for_status()
        page: Json = response.json()
        return page

    def agents_page(self, limit: int = AGENTS_PAGE) -> Json:
        params = {"workspace_id": self.workspace, "sort": "activity", "limit": limit}
        response = self.http.get("/api/agents", params=params)
        response.raise_for_status()
        page: Json = response.json()
        return page

    def search(self, q: str) -> Json:
        """The first page as the panel shows it: pages ended early for time (``partial``) followed."""
        params = {"q": q, "workspace_id": self.workspace}
        hits: list[Json] = []
        requests = 0
        while True:
            response = self.http.get("/api/search", params=params)
            response.raise_for_status()
            page = response.json()
            hits += page["hits"]
            requests += 1
            if not page["partial"] or page["next"] is None or len(hits) >= 20:
                return {"hits": hits, "next": page["next"], "requests": requests}
            params["cursor"] = page["next"]

    def reads(self, agent: int, page: int = AGENTS_PAGE) -> dict[str, Callable[[], str]]:
        """The three reads, each checked and saying what it answered; the agents list's page
        holds ``page`` agents (so that a small store's and a big one's pages are alike)."""
        agent_id = self.agents[agent]
        total = len(self.agents)
        rare = queries(self.corpus, last=False)[0]

        def cut() -> str:
            page = self.cut_page(agent_id)
            count = len(page["messages"])
            assert 0 < count <= CUT_PAGE and page["next"] is not None, (count, page["next"])
            return f"{count} messages, cut"

        def agents() -> str:
            listed = self.agents_page(page)
            count = len(listed["agents"])
            assert count == min(page, total) and (listed["next"] is not None) == (total > page), count
            return f"{count} of {total:,} agents"

        def search() -> str:
            page = self.search(self.corpus.rare.token)
            said = rare.check(page)
            return said if page["requests"] == 1 else f"{said}, {page['requests']} requests"

        return {"cut page": cut, "agents list": agents, "rare word": search}

    def close(self) -> None:
        self.http.close()
        self.server.close()
        self.store.close()


def typical(corpus: Corpus) -> int:
    """The agent of the first step with the median number of messages."""
    counts = sorted((sum(1 for _ in p.open("rb")), agent_number(p)) for p in corpus.steps[0].files)
    return counts[len(counts) // 2][1]


def timed(stores: list[Store], agent: int, runs: int = RUNS) -> list[Json]:
    """Each store's three reads, checked once, then timed in ``runs`` rounds (every read of
    every store in turn in each round): per store and read, the answer, p50 and p99 in ms."""
    page = min(AGENTS_PAGE, *(len(s.agents) for s in stores))  # a full page on every store: like for like
    reads = [s.reads(agent, page) for s in stores]
    answers = [{name: read() for name, read in r.items()} for r in reads]  # checked, and warmed
    times: list[dict[str, list[float]]] = [{name: [] for name in READS} for _ in stores]
    for _ in range(runs):
        for r, t in zip(reads, times, strict=True):
            for name in READS:
                start = time.perf_counter()
                r[name]()
                t[name].append((time.perf_counter() - start) * 1000)
    return [
        {name: {"answer": a[name], "p50": statistics.median(t[name]), "p99": p99(t[name]), "runs": len(t[name])}
         for name in READS}
        for a, t in zip(answers, times, strict=True)
    ]  # fmt: skip


def free_disk() -> int:
    return shutil.disk_usage(tempfile.gettempdir()).free


# -- the run -------------------------------------------------------------------------------


def run(keys: list[str], size: int, small: int, save: Path | None, log: Callable[[str], None]) -> Json:
    state: Json = {"size": size, "small": small, "date": time.strftime("%Y-%m-%d", time.gmtime()),
                   "load": [os.getloadavg()[0]], "cores": os.cpu_count(), "backends": {}}  # fmt: skip

    def saved() -> None:
        if save is not None:
            save.write_bytes(orjson.dumps(state, option=orjson.OPT_INDENT_2))

    tmp = Path(tempfile.mkdtemp(prefix="foldline-bench-scale-"))
    try:
        pools = read_pools(Registry.load(Settings().registry))
        start = time.perf_counter()
        corpus = make_corpus(tmp, pools, size, targets=[small, size], giants=False)
        agent = typical(corpus)
        state.update(stored=[s.stored for s in corpus.steps], agents=[len(s.files) for s in corpus.steps],
                     corpus_seconds=time.perf_counter() - start)  # fmt: skip
        log(f"corpus: {human(corpus.steps[-1].stored)} of JSONL in {len(corpus.titles):,} agents "
            f"({human(corpus.steps[0].stored)} in the first step), made in {state['corpus_seconds']:.0f} s; "
            f"free disk {human(free_disk())}")  # fmt: skip
        saved()
        for k, key in enumerate(keys):
            # One backend at a time, its store dropped once measured: the disk holds the JSONL and one store.
            name, make_url = BACKENDS[key]
            mine = state["backends"].setdefault(name, {"build": [], "latency": []})
            with make_url() as url, Closing(Store(name, url, corpus)) as whole:
                for n in range(len(corpus.steps)):
                    mine["build"].append(whole.build(n, log))
                    saved()
                    if n == 0:  # the store at the small step, as it was built
                        got = timed([whole], agent)[0]
                        mine["latency"].append({"step": 0, "stored": corpus.steps[0].stored, "reads": got})
                        log(f"  {name} at {human(corpus.steps[0].stored)}: {brief(got)}")
                        saved()
                log(f"{name}: free disk {human(free_disk())}")
                if k == len(keys) - 1:  # every backend has it: the small step's is kept for the fresh store
                    for step in corpus.steps[1:]:
                        for path in step.files:
                            path.unlink()
                    log(f"the full step's JSONL deleted; free disk {human(free_disk())}")
                # A fresh store of the small step alone, timed in the same rounds as the whole one.
                with make_url() as fresh_url, Closing(Store(name, fresh_url, corpus)) as fresh:
                    mine["fresh_build"] = fresh.build(0, log)
                    full_got, small_got = timed([whole, fresh], agent)
                mine["latency"].append({"step": 1, "stored": corpus.steps[-1].stored, "reads": full_got})
                mine["same_rounds"] = {"small": small_got, "full": full_got}
                log(f"  {name} at {human(corpus.steps[-1].stored)}: {brief(full_got)}")
                log(f"  {name} fresh {human(corpus.steps[0].stored)}, same rounds: {brief(small_got)}")
                saved()
        state["seconds"] = time.perf_counter() - start
        state["load"].append(os.getloadavg()[0])
        saved()
        return state
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


class Closing:
    """A store as a context: closed on the way out."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def __enter__(self) -> Store:
        return self.store

    def __exit__(self, *exc: object) -> None:
        self.store.close()


def brief(got: Json) -> str:
    return "; ".join(f"{n} {r['answer']} p50 {r['p50']:.1f} ms, p99 {r['p99']:.1f} ms" for n, r in got.items())


# -- the tables ----------------------------------------------------------------------------


def ratio(state: Json, name: str, read: str) -> float | None:
    same = state["backends"][name].get("same_rounds")
    if not same:
        return None
    r: float = same["full"][read]["p50"] / same["small"][read]["p50"]
    return r


def figures_rows(state: Json) -> list[list[str]]:
    rows = []
    for name, b in state["backends"].items():
        built = {row["step"]: row["reads"] for row in b.get("latency", [])}
        same = b.get("same_rounds") or {}
        for read in READS:
            cells = [name, read]
            cells.append(f"{built[0][read]['p50']:.1f} / {built[0][read]['p99']:.1f}" if 0 in built else "–")
            for k in ("small", "full"):
                cells.append(f"{same[k][read]['p50']:.1f} / {same[k][read]['p99']:.1f}" if same else "not measured")
            r = ratio(state, name, read)
            cells.append("–" if r is None else f"{r:.2f}x ({'met' if r <= GOAL else '**missed**'})")
            cells.append(f"{same['small'][read]['answer']}; {same['full'][read]['answer']}" if same else "–")
            rows.append(cells)
    return rows


def figures_head(state: Json) -> list[str]:
    small, full = human(state["stored"][0]), human(state["stored"][-1])
    return ["backend", "read", f"{small}, as built: p50 / p99 (ms)", f"fresh {small}, same rounds (ms)",
            f"{full}, same rounds (ms)", f"{full} / {small} p50 (goal ≤ {GOAL}x)",
            f"answer at {small}; at {full}"]  # fmt: skip


def build_rows(state: Json) -> list[list[str]]:
    rows = []
    for name, b in state["backends"].items():
        for row in b.get("build", []):
            n = row["step"]
            prev = human(state["stored"][n - 1]) if n else "0"
            written, waited = row["write_seconds"], row["index_wait_seconds"]
            rows.append([name, f"{prev} → {human(row['stored'])}", f"{row['messages']:,}", f"{row['agents']:,}",
                         f"{written:.0f}", f"{row['bytes'] / 1e6 / written:.2f}", f"{waited:.0f}",
                         f"{row['bytes'] / 1e6 / (written + waited):.2f}"])  # fmt: skip
    return rows


BUILD_HEAD = ["backend", "step", "messages", "agents", "written in (s)", "MB/s written",
              "backlog indexed after (s)", "MB/s in all"]  # fmt: skip


def markdown(head: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" if i < 2 else "---:" for i in range(len(head))) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def verdicts(state: Json) -> list[str]:
    out = []
    for name in state["backends"]:
        found = [(read, ratio(state, name, read)) for read in READS]
        if any(r is None for _, r in found):
            continue
        each = ", ".join(f"{read} {r:.2f}x" for read, r in found)
        ok = all(r is not None and r <= GOAL for _, r in found)
        out.append(f"- {name}: at {human(state['stored'][-1])} against {human(state['stored'][0])}, in the same "
                   f"rounds: {each} (goal within {GOAL}x: {'met' if ok else '**missed**'}).")  # fmt: skip
    return out


def report(state: Json) -> str:
    loads = " and ".join(f"{x:.1f}" for x in state.get("load", []))
    complete = all("same_rounds" in b for b in state["backends"].values()) and len(state.get("load", [])) > 1
    return "\n".join([
        f"Run of {state['date']}: `--size {human(state['size']).replace(' ', '')} --small "
        f"{human(state['small']).replace(' ', '')}`, a corpus of {human(state['stored'][-1])} of message JSON in "
        f"{sum(state['agents']):,} agents ({human(state['stored'][0])} in {state['agents'][0]:,} agents in the small "
        f"step). Load average at the start and end: {loads} ({state['cores']} cores)."
        + ("" if complete else " **The run did not finish: what it measured is below, the rest is missing.**"),
        "",
        "Building each store through the write door (`put_messages` in the importer's batches, in-process) with "
        "`foldline serve` indexing beside it, the backends one after the other"
        + (f" ({state['seconds'] / 60:.0f} min in all, the corpus and the fresh small stores included):"
           if "seconds" in state else ":"),
        "",
        markdown(BUILD_HEAD, build_rows(state)),
        "",
        "The panel's first reads and the rare word, over HTTP from the server (p99 is the slowest of "
        f"{RUNS} runs):",
        "",
        markdown(figures_head(state), figures_rows(state)),
        "",
        *verdicts(state),
    ])  # fmt: skip


def print_tables(state: Json) -> None:
    console = Console(width=200)
    for title, head, rows in (("Build", BUILD_HEAD, build_rows(state)),
                              ("Reads", figures_head(state), figures_rows(state))):  # fmt: skip
        table = Table(title=title)
        for i, h in enumerate(head):
            table.add_column(h, justify="left" if i < 2 else "right")
        for r in rows:
            table.add_row(*[c.replace("**", "") for c in r])
        console.print(table)
    for line in verdicts(state):
        console.print(line.replace("**", ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=parse_size, default=parse_size("10GB"), help="corpus stored (default 10GB)")
    parser.add_argument("--small", type=parse_size, default=parse_size("100MB"), help="the small step (default 100MB)")
    parser.add_argument("--backends", default="sqlite,postgres", help="comma-separated: sqlite, postgres")
    parser.add_argument("--no-write", action="store_true", help="do not update docs/benchmarks.md")
    parser.add_argument("--save", type=Path, help="keep the figures as JSON here, after each stage")
    parser.add_argument("--report", type=Path, help="only print and write the tables of figures kept by --save")
    args = parser.parse_args()
    if args.report:
        state = orjson.loads(args.report.read_bytes())
    else:
        keys = [b.strip() for b in args.backends.split(",") if b.strip()]
        if not keys or any(b not in BACKENDS for b in keys):
            parser.error(f"--backends takes {', '.join(BACKENDS)}")
        if not 0 < args.small < args.size:
            parser.error("--small must be under --size")
        free = free_disk()
        print(f"free disk {human(free)}; asked for {DISK_FACTOR}x the corpus: {human(DISK_FACTOR * args.size)}")
        if free < DISK_FACTOR * args.size:
            sys.exit("not enough free disk for this size")
        started = time.perf_counter()

        def log(line: str) -> None:
            print(f"[{time.perf_counter() - started:6.0f} s] {line}", flush=True)

        state = run(keys, args.size, args.small, args.save, log)
    print()
    print_tables(state)
    if not args.no_write:
        write_block("scale", "Scale: `bench/scale.py`", report(state))
        print("\nwritten to docs/benchmarks.md")


if __name__ == "__main__":
    main()
