"""Import speed: Foldline importing real logs, side by side with agentsview ``sync`` (into its
SQLite) and claude-code-log (making HTML), on the same files in the same run.

Run: ``.venv/bin/pip install -e ".[bench]"`` once (it brings claude-code-log and agentsview), then
``.venv/bin/python bench/import_speed.py [--data FOLDER] [--runs N] [--pg URL]``. ``FOLDER`` holds
``claude-code/`` and ``codex/`` (default ``tests/data/transcripts``). Its files are laid out once
in a home folder of their own, as each agent keeps them (``.claude/projects/<project>/``,
``.codex/sessions/``): the three tools read that same tree. Every tool runs as a child process
(its start included); each run makes a fresh store, and the runs are interleaved, tool after
tool, so the machine's drift hits them alike. The tables show medians: wall clock and CPU (user +
system of the child; for "under serve --watch", the server's CPU in the same time besides).
Then the first transcript page of the largest session (``parts=cut``) is weighed against
claude-code-log's HTML of the same session.
"""

from __future__ import annotations

import argparse
import gzip
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import orjson
import psycopg
from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "transcripts"
BIN = Path(sys.executable).parent
LARGEST = Path("claude-code") / "codemie-ai__codemie-code" / "session-624a4a58.jsonl"
LARGEST_ID = "624a4a58-b34c-462d-a70d-13421c8125a8"  # its sessionId
Timing = tuple[float, float]  # (wall seconds, CPU seconds)


def run(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[float, float, bytes]:
    """Wall seconds, CPU seconds (user + system) and stdout of one child process."""
    start = time.perf_counter()
    child = subprocess.Popen(args, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    out = child.stdout.read() if child.stdout else b""
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    if child.stdout:
        child.stdout.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{args[0]} failed ({os.waitstatus_to_exitcode(status)})")
    return wall, usage.ru_utime + usage.ru_stime, out


def jsonl_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*.jsonl"))


def lay_out(data: Path, home: Path) -> None:
    """The logs under ``data`` where their agents keep them: a Claude Code session in a project
    folder (the folders above it joined by "__"), its subagents under ``<session>/subagents``;
    Codex rollouts under ``sessions``."""
    projects = home / ".claude" / "projects"
    for path in sorted((data / "claude-code").rglob("*.jsonl")):
        rel = path.relative_to(data / "claude-code")
        if path.parent.name == "subagents":  # <...>/<session>/subagents/agent-x.jsonl
            project, tail = rel.parents[2], Path(*rel.parts[-3:])
        else:
            project, tail = rel.parent, Path(rel.name)
        target = projects / "__".join(project.parts) / tail
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
    sessions = home / ".codex" / "sessions" / "2025" / "01" / "01"
    sessions.mkdir(parents=True, exist_ok=True)
    for path in sorted((data / "codex").rglob("*.jsonl")):
        shutil.copy2(path, sessions / path.name)


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def agent_label(name: str) -> str:
    """The label of the format a data folder is named after (the folder's name if none is)."""
    from foldline.importers.formats import registered

    return next((f.label for f in registered() if f.name == name), name)


def quiet_env(home: Path) -> dict[str, str]:
    return {**os.environ, "HOME": str(home), "AGENTSVIEW_NO_DAEMON": "1", "DO_NOT_TRACK": "1"}


def foldline(work: Path, home: Path, target: Path, db: str) -> Timing:
    wall, cpu, out = run([str(BIN / "foldline"), "import", "--json", "--db", db, str(target)], work, quiet_env(home))
    assert not orjson.loads(out)["skipped"]
    return wall, cpu


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def cpu_of(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def foldline_under_serve(work: Path, home: Path, target: Path, db: str) -> tuple[float, float, float]:
    """The import while ``foldline serve --watch`` runs on the same file, watching the folders
    it is imported from: (wall, the import's CPU, the server's CPU meanwhile)."""
    port = free_port()
    args = [str(BIN / "foldline"), "serve", "--db", db, "--watch", "--no-import", "--port", str(port)]
    server = subprocess.Popen(args, cwd=work, env=quiet_env(home), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise SystemExit("foldline serve did not start") from None
                time.sleep(0.1)
        before = cpu_of(server.pid)
        wall, cpu = foldline(work, home, target, db)
        return wall, cpu, cpu_of(server.pid) - before
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(30)


def agentsview(work: Path, home: Path) -> Timing:
    """``agentsview sync`` into a fresh database of its own (its folder in ``home`` removed first)."""
    shutil.rmtree(home / ".agentsview", ignore_errors=True)
    wall, cpu, _ = run([str(BIN / "agentsview"), "sync"], work, quiet_env(home))
    return wall, cpu


def session_dirs(folder: Path) -> list[Path]:
    """Folders holding Claude Code session files (claude-code-log converts one folder a run)."""
    return sorted({p.parent for p in folder.rglob("*.jsonl") if p.parent.name != "subagents"})


def claude_code_log(work: Path, projects: Path) -> Timing:
    wall = cpu = 0.0
    for folder in session_dirs(projects):
        w, c, _ = run([str(BIN / "claude-code-log"), str(folder), "--no-cache"], work)
        wall, cpu = wall + w, cpu + c
    for html in projects.rglob("*.html"):  # what it made is not the next run's input
        html.unlink()
    return wall, cpu


def pg_database(admin: str) -> tuple[str, Callable[[], None]]:
    name = f"foldline_bench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')

    def drop() -> None:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    return f"{admin.rsplit('/', 1)[0]}/{name}", drop


PANEL_FIRST_PAGE = 15  # the panel's first read: static/transcript.js, PAGE


def first_page(db: str) -> tuple[bytes, bytes, bytes, int]:
    """The largest session as the API encodes it: the panel's first page (newest 15, cut), the
    newest 50 cut, the whole transcript cut; and how many messages it holds."""
    from foldline.importers.writer import agent_id
    from foldline.local_account import ensure_local
    from foldline.service import Transcripts
    from foldline.settings import Settings
    from foldline.store import open_store

    t = Transcripts(open_store(db), settings=Settings(db=db))
    local = ensure_local(t, db)
    agent = agent_id(local.workspace_id, f"claude-code:{LARGEST_ID}")
    first = t.messages(local.account_id, agent, cut=True, limit=PANEL_FIRST_PAGE)
    page = t.messages(local.account_id, agent, cut=True, limit=50)
    whole = t.messages(local.account_id, agent, cut=True)
    t.close()
    return orjson.dumps(first), orjson.dumps(page), orjson.dumps(whole), len(whole["messages"])


def gzipped(data: bytes) -> int:
    """Bytes on the wire: the server compresses responses with gzip at level 1."""
    return len(gzip.compress(data, compresslevel=1))


def html_bytes(work: Path) -> bytes:
    session = work / "largest"
    session.mkdir()
    shutil.copy(DATA / LARGEST, session)
    out = session / "out.html"
    run([str(BIN / "claude-code-log"), str(session / LARGEST.name), "-o", str(out), "--no-cache"], work)
    return out.read_bytes()


def median(values: list[float]) -> float:
    return statistics.median(values)


def speed_table(data: Path, work: Path, runs: int, pg: str | None) -> str:
    """Every tool on the same tree, ``runs`` times interleaved; returns the fresh store of the
    last plain Claude Code import (for the weights)."""
    homes = {"claude-code": work / "home-claude", "codex": work / "home-codex"}
    lay_out(data, work / "home-all")
    (homes["claude-code"] / ".claude").mkdir(parents=True)
    shutil.copytree(work / "home-all" / ".claude" / "projects", homes["claude-code"] / ".claude" / "projects")
    (homes["codex"] / ".codex").mkdir(parents=True)
    shutil.copytree(work / "home-all" / ".codex" / "sessions", homes["codex"] / ".codex" / "sessions")
    claude = homes["claude-code"] / ".claude" / "projects"
    codex = homes["codex"] / ".codex" / "sessions"
    others = sorted(p for p in data.iterdir() if p.is_dir() and p.name not in ("claude-code", "codex"))
    rows: dict[tuple[str, str], list[tuple[float, ...]]] = {}
    last = ""
    for n in range(runs):
        def add(tool: str, files: str, timing: tuple[float, ...]) -> None:
            rows.setdefault((tool, files), []).append(timing)

        last = str(work / f"claude-{n}.db")
        add("foldline import → SQLite", "Claude Code", foldline(work, homes["claude-code"], claude, last))
        add("foldline import → SQLite, serve --watch running", "Claude Code",
            foldline_under_serve(work, homes["claude-code"], claude, str(work / f"served-{n}.db")))  # fmt: skip
        if pg:
            url, drop = pg_database(pg)
            try:
                add("foldline import → PostgreSQL", "Claude Code", foldline(work, homes["claude-code"], claude, url))
            finally:
                drop()
        add("agentsview sync → SQLite", "Claude Code", agentsview(work, homes["claude-code"]))
        add("claude-code-log → HTML", "Claude Code", claude_code_log(work, claude))
        add("foldline import → SQLite", "Codex", foldline(work, homes["codex"], codex, str(work / f"codex-{n}.db")))
        add("agentsview sync → SQLite", "Codex", agentsview(work, homes["codex"]))
        for folder in others:  # the other agents' folders, each imported alone (by Foldline only)
            db = str(work / f"{folder.name}-{n}.db")
            add("foldline import → SQLite", agent_label(folder.name), foldline(work, work / "home-all", folder, db))
        every = foldline(work, work / "home-all", data, str(work / f"all-{n}.db"))
        add("foldline import → SQLite", "every agent", every)
    mb = {"Claude Code": jsonl_bytes(claude) / 1e6, "Codex": jsonl_bytes(codex) / 1e6}
    mb["every agent"] = folder_bytes(data) / 1e6
    mb.update({agent_label(folder.name): folder_bytes(folder) / 1e6 for folder in others})
    table = Table(title=f"Importing {data.name} ({runs} runs interleaved, medians; one process start included)")
    for col in ("tool", "files", "MB", "wall s", "CPU s", "MB/s (wall)", "server CPU s"):
        table.add_column(col, justify="right" if col not in ("tool", "files") else "left")
    for (tool, files), timings in rows.items():
        wall = median([t[0] for t in timings])
        cpu = median([t[1] for t in timings])
        server = f"{median([t[2] for t in timings]):.2f}" if len(timings[0]) > 2 else ""
        spread = f" ({min(t[0] for t in timings):.2f}–{max(t[0] for t in timings):.2f})" if runs > 1 else ""
        table.add_row(tool, files, f"{mb[files]:.1f}", f"{wall:.2f}{spread}", f"{cpu:.2f}", f"{mb[files] / wall:.1f}",
                      server)  # fmt: skip
    Console(width=170).print(table)
    return last


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA, help="a folder with claude-code/ and codex/")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--pg", help="a PostgreSQL server's admin URL: a fresh database is made there each run")
    args = parser.parse_args()
    console = Console(width=150)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        db = speed_table(args.data.resolve(), work, args.runs, args.pg)
        if args.data.resolve() != DATA or not (DATA / LARGEST).exists():
            return
        os.environ["HOME"] = str(work / "home-claude")  # where the import kept the local account
        (first, page, whole, count), html = first_page(db), html_bytes(work)
        size = (DATA / LARGEST).stat().st_size / 1e6
        weights = Table(title=f"First view of the largest session ({LARGEST.name}, {size:.2f} MB)")
        for col in ("what", "bytes", "vs HTML", "gzip bytes", "vs HTML gzip"):
            weights.add_column(col, justify="left" if col == "what" else "right")
        html_gz = gzipped(html)
        rows = [
            ("claude-code-log HTML", html),
            (f"Foldline first page in the panel (parts=cut, limit={PANEL_FIRST_PAGE})", first),
            ("Foldline page of 50 (parts=cut, limit=50)", page),
            (f"Foldline whole transcript (parts=cut, {count} messages)", whole),
        ]
        for label, data in rows:
            gz = gzipped(data)
            weights.add_row(label, f"{len(data):,}", f"{len(html) / len(data):.1f}×", f"{gz:,}", f"{html_gz / gz:.1f}×")
        console.print(weights)


if __name__ == "__main__":
    main()
