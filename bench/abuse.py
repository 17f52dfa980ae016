"""Abuse: what one hostile client can do to a running `foldline serve`, measured.

    .venv/bin/python bench/abuse.py                    # prints the table and writes docs/benchmarks.md
    .venv/bin/python bench/abuse.py --part-mb 20 --streams 500 --slow 300 --no-write   # a quick run

Runs `foldline serve` as its own process on a fresh SQLite file and then on a fresh PostgreSQL
database (`--backends`; 127.0.0.1 only; every loop is bounded in count and time), then on each:

1. memory: the server's peak RSS while N clients read one big part whole at once (four accounts,
   since each may read only four parts whole at a time), against the part's size;
2. streams: other users' page latency (p50/p99 of 200 reads) with no streams, then with S idle
   event streams open (held by S / 50 accounts: 50 per account is the cap), and what the 51st
   stream of one account gets;
3. slow clients: C connections that send half their headers and stop; a legitimate read's
   latency while they hang on, and how long the server takes to drop them (its header deadline);
4. a long catch-up: one follower asks for every message of an agent of M messages (`since=0`):
   the time to its first event and to its last, and the server's growth meanwhile.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import httpx
from databases import postgres_url, sqlite_url

from foldline.service import Transcripts
from foldline.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "benchmarks.md"
READS = 200


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def rss_kb(pid: int, field: str = "VmRSS") -> int:
    text = Path(f"/proc/{pid}/status").read_text()
    found = re.search(rf"{field}:\s+(\d+) kB", text)
    return int(found.group(1)) if found else 0


def prepare(db: str, part_mb: int, accounts: int, replay: int) -> dict[str, object]:
    """Accounts in one workspace, an agent with one big tool output, and a small agent to page."""
    t = Transcripts.open(Settings(db=db))
    owner = t.create_account("owner")
    space = t.create_workspace("team", [owner["id"]])
    members = [owner] + [t.create_account(f"member{n}") for n in range(accounts)]
    for member in members[1:]:
        t.add_member(space["id"], member["id"])
    big = t.create_agent(owner["id"], space["id"], "a big output")["id"]
    line = "a line of build output, long enough to look like one, with a number: "
    output = "".join(f"{line}{n}\n" for n in range(part_mb * 1_000_000 // (len(line) + 8)))
    mid = str(uuid.uuid4())
    part = {"type": "tool-bash", "toolCallId": "c1", "state": "output-available", "input": {"command": "make"},
            "output": output}  # fmt: skip
    t.put_message(owner["id"], big, mid, {"id": mid, "role": "assistant", "parts": [part]})
    small = t.create_agent(owner["id"], space["id"], "a small transcript")["id"]
    for n in range(30):
        m = str(uuid.uuid4())
        turn = {"id": m, "role": "user", "parts": [{"type": "text", "text": f"turn {n}"}]}
        t.put_message(owner["id"], small, m, turn)
    long = t.create_agent(owner["id"], space["id"], "a long transcript")["id"]
    for n in range(replay):
        m = str(uuid.uuid4())
        t.put_message(owner["id"], long, m, {"id": m, "role": "user", "parts": [{"type": "text", "text": f"step {n}"}]})
    t.close()
    return {"members": members, "big": big, "mid": mid, "small": small, "long": long, "replay": replay,
            "part_bytes": len(output.encode())}  # fmt: skip


def catch_up(base: str, pid: int, world: dict[str, object]) -> tuple[float, float, int]:
    """Seconds to the first and the last event of a follower replaying the long agent from the
    start, and the server's peak growth (kB) meanwhile."""
    token = world["members"][0]["token"]  # type: ignore[index]
    url = f"{base}/api/agents/{world['long']}/events"
    headers = {"Authorization": f"Bearer {token}", "Accept-Encoding": "identity"}
    with PeakRSS(pid) as rss:
        started, first, count = time.perf_counter(), 0.0, 0
        with httpx.stream("GET", url, params={"since": "0"}, headers=headers, timeout=600) as response:
            for line in response.iter_lines():
                if line.startswith("data:"):
                    count += 1
                    first = first or time.perf_counter() - started
                    if count == world["replay"]:
                        break
        last = time.perf_counter() - started
    return first, last, rss.peak - rss.before


def serve(db: str, port: int, home: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "FOLDLINE_DB": db, "HOME": home}
    command = [sys.executable, "-m", "foldline.cli", "serve", "--port", str(port), "--no-import"]
    proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            httpx.get(f"http://127.0.0.1:{port}/api/openapi.json", timeout=1).raise_for_status()
            return proc
        except httpx.HTTPError:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit("the server did not start")


def whole_reads(base: str, pid: int, world: dict[str, object], clients: int) -> tuple[int, int]:
    """Peak RSS (kB) while ``clients`` read the big part whole at once, and the RSS before."""
    members = world["members"]
    assert isinstance(members, list)
    url = f"{base}/api/agents/{world['big']}/messages/{world['mid']}/parts/0"

    def read(n: int) -> None:
        token = members[n % len(members)]["token"]
        httpx.get(url, headers={"Authorization": f"Bearer {token}", "Accept-Encoding": "identity"}, timeout=300)

    with PeakRSS(pid) as rss:
        readers = [threading.Thread(target=read, args=(n,)) for n in range(clients)]
        for r in readers:
            r.start()
        for r in readers:
            r.join()
    return rss.peak, rss.before


class PeakRSS:
    """The resident memory (kB) of process ``pid`` before the block and its peak during it."""

    def __init__(self, pid: int) -> None:
        self.pid, self.before, self.peak = pid, rss_kb(pid), 0
        self._done = threading.Event()
        self._sampler = threading.Thread(target=self._sample)

    def _sample(self) -> None:
        while not self._done.is_set():
            self.peak = max(self.peak, rss_kb(self.pid))
            time.sleep(0.01)

    def __enter__(self) -> PeakRSS:
        self._sampler.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._sampler.join()


def page_latency(base: str, token: str, agent: str) -> tuple[float, float]:
    times = []
    with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}, timeout=30) as client:
        for _ in range(READS):
            t0 = time.perf_counter()
            client.get(f"/api/agents/{agent}/messages", params={"parts": "cut", "limit": "15"}).raise_for_status()
            times.append((time.perf_counter() - t0) * 1000)
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.99) - 1]


async def open_stream(port: int, token: str, agent: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter, int]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    request = f"GET /api/agents/{agent}/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n\r\n"
    writer.write(request.encode())
    await writer.drain()
    status = await asyncio.wait_for(reader.readline(), 30)
    return reader, writer, int(status.split()[1])


def with_streams(port: int, world: dict[str, object], streams: int) -> tuple[float, float, int, int]:
    """Other users' p50/p99 while ``streams`` idle streams are open; how many opened; the 51st's status."""
    members = world["members"]
    assert isinstance(members, list)
    base = f"http://127.0.0.1:{port}"
    result: dict[str, object] = {}

    async def run() -> None:
        held = []
        for n in range(streams):
            held.append(await open_stream(port, members[1 + n // 50]["token"], str(world["small"])))
        extra = await open_stream(port, members[1]["token"], str(world["small"]))
        result["extra"] = extra[2]
        result["opened"] = sum(1 for _, _, status in held if status == 200)
        result["latency"] = await asyncio.to_thread(page_latency, base, members[0]["token"], str(world["small"]))
        for _, writer, _ in [*held, extra]:
            writer.close()

    asyncio.run(run())
    p50, p99 = result["latency"]  # type: ignore[misc]
    return p50, p99, int(result["opened"]), int(result["extra"])  # type: ignore[call-overload]


def with_slow_clients(port: int, world: dict[str, object], slow: int) -> tuple[float, float, float]:
    """A legitimate read's p50/p99 while ``slow`` clients hang on half-sent headers, and the
    seconds until the server has dropped 95% of them."""
    members = world["members"]
    assert isinstance(members, list)
    base = f"http://127.0.0.1:{port}"
    result: dict[str, object] = {}

    async def run() -> None:
        conns = []
        for _ in range(slow):
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"GET / HTTP/1.1\r\nHost: x\r\n")  # and never the blank line
            conns.append((reader, writer))
        started = time.monotonic()
        result["latency"] = await asyncio.to_thread(page_latency, base, members[0]["token"], str(world["small"]))

        async def dropped(reader: asyncio.StreamReader) -> float:
            try:
                await asyncio.wait_for(reader.read(), 120)
            except (TimeoutError, ConnectionError):
                return 120.0
            return time.monotonic() - started

        times = sorted(await asyncio.gather(*(dropped(r) for r, _ in conns)))
        result["dropped"] = times[int(len(times) * 0.95) - 1]
        for _, writer in conns:
            writer.close()

    asyncio.run(run())
    p50, p99 = result["latency"]  # type: ignore[misc]
    return p50, p99, float(result["dropped"])  # type: ignore[arg-type]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--part-mb", type=int, default=100)
    parser.add_argument("--readers", type=int, default=8)
    parser.add_argument("--streams", type=int, default=2000)
    parser.add_argument("--slow", type=int, default=1000)
    parser.add_argument("--replay", type=int, default=100_000, help="messages of the agent a follower replays")
    parser.add_argument("--backends", default="sqlite,postgres")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, 8192)), hard))
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    columns = {NAMES[b]: measure(b, args) for b in backends}
    rows = [
        (f"peak server memory, {args.readers} clients reading a {args.part_mb} MB part whole", "≤ 2× the part"),
        ("another user's page, no streams open: p50 / p99", ""),
        (f"the same with {args.streams} idle event streams open", "p99 < 200 ms"),
        ("one account's stream past its cap of 50", "429"),
        (f"another user's page with {args.slow} slow-header connections hanging", ""),
        ("95% of those slow connections dropped after", "the header deadline (10 s)"),
        (f"a follower replaying {args.replay} messages: first event, last event, server growth", ""),
    ]
    lines = ["| what | " + " | ".join(columns) + " | goal |", "|---|" + "---:|" * len(columns) + "---|"]
    for n, (what, goal) in enumerate(rows):
        lines.append(f"| {what} | " + " | ".join(c[n] for c in columns.values()) + f" | {goal} |")
    table = "\n".join(lines)
    print(table)
    if not args.no_write:
        write_doc(table, args)


NAMES = {"sqlite": "SQLite", "postgres": "PostgreSQL"}


def measure(backend: str, args: argparse.Namespace) -> list[str]:
    """One backend's column of the table: a fresh database, a server process, every measure."""
    with tempfile.TemporaryDirectory() as home, (sqlite_url() if backend == "sqlite" else postgres_url()) as db:
        world = prepare(db, args.part_mb, accounts=max(4, args.streams // 50 + 2), replay=args.replay)
        port = free_port()
        proc = serve(db, port, home)
        base = f"http://127.0.0.1:{port}"
        try:
            peak, before = whole_reads(base, proc.pid, world, args.readers)
            quiet = page_latency(base, world["members"][0]["token"], str(world["small"]))  # type: ignore[index]
            p50, p99, opened, extra = with_streams(port, world, args.streams)
            s50, s99, dropped = with_slow_clients(port, world, args.slow)
            first, last, grew = catch_up(base, proc.pid, world)
        finally:
            proc.terminate()
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(20)
    part_mb = int(world["part_bytes"]) / 1e6  # type: ignore[call-overload]
    return [
        f"{(peak - before) / 1000:.0f} MB over {before / 1000:.0f} MB at rest "
        f"({(peak - before) / 1000 / part_mb:.2f}× the part)",
        f"{quiet[0]:.1f} / {quiet[1]:.1f} ms",
        f"{p50:.1f} / {p99:.1f} ms ({opened} open)",
        f"HTTP {extra}",
        f"{s50:.1f} / {s99:.1f} ms",
        f"{dropped:.1f} s",
        f"{first * 1000:.0f} ms, {last:.1f} s, {grew / 1000:.0f} MB",
    ]


def write_doc(table: str, args: argparse.Namespace) -> None:
    text = DOC.read_text()
    head = "## Abuse (`bench/abuse.py`)"
    body = (
        f"{head}\n\nOne `foldline serve` process on each backend, 127.0.0.1, defaults as shipped "
        f"(`--part-mb {args.part_mb} --readers {args.readers} --streams {args.streams} --slow {args.slow} "
        f"--replay {args.replay}`). "
        "Medians and p99 of 200 reads of a 15-message cut page; memory is the server's RSS.\n\n" + table + "\n"
    )
    if head in text:
        before, _, rest = text.partition(head)
        after = rest.split("\n## ", 1)
        text = before + body + ("\n## " + after[1] if len(after) > 1 else "")
    else:
        text = text.rstrip() + "\n\n" + body
    DOC.write_text(text)


if __name__ == "__main__":
    main()
