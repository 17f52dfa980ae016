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

With ``--attacks`` (issue 20) it runs instead, on each backend, what one member can do with an
ordinary token, each attack beside a run without it (a writer writing all along in both): the
slow whole-part reader (4 reads of a 30 MB part that read nothing), many whole reads (16 at
once, 4 accounts), a pathological search (8 at once of ``'a' * 256`` over many chunks), and a
huge page (4 at once of 100 messages of 2,000 parts, cut; and the same with a limit of its own
each time, so that none comes from the page cache). For each: another account's cut page
and ``/api/me`` p50/p99, its 5xx, the attacker's answers, the server's peak RSS and SQLite's
peak write-ahead log.

    .venv/bin/python bench/abuse.py --attacks                    # both backends; writes docs/benchmarks.md
    .venv/bin/python bench/abuse.py --attacks --backends sqlite --no-write
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
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
from collections.abc import Callable
from pathlib import Path
from typing import Any

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


# -- attacks by one member (issue 20) ------------------------------------------------------

ATTACK_SECONDS = 20.0  # the most one attack runs; it stops as soon as the victim's reads are done
VICTIM_READS = 150  # the victim's cut pages, and as many /api/me, per run


def prepare_attacks(db: str, part_mb: int, chunks: int, wide: int) -> dict[str, Any]:
    """An attacker's workspace (a 30 MB part, a haystack of small chunks that nearly hold
    ``'a' * 256``, an agent of ``wide`` messages of 2,000 parts) with three more members, and a
    victim in a workspace of its own with a small transcript."""
    MAX_PARTS = 2_000  # the write door's bound on the parts of one message

    t = Transcripts.open(Settings(db=db, redact=False))
    attacker = t.create_account("attacker")
    helpers = [t.create_account(f"helper{n}") for n in range(3)]
    space = t.create_workspace("attacked", [attacker["id"]] + [h["id"] for h in helpers])["id"]
    big = t.create_agent(attacker["id"], space, "a big output")["id"]
    line = "a line of build output, long enough to look like one, with a number: "
    output = "".join(f"{line}{n}\n" for n in range(part_mb * 1_000_000 // (len(line) + 8)))
    mid = str(uuid.uuid4())
    part = {"type": "tool-bash", "toolCallId": "c1", "state": "output-available", "input": {"command": "make"},
            "output": output}  # fmt: skip
    t.put_message(attacker["id"], big, mid, {"id": mid, "role": "assistant", "parts": [part]})
    hay = t.create_agent(attacker["id"], space, "a haystack")["id"]
    for m in range(chunks // 1000):
        batch = []
        for k in range(10):
            i = str(uuid.uuid4())
            parts = [{"type": "text", "text": f"aaab {m} {k} {j} " + "aa " * 20} for j in range(100)]
            batch.append((i, {"id": i, "role": "user", "parts": parts}))
        t.put_messages(attacker["id"], hay, batch)
    while t._store.index_pending()[0]:
        pass
    wide_agent = t.create_agent(attacker["id"], space, "wide messages")["id"]
    for m in range(wide):
        i = str(uuid.uuid4())
        parts = [{"type": "text", "text": f"{m}.{j} " + "w" * 200} for j in range(MAX_PARTS)]
        t.put_message(attacker["id"], wide_agent, i, {"id": i, "role": "assistant", "parts": parts})
    victim = t.create_account("victim")
    own = t.create_workspace("elsewhere", [victim["id"]])["id"]
    small = t.create_agent(victim["id"], own, "a small transcript")["id"]
    for n in range(30):
        i = str(uuid.uuid4())
        turn = {"id": i, "role": "user", "parts": [{"type": "text", "text": f"turn {n}"}]}
        t.put_message(victim["id"], small, i, turn)
    while t._store.index_pending()[0]:
        pass
    scratch = t.create_agent(attacker["id"], space, "written all along")["id"]
    t.close()
    return {"attacker": attacker, "helpers": helpers, "big": big, "mid": mid, "hay": hay, "space": space,
            "wide": wide_agent, "victim": victim, "small": small, "turn": i, "scratch": scratch}  # fmt: skip


class Peaks:
    """Peak RSS (kB) of ``pid`` and peak size of ``wal`` (bytes) while the block runs."""

    def __init__(self, pid: int, wal: Path | None) -> None:
        self.pid, self.wal, self.rss, self.wal_peak = pid, wal, 0, 0
        self._done = threading.Event()
        self._sampler = threading.Thread(target=self._sample)

    def _sample(self) -> None:
        while not self._done.is_set():
            self.rss = max(self.rss, rss_kb(self.pid))
            if self.wal is not None and self.wal.exists():
                self.wal_peak = max(self.wal_peak, self.wal.stat().st_size)
            time.sleep(0.05)

    def __enter__(self) -> Peaks:
        self._sampler.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._sampler.join()


def victim_reads(base: str, world: dict[str, Any], heavy: bool = False) -> dict[str, Any]:
    """The victim's cut pages and /api/me, interleaved (``heavy``: and a whole part and a
    search each time, their 5xx counted too): their latencies (ms) and 5xx count."""
    page, me, errors, others = [], [], 0, []
    headers = {"Authorization": f"Bearer {world['victim']['token']}"}
    with httpx.Client(base_url=base, headers=headers, timeout=60) as client:
        for _ in range(VICTIM_READS):
            pairs = ((f"/api/agents/{world['small']}/messages", {"parts": "cut", "limit": "15"}, page),
                     ("/api/me", {}, me))  # fmt: skip
            if heavy:
                pairs += ((f"/api/agents/{world['small']}/messages/{world['turn']}/parts/0", {}, others),
                          ("/api/search", {"q": "turn"}, others))  # fmt: skip
            for path, params, into in pairs:
                t0 = time.perf_counter()
                try:
                    status = client.get(path, params=params).status_code
                except httpx.HTTPError:
                    status = 599
                into.append((time.perf_counter() - t0) * 1000)
                errors += status >= 500
    return {"page": quantiles(page), "me": quantiles(me), "errors": errors}


def ms(pair: tuple[float, float]) -> str:
    return f"{pair[0]:.1f} / {pair[1]:.1f} ms"


def quantiles(times: list[float]) -> tuple[float, float]:
    times = sorted(times)
    return statistics.median(times), times[max(0, int(len(times) * 0.99) - 1)]


def writer(base: str, world: dict[str, Any], stop: threading.Event) -> None:
    """The attacker's workspace keeps being written to: a 64 KB message every 50 ms."""
    headers = {"Authorization": f"Bearer {world['attacker']['token']}"}
    with httpx.Client(base_url=base, headers=headers, timeout=60) as client:
        n = 0
        while not stop.is_set() and n < 10_000:
            i = str(uuid.uuid4())
            body = {"role": "user", "parts": [{"type": "text", "text": f"{n} " + "v" * 65_000}]}
            try:
                client.put(f"/api/agents/{world['scratch']}/messages/{i}", json=body)
            except httpx.HTTPError:
                pass
            n += 1
            stop.wait(0.05)


class Attack:
    """``workers`` threads sending ``request`` as fast as they can until told to stop (or
    ``ATTACK_SECONDS``), counting the answers by status: in a process of their own (forked), so
    the attacker's client does not take the interpreter lock from the victim's."""

    def __init__(self, workers: int, request: Callable[[int, threading.Event], int]) -> None:
        self.workers, self.request = workers, request
        self.stop = multiprocessing.Event()
        self.statuses: dict[int, int] = {}
        self._answers: multiprocessing.Queue[dict[int, int]] = multiprocessing.Queue()
        self._process = multiprocessing.get_context("fork").Process(target=self._attack)

    def _attack(self) -> None:
        statuses: dict[int, int] = {}
        lock, stop = threading.Lock(), threading.Event()

        def run(n: int) -> None:
            deadline = time.monotonic() + ATTACK_SECONDS
            while not stop.is_set() and time.monotonic() < deadline:
                try:
                    status = self.request(n, stop)
                except (httpx.HTTPError, OSError):
                    status = 599
                with lock:
                    statuses[status] = statuses.get(status, 0) + 1

        threads = [threading.Thread(target=run, args=(n,)) for n in range(self.workers)]
        for thread in threads:
            thread.start()
        self.stop.wait(ATTACK_SECONDS)
        stop.set()
        for thread in threads:
            thread.join(ATTACK_SECONDS + 60)
        self._answers.put(statuses)

    def started(self) -> Attack:
        """The attack's process, forked now: before this process starts the writer's and the
        sampler's threads, since a fork taken while another thread holds a lock (the import
        lock, a client's) left the child waiting on it for good (seen: one run in four)."""
        self._process.start()
        return self

    def __enter__(self) -> Attack:
        time.sleep(1.0)  # under way before the victim reads
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.statuses = self._answers.get(timeout=ATTACK_SECONDS + 120)
        self._process.join(60)

    def said(self) -> str:
        return ", ".join(f"{n}× {status}" for status, n in sorted(self.statuses.items())) or "none"


def slow_reader(port: int, world: dict[str, Any], accounts: int = 1) -> Callable[[int, threading.Event], int]:
    """A whole read of the big part that takes its status line and then nothing, until the
    server drops it (its send deadline) or the attack ends; worker ``n`` reads as the attacker
    or one of its helpers (``n`` modulo ``accounts``)."""
    path = f"/api/agents/{world['big']}/messages/{world['mid']}/parts/0"
    tokens = [world["attacker"]["token"]] + [h["token"] for h in world["helpers"]]

    def request(n: int, stop: threading.Event) -> int:
        token = tokens[n % accounts]
        import socket

        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.settimeout(ATTACK_SECONDS)
        try:
            sock.connect(("127.0.0.1", port))
            sock.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n"
                         "Accept-Encoding: identity\r\n\r\n".encode())  # fmt: skip
            status = int(sock.recv(12).split()[1])
            stop.wait(ATTACK_SECONDS)  # and read nothing more
            return status
        finally:
            sock.close()

    return request


def run_attacks(backend: str, args: argparse.Namespace) -> list[list[str]]:
    """One backend's rows: each attack (and none), what the victim and the server saw."""
    rows = []
    with tempfile.TemporaryDirectory() as home, (sqlite_url() if backend == "sqlite" else postgres_url()) as db:
        world = prepare_attacks(db, args.part_mb, args.chunks, args.wide)
        port = free_port()
        proc = serve(db, port, home)
        base = f"http://127.0.0.1:{port}"
        wal = Path(db + "-wal") if backend == "sqlite" else None
        tokens = [world["attacker"]["token"]] + [h["token"] for h in world["helpers"]]

        def whole(n: int, stop: threading.Event) -> int:
            url = f"{base}/api/agents/{world['big']}/messages/{world['mid']}/parts/0"
            headers = {"Authorization": f"Bearer {tokens[n % 4]}", "Accept-Encoding": "identity"}
            with httpx.stream("GET", url, headers=headers, timeout=120) as response:
                for _ in response.iter_raw():
                    pass
                return response.status_code

        def search(n: int, stop: threading.Event) -> int:
            params = {"q": "a" * 256, "workspace_id": world["space"]}
            headers = {"Authorization": f"Bearer {tokens[0]}"}
            return httpx.get(f"{base}/api/search", params=params, headers=headers, timeout=120).status_code

        def page(n: int, stop: threading.Event) -> int:
            headers = {"Authorization": f"Bearer {tokens[0]}", "Accept-Encoding": "identity"}
            url = f"{base}/api/agents/{world['wide']}/messages"
            return httpx.get(url, params={"parts": "cut", "limit": "100"}, headers=headers, timeout=120).status_code

        asked = iter(range(1_000_000))

        def missed_page(n: int, stop: threading.Event) -> int:
            # Each a limit of its own (101-200): no two share a key of the page cache, so each is read.
            headers = {"Authorization": f"Bearer {tokens[0]}", "Accept-Encoding": "identity"}
            url = f"{base}/api/agents/{world['wide']}/messages"
            params = {"parts": "cut", "limit": str(101 + next(asked) % 100)}
            return httpx.get(url, params=params, headers=headers, timeout=120).status_code

        attacks: list[tuple[str, str, Callable[[int, threading.Event], int] | None, int]] = [
            ("none", "none", None, 0),
            ("slow", f"slow whole-part reader: 4 reads of a {args.part_mb} MB part that read nothing",
             slow_reader(port, world), 4),
            ("stalled", f"stalled whole reads: 8 of a {args.part_mb} MB part that read nothing, 2 accounts "
             "(the victim's whole reads and searches counted too)", slow_reader(port, world, 2), 8),
            ("whole", "many whole reads: 16 at once, 4 accounts, each read to its end", whole, 16),
            ("search", f"pathological search: 8 at once of 'a' * 256 over {args.chunks} chunks", search, 8),
            ("page", f"huge page: 4 at once of 100 messages of {args.wide} × 2,000 parts, cut", page, 4),
            ("misses", "huge pages never kept: the same, each with a limit of its own (101 to 200), "
             "so none is in the page cache", missed_page, 4),
        ]
        chosen = args.only.split(",")
        try:
            for key, name, request, workers in attacks:
                if key not in chosen:
                    continue
                attack = None if request is None else Attack(workers, request).started()
                stop = threading.Event()
                writing = threading.Thread(target=writer, args=(base, world, stop))
                writing.start()
                with Peaks(proc.pid, wal) as peaks:
                    if attack is None:
                        seen, said = victim_reads(base, world), "—"
                    else:
                        with attack:
                            seen = victim_reads(base, world, heavy=key == "stalled")
                        said = attack.said()
                stop.set()
                writing.join(60)
                rows.append([name, NAMES[backend], ms(seen["page"]), ms(seen["me"]),
                             str(seen["errors"]), said, f"{peaks.rss / 1000:.0f} MB",
                             "—" if wal is None else f"{peaks.wal_peak / 1e6:.1f} MB"])  # fmt: skip
                print(" | ".join(rows[-1]), flush=True)
        finally:
            proc.terminate()
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(20)
    return rows


def attacks_main(args: argparse.Namespace) -> None:
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    head = ("| attack | backend | victim's cut page p50 / p99 | victim's /api/me p50 / p99 | victim's 5xx "
            "| attacker's answers | server peak RSS | SQLite WAL peak |")  # fmt: skip
    lines = [head, "|---|---|---:|---:|---:|---|---:|---:|"]
    for backend in backends:
        lines += ["| " + " | ".join(row) + " |" for row in run_attacks(backend, args)]
    table = "\n".join(lines)
    print(table)
    if not args.no_write:
        write_section(
            "## Abuse by one member (`bench/abuse.py --attacks`)",
            f"One `foldline serve` process per backend, 127.0.0.1, defaults as shipped (`--part-mb {args.part_mb} "
            f"--chunks {args.chunks} --wide {args.wide}`). Each attack runs while the victim (another account, in a "
            f"workspace of its own) reads {VICTIM_READS} cut pages of 15 messages and as many `/api/me`, "
            "one after the other; a writer puts a 64 KB message into the attacker's workspace every 50 ms "
            "throughout, in every row. Goals (issue 20): the victim's p99 under 250 ms and no 5xx, "
            "the server under 1 GB, the WAL under 64 MB.\n\n" + table + "\n",
        )


def write_section(head: str, body: str) -> None:
    text = DOC.read_text()
    body = f"{head}\n\n{body}"
    if head in text:
        before, _, rest = text.partition(head)
        after = rest.split("\n## ", 1)
        text = before + body + ("\n## " + after[1] if len(after) > 1 else "")
    else:
        text = text.rstrip() + "\n\n" + body
    DOC.write_text(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--part-mb", type=int, default=100)
    parser.add_argument("--readers", type=int, default=8)
    parser.add_argument("--streams", type=int, default=2000)
    parser.add_argument("--slow", type=int, default=1000)
    parser.add_argument("--replay", type=int, default=100_000, help="messages of the agent a follower replays")
    parser.add_argument("--backends", default="sqlite,postgres")
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--attacks", action="store_true", help="the attacks of one member (issue 20) instead")
    parser.add_argument("--chunks", type=int, default=20_000, help="--attacks: the search haystack's chunks")
    parser.add_argument("--wide", type=int, default=20, help="--attacks: messages of 2,000 parts to page")
    parser.add_argument("--only", default="none,slow,stalled,whole,search,page,misses", help="--attacks: which of them")
    args = parser.parse_args()
    if args.attacks:
        if args.part_mb == 100:
            args.part_mb = 30
        attacks_main(args)
        return
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
