"""Benchmark: opening the largest transcript in the panel, in headless Chromium.

    .venv/bin/python bench/panel_load.py [--runs 7]

It imports the largest Claude Code session kept in ``tests/data/transcripts/`` into a fresh
SQLite store (or, without the importers, writes a transcript of the same size through the
API), adds a synthetic transcript ten times bigger written through the API, serves them with
the real app under uvicorn, and opens each one's address in a fresh browser context per run.
It prints, as medians: the bytes of transcript data (``/api`` responses, and the first view a
transcript's shell holds) on the wire (the app gzips JSON) and decoded, all bytes the page
loaded, and the time from navigation until the newest page is drawn (the panel's
``foldline:newest-page`` performance mark), and the density: the most tool calls visible at
once in a 1400×900 window anywhere in the transcript, once every page is loaded (tool rows whose
summary row fits wholly in one screen below the sticky top and find bars), whole and in the
outline (the toolbar's Outline: every answer a one-line fold), and how many tool rows one
screen holds (its height over the median distance between one tool row and the next): the
first is bounded by the session's own shape (prose between runs of calls), which the last figure
shows: how many screens the shortest stretch of the whole transcript holding 20 tool calls takes
(over 1 means no screen can hold 20 of them without folding the answers between them).
Goals: under 100 KB of transcript data, under 1 s; at least 20 tool calls in view (in the
outline: whole answers stay whole in the normal view, see docs/panel.md).

Side by side in the same run, when claude-code-transcripts is installed (the ``bench`` extra):
the same session converted by it to static HTML, its page 1 served from the same machine by a
plain static file server, opened the same way (fresh context, same window) and timed from
navigation to the end of ``DOMContentLoaded`` (all of page 1 in the DOM: the static page's
counterpart of the panel's mark, which is set once the newest page is in the DOM). Runs of the
two alternate, so the shared machine's drift hits both alike.

"""

from __future__ import annotations

import argparse
import functools
import http.server
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
import zlib
from pathlib import Path
from typing import Any

import orjson
import uvicorn
from playwright.sync_api import Browser, Request, sync_playwright

from foldline import Client
from foldline.app import create_app
from foldline.service import Transcripts
from foldline.settings import Settings
from foldline.store import open_store

ROOT = Path(__file__).resolve().parents[1]
PAGE = 15  # the panel's first page (static/transcript.js)
DATA = ROOT / "tests" / "data" / "transcripts" / "claude-code"
VERBOSE = False
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


class Server:
    def __init__(self, transcripts: Transcripts) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        config = uvicorn.Config(create_app(transcripts), host="127.0.0.1", port=port, log_level="error")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> Server:
        self.thread.start()
        while not self.server.started:
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(10)


class StaticServer:
    """A plain static file server for a folder (Python's own), in a thread."""

    def __init__(self, folder: Path) -> None:
        handler = functools.partial(Quiet, directory=str(folder))
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> StaticServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.thread.join(10)


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


def static_pages(session: Path, folder: Path) -> Path | None:
    """The session converted by claude-code-transcripts into ``folder``, or ``None`` without it."""
    tool = Path(sys.executable).with_name("claude-code-transcripts")
    if not tool.exists():
        return None
    subprocess.run([str(tool), "json", str(session), "-o", str(folder)], check=True, capture_output=True)
    return folder / "page-001.html"


# When the largest text or picture was painted (Largest Contentful Paint), read the same way on both.
LCP = """new Promise((resolve) => new PerformanceObserver((list) => {
  const last = list.getEntries().at(-1);
  resolve(last.renderTime || last.startTime);
}).observe({type: 'largest-contentful-paint', buffered: true}))"""


def measure_static(browser: Browser, base: str, page_name: str) -> dict[str, float]:
    """Open a static page like the panel's: time to the end of DOMContentLoaded, bytes loaded."""
    context = browser.new_context(base_url=base, viewport={"width": 1400, "height": 900})
    page = context.new_page()
    requests: list[Request] = []
    page.on("requestfinished", lambda r: requests.append(r))
    page.goto("/" + page_name, wait_until="load")
    ms = float(page.evaluate("performance.getEntriesByType('navigation')[0].domContentLoadedEventEnd"))
    page.wait_for_timeout(300)
    lcp = float(page.evaluate(LCP))
    total = sum(r.sizes()["responseBodySize"] + r.sizes()["responseHeadersSize"] for r in requests)
    context.close()
    return {"ms": ms, "lcp": lcp, "total": total}


def largest_session() -> Path:
    return max(DATA.rglob("*.jsonl"), key=lambda p: p.stat().st_size)


def import_largest(t: Transcripts, account: str, workspace: str) -> str | None:
    """The imported agent with the most messages, or ``None`` without the importers."""
    try:
        from foldline.importers.importer import import_paths
    except ImportError:
        return None
    import_paths(t, [largest_session()], account_id=account, workspace_id=workspace)
    agents = t.list_agents(account, workspace)["agents"]
    sizes = {a["id"]: len(t.messages(account, a["id"])["messages"]) for a in agents}
    return max(agents, key=lambda a: sizes[a["id"]])["id"] if agents else None


def synthetic(client: Client, workspace: str, target_bytes: int, title: str) -> str:
    """A coding session through the API: questions, thoughts, commands and outputs of all sizes."""
    agent: str = client.create_agent(workspace, title=title)["id"]
    written, turn = 0, 0
    while written < target_bytes:
        turn += 1
        output = "".join(f"{turn}:{i} " + "result line " * 6 + "\n" for i in range(20 + (turn * 37) % 1500))
        parts: list[dict[str, Any]] = [
            {"type": "step-start"},
            {"type": "reasoning", "text": f"Thinking about step {turn}. " * (20 + (turn * 13) % 400)},
            {"type": "text", "text": f"Step {turn}: running the command."},
            {
                "type": "tool-Bash",
                "toolCallId": f"toolu_{turn}",
                "state": "output-available",
                "input": {"command": f"make step-{turn}"},
                "output": output,
            },
        ]
        user = {
            "id": str(uuid.uuid4()),
            "role": "user",
            "parts": [{"type": "text", "text": f"Go on with step {turn}."}],
        }
        client.put_message(agent, user)
        client.put_message(agent, {"id": str(uuid.uuid4()), "role": "assistant", "parts": parts})
        written += sum(len(str(p)) for p in parts) + 60
    return agent


DENSITY = """() => {
  const sticky = [...document.querySelectorAll('.bar, .find')]
    .reduce((h, b) => h + b.getBoundingClientRect().height, 0);
  const view = window.innerHeight - sticky;
  const rows = [...document.querySelectorAll('.messages details.tool')]
    .map((d) => d.querySelector(':scope > summary').getBoundingClientRect())
    .filter((r) => r.height > 0)
    .map((r) => [r.top + window.scrollY, r.bottom + window.scrollY]);
  let best = 0;
  for (let i = 0; i < rows.length; i += 1) {
    let n = 0;
    for (let j = i; j < rows.length && rows[j][1] <= rows[i][0] + view; j += 1) n += 1;
    best = Math.max(best, n);
  }
  const gaps = rows.slice(1).map((r, i) => r[0] - rows[i][0]).filter((g) => g > 0).sort((a, b) => a - b);
  const pitch = gaps.length ? gaps[Math.floor(gaps.length / 2)] : 0;
  let span = Infinity;  // the shortest stretch of the page that holds 20 tool rows
  for (let i = 0; i + 20 <= rows.length; i += 1) span = Math.min(span, rows[i + 19][1] - rows[i][0]);
  return [best, pitch ? Math.floor(view / pitch) : 0, span === Infinity ? 0 : span / view];
}"""


def whole_density(page: Any) -> list[float]:
    """Load every page of the transcript (Jump to the start), then count the densest screen: the
    most tool rows in view, the rows a screen holds, and how many screens the shortest stretch of
    20 tool rows takes (0 with fewer rows)."""
    if page.locator(".older").is_visible():
        page.click("text=Jump to the start")
        while page.locator(".older").is_visible():
            page.wait_for_timeout(50)
        page.wait_for_timeout(200)
    return [float(n) for n in page.evaluate(DENSITY)]


FIRST_VIEW = re.compile(rb'<script type="application/json" id="first-view">(.*?)</script>', re.S)


def transcript_data(request: Request) -> tuple[int, int | None] | None:
    """The transcript data a request brought, decoded, and its part of the bytes on the wire when
    it is not the whole response: an ``/api`` answer (all of it), or the first view a
    transcript's shell holds (its share of the shell's bytes: the JSON at the server's gzip
    level); ``None`` for anything else."""
    response = request.response()
    if "/api/" in request.url:
        return (len(response.body()) if response else 0), None
    if request.resource_type == "document" and response is not None:
        found = FIRST_VIEW.search(response.body())
        if found:
            return len(found.group(1)), len(zlib.compress(found.group(1), 6))
    return None


def measure(browser: Browser, base: str, token: str, agent: str) -> dict[str, float]:
    context = browser.new_context(base_url=base, viewport={"width": 1400, "height": 900})
    context.add_cookies([{"name": "foldline_token", "value": token, "url": base}])
    page = context.new_page()
    requests: list[Request] = []
    page.on("requestfinished", lambda r: requests.append(r))
    page.goto(f"/agents/{agent}")
    mark = "performance.getEntriesByName('foldline:newest-page').map(e => e.startTime)[0] ?? null"
    drawn = page.evaluate(mark)
    while drawn is None:  # poll from outside: the panel's CSP forbids the eval that wait_for_function uses
        page.wait_for_timeout(20)
        drawn = page.evaluate(mark)
    page.wait_for_timeout(300)  # let the responses already asked for finish (the event stream stays open)
    lcp = float(page.evaluate(LCP))
    api = total = json = 0
    for request in requests:
        size = request.sizes()
        got = size["responseBodySize"] + size["responseHeadersSize"]
        total += got
        data = transcript_data(request)
        if data is not None:
            api += got if data[1] is None else data[1]
            json += data[0]
            decoded = data[0]
            if VERBOSE:
                print(f"  {got:>8} {decoded:>8} {request.url.split('/', 3)[-1][:90]}")
    density, capacity, span = whole_density(page)  # after the sizes: it reads every older page
    page.click("button.outline-toggle")
    page.wait_for_timeout(200)
    outline = whole_density(page)[0]
    context.close()
    return {
        "api": api, "json": json, "total": total, "ms": drawn, "lcp": lcp,
        "tools": density, "outline": outline, "capacity": capacity, "span": span,
    }  # fmt: skip


def median(runs: list[dict[str, float]], key: str) -> float:
    return float(statistics.median(r[key] for r in runs))


def version() -> str:
    try:
        from importlib.metadata import version as found

        return found("claude-code-transcripts")
    except Exception:
        return ""


def whole_bytes(client: Client, agent: str) -> int:
    return len(orjson.dumps(client.messages(agent)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--verbose", action="store_true", help="print each API response's size")
    args = parser.parse_args()
    global VERBOSE
    VERBOSE = args.verbose
    chromium = shutil.which("chromium")
    if chromium is None:
        raise SystemExit("needs Debian's chromium on PATH")
    db = str(Path(tempfile.mkdtemp()) / "bench.db")
    t = Transcripts(open_store(db), settings=Settings(db=db))
    who = t.create_account("bench")
    workspace = t.create_workspace("bench", [who["id"]])["id"]
    session = largest_session()
    pages = Path(tempfile.mkdtemp())
    static = static_pages(session, pages)
    with (
        Server(t) as server,
        Client(server.url, who["token"]) as client,
        StaticServer(pages) as files,
        sync_playwright() as p,
    ):
        cases: list[tuple[str, str]] = []
        imported = import_largest(t, who["id"], workspace)
        if imported:
            cases.append((f"imported {session.name}", imported))
        else:
            size = session.stat().st_size
            cases.append(("written like " + session.name, synthetic(client, workspace, size, "like the largest")))
        big = 10 * session.stat().st_size
        cases.append((f"synthetic {big / 1e6:.0f} MB", synthetic(client, workspace, big, "synthetic")))
        browser = p.chromium.launch(executable_path=chromium, args=ARGS)
        rows = []
        side: list[dict[str, float]] = []
        for index, (name, agent) in enumerate(cases):
            count = len(client.messages(agent, cut=True)["messages"])
            runs = []
            for _ in range(args.runs):
                runs.append(measure(browser, server.url, who["token"], agent))
                if static is not None and index == 0:  # alternating with the same session's
                    side.append(measure_static(browser, files.url, static.name))
            med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
            rows.append((name, count, whole_bytes(client, agent), med, runs))
        browser.close()
    print(f"panel load, median of {args.runs} runs (fresh browser context each; SQLite; one machine)\n")
    print(
        "| transcript | messages | whole transcript (JSON) | transcript data on the wire | same, decoded JSON "
        "| all bytes loaded | newest page drawn | tool calls in view (1400×900) | same, in the outline "
        "| tool rows a screen holds | screens 20 calls take, whole |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, count, whole, med, _ in rows:
        print(
            f"| {name} | {count} | {whole / 1024:,.0f} KB | {med['api'] / 1024:,.1f} KB | {med['json'] / 1024:,.1f} KB "
            f"| {med['total'] / 1024:,.1f} KB | {med['ms']:,.0f} ms | {med['tools']:.0f} | {med['outline']:.0f} "
            f"| {med['capacity']:.0f} | {med['span']:.1f} |"
        )
    if side:
        ours = rows[0][4]
        print(f"\nside by side, {session.name}, {args.runs} alternating runs each (ms: min / median / max)\n")
        print("| what | bytes loaded | in the DOM | vs the static page | largest paint (LCP) | vs the static page |")
        print("|---|---:|---:|---:|---:|---:|")
        for name, found in [
            (f"claude-code-transcripts {version()} static page 1 (DOMContentLoaded)", side),
            (f"Foldline panel, the newest {PAGE} messages (foldline:newest-page)", ours),
        ]:
            cells = [f"{median(found, 'total') / 1024:,.1f} KB"]
            for key in ("ms", "lcp"):
                times = [r[key] for r in found]
                cells.append(f"{min(times):,.0f} / {median(found, key):,.0f} / {max(times):,.0f}")
                cells.append(f"{median(found, key) / median(side, key):.2f}x")
            print(f"| {name} | " + " | ".join(cells) + " |")
    worst = max(r[3]["json"] for r in rows), max(r[3]["ms"] for r in rows)
    print(
        f"\ngoal: under 100 KB of transcript data, even decoded ({'met' if worst[0] < 100 * 1024 else 'NOT met'}), "
        f"under 1 s to the newest page ({'met' if worst[1] < 1000 else 'NOT met'}), "
        f"at least 20 tool calls in view on the imported session "
        f"(whole: {'met' if rows[0][3]['tools'] >= 20 else 'NOT met'}, "
        f"outline: {'met' if rows[0][3]['outline'] >= 20 else 'NOT met'})"
    )


if __name__ == "__main__":
    main()
