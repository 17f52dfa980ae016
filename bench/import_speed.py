"""Import speed: Foldline importing the real test transcripts, against claude-code-log making HTML of them.

Run: ``.venv/bin/pip install -e ".[bench]"`` once (it brings claude-code-log), then
``.venv/bin/python bench/import_speed.py``. Both tools run as subprocesses in this run, on a fresh
copy of ``tests/data/transcripts``; time is wall-clock, peak memory is the child's max RSS.
Then the first transcript page of the largest session (``parts=cut``, ``limit=50``, as the API
sends it) is weighed against claude-code-log's HTML of the same session.
"""

from __future__ import annotations

import gzip
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson
from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "transcripts"
BIN = Path(sys.executable).parent
LARGEST = Path("claude-code") / "codemie-ai__codemie-code" / "session-624a4a58.jsonl"
LARGEST_ID = "624a4a58-b34c-462d-a70d-13421c8125a8"  # its sessionId


def run(args: list[str], cwd: Path) -> tuple[float, int, bytes]:
    """Seconds, peak RSS in bytes, and stdout of one child process."""
    start = time.perf_counter()
    child = subprocess.Popen(args, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out = child.stdout.read() if child.stdout else b""
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise SystemExit(f"{args[0]} failed ({child.returncode})")
    return time.perf_counter() - start, usage.ru_maxrss * 1024, out


def jsonl_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*.jsonl"))


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def agent_label(name: str) -> str:
    """The label of the format a data folder is named after (the folder's name if none is)."""
    from foldline.importers.formats import registered

    return next((f.label for f in registered() if f.name == name), name)


def agent_rows(work: Path) -> list[tuple[str, str, float, float, int]]:
    """One row per agent's folder of test data but Claude Code's (its row is above): each imported alone."""
    rows = []
    for folder in sorted(p for p in (work / "data").iterdir() if p.is_dir() and p.name != "claude-code"):
        seconds, peak = foldline(work, folder, str(work / f"{folder.name}.db"))
        rows.append(("foldline import → SQLite", agent_label(folder.name), folder_bytes(folder) / 1e6, seconds, peak))
    return rows


def session_dirs(folder: Path) -> list[Path]:
    """Folders holding Claude Code session files (claude-code-log converts one folder a run)."""
    return sorted({p.parent for p in folder.rglob("*.jsonl") if p.parent.name != "subagents"})


def foldline(work: Path, target: Path, db: str) -> tuple[float, int]:
    seconds, peak, out = run([str(BIN / "foldline"), "import", "--json", "--db", db, str(target)], work)
    assert not orjson.loads(out)["skipped"]
    return seconds, peak


def claude_code_log(work: Path) -> tuple[float, int]:
    seconds, peak = 0.0, 0
    for folder in session_dirs(work / "claude-code"):
        s, p, _ = run([str(BIN / "claude-code-log"), str(folder), "--no-cache"], work)
        seconds, peak = seconds + s, max(peak, p)
    return seconds, peak


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


def main() -> None:
    console = Console(width=150)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        shutil.copytree(DATA, work / "data")
        claude_mb = jsonl_bytes(work / "data" / "claude-code") / 1e6
        all_mb = folder_bytes(work / "data") / 1e6
        ours_claude = foldline(work, work / "data" / "claude-code", str(work / "claude.db"))
        ours_all = foldline(work, work / "data", str(work / "all.db"))
        theirs = claude_code_log(work / "data")
        table = Table(title="Importing the test transcripts (wall clock, one process start included)")
        for col in ("tool", "files", "MB", "seconds", "MB/s", "peak RSS MB"):
            table.add_column(col, justify="right" if col not in ("tool", "files") else "left")
        rows = [
            ("foldline import → SQLite", "Claude Code", claude_mb, *ours_claude),
            ("claude-code-log → HTML", "Claude Code", claude_mb, *theirs),
            *agent_rows(work),
            ("foldline import → SQLite", "every agent", all_mb, *ours_all),
        ]
        for tool, files, mb, seconds, peak in rows:
            table.add_row(tool, files, f"{mb:.1f}", f"{seconds:.2f}", f"{mb / seconds:.1f}", f"{peak / 1e6:.0f}")
        console.print(table)
        (first, page, whole, count), html = first_page(str(work / "claude.db")), html_bytes(work)
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
