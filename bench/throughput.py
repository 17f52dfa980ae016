"""Benchmark: requests per second of one `foldline serve` against a bare ASGI app sending the same bytes.

    apt-get install -y wrk                         # the load tool (Debian/Ubuntu package `wrk`)
    .venv/bin/python bench/throughput.py           # both backends; prints and writes docs/benchmarks.md
    .venv/bin/python bench/throughput.py --no-write --backend SQLite --seconds 3 --rounds 1
    .venv/bin/python bench/throughput.py --baseline main --no-memory   # before and after, same rounds

For each backend (a temp SQLite file; a fresh PostgreSQL database at ``FOLDLINE_BENCH_PG``,
default ``postgresql://postgres@127.0.0.1:5432/postgres``, made and dropped here) it stores two
agents and starts, each as its own process as a user runs it, ``foldline serve`` (one process,
and ``--workers 2``) and a bare ASGI app under the same uvicorn settings (Foldline's
``server.config``: protocol, limits, access log) that answers every request with the bytes
Foldline sent, from memory. Pages:

- **cut**: the newest 50 messages, ``parts=cut``, of bench/cut_page.py's agent at 1.4 MB
  (50 turns: a user message, and an assistant message with one thought and one bash output,
  both over the cut bound): 226 KB;
- **wide**: the newest 50 messages, ``parts=cut``, of an agent whose 25 assistant messages
  each hold a thought and 50 bash parts (one in ten over the bound): 1,300 parts.

wrk (2 threads) runs ``--seconds`` per measurement against 127.0.0.1 only: requests/s at 8
connections are the median of ``--rounds`` runs, the servers interleaved round by round; p99
latency at 32 connections is the median of the same number of runs. Then, on a fresh server,
8 clients (curl) read one 100 MB part whole at once, and the server's peak resident memory over
its idle size is reported, without and with ``Accept-Encoding: gzip``.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from databases import postgres_url, sqlite_url

from foldline.service import Transcripts
from foldline.settings import Settings
from foldline.store import StoredPart

DOC = Path(__file__).resolve().parent.parent / "docs" / "benchmarks.md"
HERE = Path(__file__).resolve().parent
PAGE = 50
BIG_PART = 100 * 1000 * 1000  # characters (ASCII: bytes) of the part read whole
WRK_HELP = "wrk is needed: `apt-get install -y wrk` (Debian/Ubuntu), `brew install wrk` (macOS)"


def filler(chars: int, seed: int) -> str:
    line = f"{seed:04d} build step ok: compiling module and linking objects ✓\n"
    return (line * (chars // len(line) + 1))[:chars]


def put(t: Transcripts, owner: str, agent: str, message: dict[str, object]) -> None:
    t.put_message(owner, agent, str(uuid.uuid4()), message)


def build(t: Transcripts) -> dict[str, str]:
    """The agents the bench reads; their ids by page name, plus the token."""
    owner = t.create_account("bench")
    workspace = t.create_workspace("bench", [owner["id"]])
    cut = t.create_agent(owner["id"], workspace["id"], "cut")["id"]
    for turn in range(50):  # bench/cut_page.py's agent at 1.4 MB
        put(t, owner["id"], cut, {"role": "user", "parts": [{"type": "text", "text": f"turn {turn}: run the build"}]})
        put(t, owner["id"], cut, {"role": "assistant", "parts": [
            {"type": "reasoning", "text": filler(5_000, turn + 1)},
            {"type": "tool-bash", "toolCallId": f"call-{turn}", "state": "output-available",
             "input": {"command": "make"}, "output": filler(23_000, turn)},
        ]})  # fmt: skip
    wide = t.create_agent(owner["id"], workspace["id"], "wide")["id"]
    for turn in range(25):
        put(t, owner["id"], wide, {"role": "user", "parts": [{"type": "text", "text": f"turn {turn}: check all"}]})
        tools = [
            {"type": "tool-bash", "toolCallId": f"call-{turn}-{n}", "state": "output-available",
             "input": {"command": f"test -f file{n}.py"}, "output": filler(6_000 if n % 10 == 0 else 300, n)}
            for n in range(50)
        ]  # fmt: skip
        put(t, owner["id"], wide, {"role": "assistant", "parts": [{"type": "reasoning", "text": "checking"}, *tools]})
    big = t.create_agent(owner["id"], workspace["id"], "big")["id"]
    big_id = str(uuid.uuid4())
    # The 100 MB part is stored as the write door stores it, less its search chunks (indexing
    # 100 MB of trigrams would take minutes and plays no part in reading it whole).
    conv = t.conversation(owner["id"], big)
    stored = t.door._stored_part(1, {"type": "tool-bash", "toolCallId": "big", "state": "output-available",
                                "input": {"command": "cat big.log"}, "output": "x" * BIG_PART})
    text = StoredPart(0, None, '{"type":"text","text":"a big one"}')
    head = f'{{"id":"{big_id}","role":"assistant"}}'
    parts = [text, StoredPart(1, "bash", stored.body, stored.cut_body, stored.cut_ref)]
    # A valid message, stored as the write door stores one: stamped with the read stamp.
    t._store.put_message(conv, big_id, "assistant", head, parts, checked=t.read_stamp)
    return {"cut": cut, "wide": wide, "big": big, "big_message": big_id, "token": owner["token"]}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@dataclass
class Server:
    name: str
    process: subprocess.Popen[bytes]
    base: str

    def pids(self) -> list[int]:
        """The server's process and its children (``--workers``)."""
        found = [self.process.pid]
        try:
            children = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children").read_text().split()
            found += [int(c) for c in children]
        except OSError:
            pass
        return found

    def rss(self) -> int:
        """Resident memory of the process tree, in bytes."""
        total = 0
        for pid in self.pids():
            try:
                for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1]) * 1024
            except OSError:
                pass
        return total

    def stop(self) -> None:
        self.process.send_signal(signal.SIGINT)
        try:
            self.process.wait(15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(5)


def start(name: str, argv: list[str], env: dict[str, str], port: int, probe: str, token: str) -> Server:
    process = subprocess.Popen(argv, env={**os.environ, **env}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{name} exited: {process.stderr.read().decode()[-2000:] if process.stderr else ''}")
        try:
            if httpx.get(base + probe, headers={"Authorization": f"Bearer {token}"}, timeout=5).status_code == 200:
                threading.Thread(target=_drain, args=(process,), daemon=True).start()
                return Server(name, process, base)
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    process.kill()
    raise RuntimeError(f"{name} did not start")


def _drain(process: subprocess.Popen[bytes]) -> None:
    assert process.stderr is not None
    for _ in process.stderr:
        pass


def foldline(
    url: str, workers: int, probe: str, token: str, env: dict[str, str] | None = None, source: Path | None = None
) -> Server:
    """``foldline serve``; from the code in ``source`` (a checkout's ``src``) when given."""
    port = free_port()
    argv = [sys.executable, "-m", "foldline.cli", "serve", "--db", url, "--host", "127.0.0.1", "--port", str(port),
            "--no-import", "--workers", str(workers)]  # fmt: skip
    env = {"FOLDLINE_DB": url, **(env or {})}
    if source is not None:
        env["PYTHONPATH"] = str(source)
    name = f"foldline x{workers}" if source is None else BASELINE
    if env.get("FOLDLINE_PAGE_CACHE_MB") == "0":
        name = UNCACHED
    return start(name, argv, env, port, probe, token)


def checkout(rev: str, folder: Path) -> Path:
    """The project's ``src`` at revision ``rev``, written into ``folder``."""
    archive = subprocess.run(["git", "archive", rev, "src"], cwd=HERE.parent, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder / "src"


def bare(bodies: dict[str, bytes], probe: str, token: str, folder: Path) -> Server:
    """The bare ASGI app (bench/bare_app.py) serving ``bodies`` by path, same uvicorn settings."""
    paths = []
    for n, (path, body) in enumerate(bodies.items()):
        (folder / f"{n}.body").write_bytes(body)
        paths.append(f"{path}={folder / f'{n}.body'}")
    port = free_port()
    argv = [sys.executable, str(HERE / "bare_app.py"), str(port), *paths]
    return start("bare ASGI", argv, {}, port, probe, token)


@dataclass
class Wrk:
    rps: float
    p99_ms: float
    errors: int


def wrk(url: str, token: str, connections: int, seconds: float) -> Wrk:
    argv = ["wrk", "-t2", f"-c{connections}", f"-d{max(1, round(seconds))}s", "--latency", "--timeout", "10s",
            "-H", f"Authorization: Bearer {token}", url]  # fmt: skip
    out = subprocess.run(argv, capture_output=True, text=True, timeout=seconds + 60, check=True).stdout
    rps = float(re.search(r"Requests/sec:\s*([\d.]+)", out).group(1))  # type: ignore[union-attr]
    p99 = re.search(r"99%\s+([\d.]+)(us|ms|s)\b", out)
    scale = {"us": 0.001, "ms": 1.0, "s": 1000.0}
    p99_ms = float(p99.group(1)) * scale[p99.group(2)] if p99 else float("nan")
    bad = re.search(r"Non-2xx or 3xx responses:\s*(\d+)", out)
    errors = int(bad.group(1)) if bad else 0
    errors += sum(int(n) for n in re.findall(r"(?:connect|read|write|timeout) (\d+)", out))
    return Wrk(rps, p99_ms, errors)


@dataclass
class Result:
    backend: str
    page: str
    size: int
    rps: dict[str, list[float]] = field(default_factory=dict)
    p99: dict[str, list[float]] = field(default_factory=dict)
    errors: int = 0


def measure_load(
    backend: str, url: str, ids: dict[str, str], seconds: float, rounds: int, baseline: Path | None = None
) -> list[Result]:
    pages = {name: f"/api/agents/{ids[name]}/messages?parts=cut&limit={PAGE}" for name in ("cut", "wide")}
    token = ids["token"]
    servers: list[Server] = []
    try:
        one = foldline(url, 1, pages["cut"], token)
        servers.append(one)
        bodies = {}
        for path in pages.values():
            response = httpx.get(one.base + path, headers={"Authorization": f"Bearer {token}"}, timeout=30)
            response.raise_for_status()
            bodies[path] = response.content
        servers.append(foldline(url, 2, pages["cut"], token))
        servers.append(foldline(url, 1, pages["cut"], token, env={"FOLDLINE_PAGE_CACHE_MB": "0"}))
        if baseline is not None:
            servers.append(foldline(url, 1, pages["cut"], token, source=baseline))
        with tempfile.TemporaryDirectory() as folder:
            servers.append(bare(bodies, pages["cut"], token, Path(folder)))
            results = [Result(backend, name, len(bodies[path])) for name, path in pages.items()]
            for result in results:
                for s in servers:
                    wrk(s.base + pages[result.page], token, 8, 1)  # warm up
            for _ in range(rounds):
                for result in results:
                    for s in servers:
                        run = wrk(s.base + pages[result.page], token, 8, seconds)
                        result.rps.setdefault(s.name, []).append(run.rps)
                        result.errors += run.errors
                    for s in servers:
                        run = wrk(s.base + pages[result.page], token, 32, seconds)
                        result.p99.setdefault(s.name, []).append(run.p99_ms)
                        result.errors += run.errors
            for result in results:
                print(format_load(result), flush=True)
            return results
    finally:
        for s in servers:
            s.stop()


@dataclass
class Memory:
    backend: str
    encoding: str
    part_bytes: int
    idle: int
    peak: int
    seconds: float
    ok: int


def measure_memory(backend: str, url: str, ids: dict[str, str]) -> list[Memory]:
    """Peak resident memory of one `foldline serve` while 8 clients read the 100 MB part whole."""
    if shutil.which("curl") is None:
        print("curl is needed for the memory measurement: apt-get install -y curl", file=sys.stderr)
        return []
    path = f"/api/agents/{ids['big']}/messages/{ids['big_message']}/parts/1"
    out = []
    for encoding in ("identity", "gzip"):
        server = foldline(url, 1, f"/api/agents/{ids['cut']}/messages?limit=1", ids["token"],
                          {"FOLDLINE_MAX_WHOLE_READS": "8"})
        try:
            time.sleep(0.5)
            idle = server.rss()
            peak = idle
            stop = threading.Event()

            def sample(server: Server = server, stop: threading.Event = stop) -> None:
                nonlocal peak
                while not stop.is_set():
                    peak = max(peak, server.rss())
                    time.sleep(0.01)

            sampler = threading.Thread(target=sample, daemon=True)
            sampler.start()
            start_at = time.monotonic()
            curls = [
                subprocess.Popen(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code} %{size_download}",
                                  "-H", f"Authorization: Bearer {ids['token']}", "-H", f"Accept-Encoding: {encoding}",
                                  "--max-time", "300", server.base + path], stdout=subprocess.PIPE, text=True)
                for _ in range(8)
            ]  # fmt: skip
            answers = [c.communicate()[0] for c in curls]
            seconds = time.monotonic() - start_at
            stop.set()
            sampler.join()
            ok = sum(a.startswith("200 ") for a in answers)
            out.append(Memory(backend, encoding, BIG_PART, idle, peak, seconds, ok))
            print(format_memory(out[-1]), flush=True)
        finally:
            server.stop()
    return out



BACKENDS = {"SQLite": sqlite_url, "PostgreSQL": postgres_url}
SERVERS = ("foldline x1", "foldline x2", "bare ASGI")
BASELINE = "foldline x1, baseline"
UNCACHED = "foldline x1, no page cache"

LOAD_HEADER = (
    "| backend | page | bytes | foldline req/s (8 conn) | bare ASGI req/s | ratio | `--workers 2` req/s "
    "| x2 / x1 | p99 ms (32 conn): foldline / x2 / bare | no page cache: req/s, ratio, p99 ms |"
    "\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"
)
MEMORY_HEADER = (
    "| backend | Accept-Encoding | part (MB) | idle RSS (MB) | peak RSS (MB) | peak - idle | "
    "(peak - idle) / part | 8 reads took (s) | answered 200 |\n|---|---|---:|---:|---:|---:|---:|---:|---:|"
)


def med(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def format_load(r: Result) -> str:
    one, two, base = (med(r.rps.get(name, [])) for name in SERVERS)
    p99 = " / ".join(f"{med(r.p99.get(name, [])):.0f}" for name in SERVERS)
    flag = f" ({r.errors} errors)" if r.errors else ""
    if BASELINE in r.rps:
        before = med(r.rps[BASELINE])
        flag += f" (baseline: {before:,.0f} req/s, {before / base:.3f} of bare; p99 {med(r.p99[BASELINE]):.0f} ms)"
    cold = med(r.rps.get(UNCACHED, []))
    uncached = f"{cold:,.0f}, {cold / base:.3f}, {med(r.p99.get(UNCACHED, [])):.0f}"
    return (
        f"| {r.backend} | {r.page} | {r.size:,} | {one:,.0f} | {base:,.0f} | {one / base:.3f} | {two:,.0f} "
        f"| {two / one:.2f} | {p99}{flag} | {uncached} |"
    )


def format_memory(m: Memory) -> str:
    mb = 1e6
    grew = m.peak - m.idle
    return (
        f"| {m.backend} | {m.encoding} | {m.part_bytes / mb:.0f} | {m.idle / mb:.0f} | {m.peak / mb:.0f} | "
        f"{grew / mb:,.0f} MB | {grew / m.part_bytes:.2f}x | {m.seconds:.1f} | {m.ok} of 8 |"
    )


def write_doc(load: list[Result], memory: list[Memory], rounds: int, seconds: float) -> None:
    text = DOC.read_text()
    start, end = "<!-- throughput:start -->", "<!-- throughput:end -->"
    note = f"wrk, {rounds} interleaved runs of {seconds:g} s per figure (medians)."
    table = "\n".join([note, "", LOAD_HEADER, *map(format_load, load), "", MEMORY_HEADER, *map(format_memory, memory)])
    block = f"{start}\n{table}\n{end}"
    if start in text and end in text:
        text = text[: text.index(start)] + block + text[text.index(end) + len(end) :]
    else:
        text += "\n" + block + "\n"
    DOC.write_text(text)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", action="append", choices=list(BACKENDS), help="default: both")
    parser.add_argument("--seconds", type=int, default=5.0, help="per wrk run (default 5)")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved runs per figure (default 3)")
    parser.add_argument("--no-memory", action="store_true", help="skip the 100 MB whole-part reads")
    parser.add_argument("--no-write", action="store_true", help="do not update docs/benchmarks.md")
    parser.add_argument("--baseline", metavar="REV", help="also serve this git revision, in the same rounds")
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        print(WRK_HELP, file=sys.stderr)
        return 2
    if not 0 < args.seconds <= 60 or not 0 < args.rounds <= 10:
        parser.error("--seconds is 0 to 60 and --rounds 1 to 10: the load stays bounded")
    load: list[Result] = []
    memory: list[Memory] = []
    with ExitStack() as stack:
        baseline = None
        if args.baseline:
            baseline = checkout(args.baseline, Path(stack.enter_context(tempfile.TemporaryDirectory())))
        for backend in args.backend or list(BACKENDS):
            load += measure_backend(backend, args, baseline, memory)
    if args.baseline:
        return 0  # a comparison, not the figures of this revision
    if not args.no_write and not args.backend:
        write_doc(load, memory, args.rounds, args.seconds)
        print("\nwritten to docs/benchmarks.md")
    return 0


def measure_backend(
    backend: str, args: argparse.Namespace, baseline: Path | None, memory: list[Memory]
) -> list[Result]:
    with BACKENDS[backend]() as url:
        with Transcripts.open(Settings(db=url)) as t:
            ids = build(t)
        print(f"\n{backend}\n\n{LOAD_HEADER}", flush=True)
        load = measure_load(backend, url, ids, args.seconds, args.rounds, baseline)
        if not args.no_memory:
            print(f"\n{MEMORY_HEADER}", flush=True)
            memory += measure_memory(backend, url, ids)
    return load


if __name__ == "__main__":
    sys.exit(main())
