"""Benchmark: the search index built after the writes (issue 24), on both backends.

    .venv/bin/python bench/index_backlog.py                  # 100 M code points pending, both backends
    .venv/bin/python bench/index_backlog.py --mb 20 --backends sqlite

Through the real service (``Transcripts``) on a fresh store of each backend:

- **the write door**: p50 of a 4 KB user message written through ``put_message``, against the
  same write with no searchable text (parts with no ``texts``: no chunk row at all), interleaved;
- **a search at the acknowledgement**: with ``--mb`` of text pending (the corpus of
  ``bench/index_floor.py``, one chunk a message, a rare word planted in the oldest), a message
  written and searched for at once: found or not, and that search's time;
- **rare word, backlog pending**: p50 of a search for the oldest message's rare word under the
  default search time (``Settings.search_seconds``), and whether it came whole or ``partial``;
- **catch-up**: the indexer (``Indexer.catch_up``) over that backlog, CPU time (this process's
  and, on PostgreSQL, the database's backends'), against the engine's own floor measured in
  the same run (``bench/index_floor.py``: a bare table with and without the index);
- **rare word, caught up**: the same search again.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import time
import uuid
from pathlib import Path
from typing import Any

import psycopg
from databases import postgres_url, sqlite_url
from index_floor import corpus, postgres_write, sqlite_write

from foldline.indexer import Indexer
from foldline.service import Transcripts
from foldline.service.door import Door
from foldline.store import StoredPart, open_store

Json = dict[str, Any]
WRITES = 200  # 4 KB writes each way
SEARCHES = 9


class UnindexedDoor(Door):
    def _stored_part(self, index: int, part: Json) -> StoredPart:
        return dataclasses.replace(super()._stored_part(index, part), texts=())


class Unindexed(Transcripts):
    """The write door with no searchable text (no chunk row is written). For this benchmark only."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.door = UnindexedDoor(self.registry, self.settings)


def message(message_id: str, text: str) -> Json:
    return {"id": message_id, "role": "user", "parts": [{"type": "text", "text": text}]}


def database_cpu(url: str) -> float:
    """CPU seconds of every PostgreSQL backend of ``url``'s database (they run on this machine)."""
    if not url.startswith("postgresql"):
        return 0.0
    total = 0.0
    with psycopg.connect(url, autocommit=True) as conn:
        pids = [r[0] for r in conn.execute("SELECT pid FROM pg_stat_activity WHERE datname = current_database()")]
        for pid in pids:
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def ms(call: Any) -> tuple[float, Any]:
    started = time.perf_counter()
    out = call()
    return (time.perf_counter() - started) * 1000, out


def run(url: str, chunks: list[str]) -> Json:
    store = open_store(url)
    t, bare = Transcripts(store), Unindexed(store)
    account = t.create_account("bench")["id"]
    workspace = t.create_workspace("bench", [account])["id"]
    agent, plain = t.create_agent(account, workspace)["id"], t.create_agent(account, workspace)["id"]
    out: Json = {}
    text = ("the build failed: see the log line by line\n" * 100)[:4096]
    door: dict[str, list[float]] = {"chunks": [], "none": []}
    for _ in range(WRITES):
        door["chunks"].append(ms(lambda: t.put_message(account, agent, (m := str(uuid.uuid4())), message(m, text)))[0])
        door["none"].append(ms(lambda: bare.put_message(account, plain, (m := str(uuid.uuid4())), message(m, text)))[0])
    out["door"] = {k: statistics.median(v) for k, v in door.items()}
    Indexer(t).catch_up()
    rare = "zq" + uuid.uuid4().hex[:10]
    started = time.perf_counter()
    for n, chunk in enumerate(chunks):
        m = str(uuid.uuid4())
        t.put_message(account, agent, m, message(m, f"{rare} {chunk}" if n == 0 else chunk))
    out["written_s"] = time.perf_counter() - started
    out["pending"] = t.backlog()
    fresh, m = "fresh" + uuid.uuid4().hex[:8], str(uuid.uuid4())
    t.put_message(account, agent, m, message(m, f"just acknowledged: {fresh}"))
    spent, page = ms(lambda: t.search(account, fresh))
    out["at_ack"] = {"ms": spent, "found": [h["message_id"] for h in page["hits"]] == [m], "partial": page["partial"]}
    out["rare_pending"] = rare_word(t, account, rare)
    cpu, db_cpu, started = time.process_time(), database_cpu(url), time.perf_counter()
    indexed = Indexer(t).catch_up()
    out["catch_up"] = {
        "cpu_s": time.process_time() - cpu + database_cpu(url) - db_cpu,
        "wall_s": time.perf_counter() - started,
        "chunks": indexed,
    }
    out["rare_indexed"] = rare_word(t, account, rare)
    store.close()
    return out


def rare_word(t: Transcripts, account: str, word: str) -> Json:
    times, whole = [], 0
    for _ in range(SEARCHES):
        spent, page = ms(lambda: t.search(account, word))
        times.append(spent)
        whole += bool(page["hits"]) and not page["partial"]
    return {"p50_ms": statistics.median(times), "whole": whole}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=100, help="millions of code points pending (default 100)")
    parser.add_argument("--backends", nargs="+", choices=("sqlite", "postgresql"), default=["sqlite", "postgresql"])
    args = parser.parse_args()
    chunks = corpus(int(args.mb * 1_000_000))
    points = sum(map(len, chunks))
    print(f"{points:,} code points in {len(chunks)} chunks; load {os.getloadavg()[0]:.1f}\n")
    rows = []
    for backend in args.backends:
        opener = sqlite_url if backend == "sqlite" else postgres_url
        with opener() as url:
            found = run(url, chunks)
        if backend == "sqlite":
            floor = sqlite_write(chunks, True) - sqlite_write(chunks, False)
        else:
            with postgres_url() as url:
                floor = postgres_write(url, chunks, True) - postgres_write(url, chunks, False)
        rows.append((backend, found, floor))
    print("| backend | 4 KB write p50, chunks pending | no searchable text | ratio |")
    print("|---|---:|---:|---:|")
    for backend, f, _ in rows:
        d = f["door"]
        print(f"| {backend} | {d['chunks']:.2f} ms | {d['none']:.2f} ms | {d['chunks'] / d['none']:.2f}x |")
    print("\n| backend | pending | search at the ack | rare word p50, pending | whole | rare word p50, caught up |")
    print("|---|---:|---:|---:|---:|---:|")
    for backend, f, _ in rows:
        p, a, rp, ri = f["pending"], f["at_ack"], f["rare_pending"], f["rare_indexed"]
        ack = f"{'found' if a['found'] else 'MISSED'} in {a['ms']:.0f} ms{' (partial)' if a['partial'] else ''}"
        print(f"| {backend} | {p['pending_chunks']:,} chunks, {p['pending_code_points'] / 1e6:.0f} M code points "
              f"| {ack} | {rp['p50_ms']:.0f} ms | {rp['whole']}/{SEARCHES} | {ri['p50_ms']:.0f} ms |")  # fmt: skip
    print("\n| backend | catch-up CPU | wall | per code point | the engine's floor | ratio |")
    print("|---|---:|---:|---:|---:|---:|")
    for backend, f, floor in rows:
        c = f["catch_up"]
        print(f"| {backend} | {c['cpu_s']:.2f} s | {c['wall_s']:.2f} s | {c['cpu_s'] / points * 1e9:.0f} ns "
              f"| {floor / points * 1e9:.0f} ns | {c['cpu_s'] / floor:.2f}x |")  # fmt: skip
    print(f"\nload {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
