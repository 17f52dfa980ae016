"""Benchmark: how long a small write of one agent waits while another agent's 20 MB outputs are written.

    .venv/bin/python bench/write_lock.py                      # both backends, this tree only
    .venv/bin/python bench/write_lock.py --baseline main      # and main's code, in the same run
    .venv/bin/python bench/write_lock.py --backend SQLite --seconds 5
    .venv/bin/python bench/write_lock.py --delete 200        # beside the delete of a 200 MB agent

For each backend (a temp SQLite file; a fresh PostgreSQL database at ``FOLDLINE_BENCH_PG``) and
each code (this tree; with ``--baseline REV``, that revision's ``src`` first on ``PYTHONPATH``),
one process as ``foldline serve`` runs it makes two accounts, each with an agent in a workspace
of its own. Bob writes a 4 KB user message every 10 ms through the write door
(``Transcripts.put_message``) for ``--seconds`` alone, then as long again while, in another
thread of the same process, Alice writes assistant messages each holding one 20 MB bash output,
back to back; then again with Alice's writes in a process of their own (an import beside the
server). Printed: the p50 and p99 of Bob's writes in each phase (each its whole call: the write
door, the lock, the commit), and how long Alice's writes took. No indexer runs.

``--delete MB``: Alice's agent is first filled with that many MB of 20 MB outputs, and the second
phase is its deletion (``Transcripts.delete_agent``, once), Bob writing until it returns (and
for ``--seconds`` at least); printed: Bob's writes meanwhile, and how long the delete took.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from databases import postgres_url, sqlite_url

HERE = Path(__file__).resolve().parent
BIG = 20 * 1000 * 1000  # characters (ASCII: bytes) of each big output
SMALL = 4000  # characters of each small message
EVERY = 0.01  # seconds between two small writes


def big_writes(url: str, account: str, agent: str, stop: Any, bigs: list[float]) -> None:
    """Alice's 20 MB outputs, back to back, until ``stop`` is set."""
    from foldline.service import Transcripts
    from foldline.settings import Settings
    from foldline.store import open_store

    store = open_store(url)
    t = Transcripts(store, settings=Settings(db=url))
    while not stop.is_set():
        start = time.perf_counter()
        t.put_message(account, agent, str(uuid.uuid4()), big_message())
        bigs.append(time.perf_counter() - start)
    store.close()


def big_message() -> dict[str, Any]:
    """An assistant message holding one 20 MB bash output."""
    line = "make: compiling the module, a line of build output of some length\n"
    output = (line * (BIG // len(line) + 1))[:BIG]
    part = {"type": "tool-bash", "toolCallId": str(uuid.uuid4()), "state": "output-available",
            "input": {"command": "make"}, "output": output}  # fmt: skip
    return {"role": "assistant", "parts": [part]}


def big_delete(url: str, account: str, agent: str, stop: Any, bigs: list[float]) -> None:
    """Alice's agent deleted, once (``stop`` is not waited for)."""
    from foldline.service import Transcripts
    from foldline.settings import Settings
    from foldline.store import open_store

    store = open_store(url)
    t = Transcripts(store, settings=Settings(db=url))
    start = time.perf_counter()
    t.delete_agent(account, agent)
    bigs.append(time.perf_counter() - start)
    store.close()


def big_process(url: str, account: str, agent: str, delete: bool = False) -> None:
    """The big writes (or the delete) in a process of their own (an import beside the server),
    until stdin closes."""
    stop = threading.Event()
    bigs: list[float] = []
    work = big_delete if delete else big_writes
    writer = threading.Thread(target=work, args=(url, account, agent, stop, bigs))
    writer.start()
    sys.stdin.read()
    stop.set()
    writer.join()
    print(json.dumps(bigs))


def child(url: str, seconds: float, apart: bool, delete_mb: int = 0) -> dict[str, Any]:
    """The measurement, in the process of the code being measured (``apart``: the big writes in
    another; ``delete_mb``: the delete of an agent that big instead)."""
    from foldline.service import Transcripts
    from foldline.settings import Settings
    from foldline.store import open_store

    store = open_store(url)
    t = Transcripts(store, settings=Settings(db=url))
    alice, bob = t.create_account("alice")["id"], t.create_account("bob")["id"]
    big_agent = t.create_agent(alice, t.create_workspace("a", [alice])["id"])["id"]
    small_agent = t.create_agent(bob, t.create_workspace("b", [bob])["id"])["id"]

    def small(n: int) -> float:
        message = {"role": "user", "parts": [{"type": "text", "text": f"{n} " + "x" * SMALL}]}
        start = time.perf_counter()
        t.put_message(bob, small_agent, str(uuid.uuid4()), message)
        return time.perf_counter() - start

    def smalls(until: float, busy: Any = lambda: False) -> list[float]:
        out = []
        while time.monotonic() < until or busy():
            out.append(small(len(out)))
            time.sleep(EVERY)
        return out

    small(0)
    for _ in range(-(-delete_mb * 1000 * 1000 // BIG)):  # the agent to delete, filled first
        t.put_message(alice, big_agent, str(uuid.uuid4()), big_message())
    alone = smalls(time.monotonic() + seconds)
    stop = threading.Event()
    bigs: list[float] = []
    if apart:
        argv = [sys.executable, str(Path(__file__).resolve()), "--big", url, alice, big_agent,
                *(["--delete", "1"] if delete_mb else [])]  # fmt: skip
        other = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    else:
        work = big_delete if delete_mb else big_writes
        writer = threading.Thread(target=work, args=(url, alice, big_agent, stop, bigs))
        writer.start()
    if delete_mb:  # the delete under way at once; Bob writes until it is done
        if apart:
            assert other.stdin is not None
            other.stdin.close()  # the other process deletes once, then ends
        during = smalls(time.monotonic() + seconds, (lambda: other.poll() is None) if apart else writer.is_alive)
    else:
        time.sleep(1.0)  # the first big write under way
        during = smalls(time.monotonic() + seconds)
    if apart:
        if delete_mb:
            assert other.stdout is not None
            out = other.stdout.read()
            other.wait()
        else:
            out, _ = other.communicate("")
        bigs = json.loads(out)
    else:
        stop.set()
        writer.join()
    store.close()
    return {"alone": alone, "during": during, "big": bigs}


def checkout(rev: str, folder: Path) -> Path:
    """The project's ``src`` at revision ``rev``, written into ``folder``."""
    archive = subprocess.run(["git", "archive", rev, "src"], cwd=HERE.parent, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder / "src"


def measure(url: str, seconds: float, source: Path | None, apart: bool, delete_mb: int = 0) -> dict[str, Any]:
    env = dict(os.environ)
    src = source if source is not None else HERE.parent / "src"
    env["PYTHONPATH"] = os.pathsep.join([str(src), str(HERE)])
    done = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--child", url, "--seconds", str(seconds),
         *(["--apart"] if apart else []), *(["--delete", str(delete_mb)] if delete_mb else [])],
        env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    found: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def ms(values: list[float], q: float) -> str:
    if not values:
        return "-"
    ordered = sorted(values)
    return f"{ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000:,.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", choices=["SQLite", "PostgreSQL"], action="append")
    parser.add_argument("--seconds", type=float, default=10.0, help="each phase's length (default 10)")
    parser.add_argument("--baseline", metavar="REV", help="also measure this git revision's code, in the same run")
    parser.add_argument("--delete", metavar="MB", type=int, default=0,
                        help="measure beside the delete of an agent holding this many MB instead")  # fmt: skip
    parser.add_argument("--child", metavar="URL", help=argparse.SUPPRESS)
    parser.add_argument("--big", nargs=3, help=argparse.SUPPRESS)
    parser.add_argument("--apart", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.seconds, args.apart, args.delete)))
        return
    if args.big:
        big_process(*args.big, delete=bool(args.delete))
        return
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        codes: list[tuple[str, Path | None]] = [("this tree", None)]
        if args.baseline:
            codes.insert(0, (args.baseline, checkout(args.baseline, Path(tmp))))
        for backend in args.backend or ["SQLite", "PostgreSQL"]:
            for apart in (False, True):
                for name, source in codes:
                    with sqlite_url() if backend == "SQLite" else postgres_url() as url:
                        found = measure(url, args.seconds, source, apart, args.delete)
                    rows.append((backend, "another process" if apart else "one process", name, found))
                    print(f"  {backend}, {name}, {rows[-1][1]}: done", file=sys.stderr)
    load = os.getloadavg()
    print(f"load average {load[0]:.2f}, {load[1]:.2f}, {load[2]:.2f}; {args.seconds:g} s a phase")
    print()
    beside = f"the delete of a {args.delete} MB agent" if args.delete else "20 MB writes"
    done = ("deletes", "the delete (ms)") if args.delete else ("20 MB writes", "one 20 MB write p50 (ms)")
    print(f"| backend | {'delete' if args.delete else 'big writes'} in | code | small write alone p50 / p99 (ms) |"
          f" beside {beside} p50 / p99 (ms) | {done[0]} | {done[1]} |")  # fmt: skip
    print("|---|---|---|---:|---:|---:|---:|")
    for backend, where, name, found in rows:
        alone, during, big = found["alone"], found["during"], found["big"]
        print(f"| {backend} | {where} | {name} | {ms(alone, 0.5)} / {ms(alone, 0.99)} |"
              f" {ms(during, 0.5)} / {ms(during, 0.99)} | {len(big)} |"
              f" {statistics.median(big) * 1000 if big else 0:,.0f} |")  # fmt: skip


if __name__ == "__main__":
    main()
