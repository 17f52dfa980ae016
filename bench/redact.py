"""Redaction's cost: the scanner's speed on real transcript text, against detect-secrets, and the
write door with and without it.

Run: ``.venv/bin/python bench/redact.py``. The text is every string value of the JSONL sessions
in ``tests/data/transcripts`` (what the write door scans). detect-secrets is measured when a
Python that has it is named by ``DETECT_SECRETS_PYTHON`` (or it is importable here); it is not a
dependency. The write door is timed putting the messages an import of the same sessions stores,
again, into a fresh SQLite file (``synchronous=normal``, so the disk's sync does not hide the
cost), with redaction on and off, once each way.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
from rich.console import Console
from rich.table import Table

from foldline.importers import import_paths
from foldline.redaction import Redactor
from foldline.service import Transcripts
from foldline.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "transcripts"
RUNS = 3  # the scanner's runs (best of); the write door runs once each way
SAMPLE_MB = 2  # detect-secrets is measured on the first this many MB of the strings (it is slow)

DETECT_SECRETS = """
import sys, time
from detect_secrets.core.scan import scan_line
from detect_secrets.settings import default_settings
texts = open(sys.argv[1], encoding="utf-8").read().split("\\x00")
with default_settings():
    start = time.perf_counter()
    found = sum(1 for text in texts for line in text.splitlines() for _ in scan_line(line))
    print(time.perf_counter() - start, found)
"""


def strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)


def transcript_texts() -> list[str]:
    texts = []
    for path in sorted(DATA.rglob("*.jsonl")):
        for line in path.read_bytes().splitlines():
            try:
                texts.extend(strings(orjson.loads(line)))
            except orjson.JSONDecodeError:  # a blank line, or a log that breaks off (some do)
                continue
    return texts


def ours(texts: list[str]) -> tuple[float, int]:
    redactor = Redactor()
    best, found = float("inf"), 0
    for _ in range(RUNS):
        start = time.perf_counter()
        found = sum(redactor.text(t)[1] for t in texts)
        best = min(best, time.perf_counter() - start)
    return best, found


def detect_secrets(texts: list[str]) -> tuple[float, int] | None:
    python = os.environ.get("DETECT_SECRETS_PYTHON") or sys.executable
    with tempfile.NamedTemporaryFile("w", suffix=".txt", encoding="utf-8", delete=False) as f:
        f.write("\x00".join(t.replace("\x00", " ") for t in texts))
    try:
        done = subprocess.run([python, "-c", DETECT_SECRETS, f.name], capture_output=True, text=True)
    finally:
        os.unlink(f.name)
    if done.returncode != 0:
        return None
    seconds, found = done.stdout.split()
    return float(seconds), int(found)


def stored_messages(work: Path) -> list[dict[str, Any]]:
    """The messages an import of the sessions stores (redaction off: as they were written)."""
    settings = Settings(db=str(work / "source.db"), redact=False, sqlite_synchronous="normal")
    with Transcripts.open(settings) as t:
        account = t.create_account("bench")["id"]
        workspace = t.create_workspace("bench", [account])["id"]
        import_paths(t, [DATA], account_id=account, workspace_id=workspace)
        out = []
        for agent in t.list_agents(account, workspace, limit=200)["agents"]:
            out.extend(t.messages(account, agent["id"])["messages"])
        return out


def write_door(work: Path, messages: list[dict[str, Any]], redact: bool, run: int) -> float:
    settings = Settings(db=str(work / f"door-{redact}-{run}.db"), redact=redact, sqlite_synchronous="normal")
    with Transcripts.open(settings) as t:
        account = t.create_account("bench")["id"]
        agent = t.create_agent(account, t.create_workspace("bench", [account])["id"])["id"]
        start = time.perf_counter()
        for message in messages:
            t.put_message(account, agent, message["id"], message)
        return time.perf_counter() - start


def main() -> None:
    texts = transcript_texts()
    mb = sum(len(t.encode()) for t in texts) / 1e6
    table = Table(title=f"Scanning {mb:.1f} MB of transcript strings ({len(texts):,} values)")
    for column in ("scanner", "seconds", "MB/s", "secrets found"):
        table.add_column(column, justify="right" if column != "scanner" else "left")
    seconds, found = ours(texts)
    table.add_row("foldline.redaction", f"{seconds:.2f}", f"{mb / seconds:.1f}", str(found))
    sample, size = [], 0
    for text in texts:
        if size > SAMPLE_MB * 1e6:
            break
        sample.append(text)
        size += len(text.encode())
    seconds, found = ours(sample)
    row = (f"{seconds:.2f}", f"{size / 1e6 / seconds:.1f}", str(found))
    table.add_row(f"foldline.redaction, first {size / 1e6:.1f} MB", *row)
    theirs = detect_secrets(sample)
    if theirs is None:
        table.add_row("detect-secrets", "not installed (DETECT_SECRETS_PYTHON)", "", "")
    else:
        row = (f"{theirs[0]:.2f}", f"{size / 1e6 / theirs[0]:.2f}", str(theirs[1]))
        table.add_row(f"detect-secrets 1.5 (every plugin), first {size / 1e6:.1f} MB", *row)
    Console().print(table)

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        messages = stored_messages(work)
        off = write_door(work, messages, False, 0)
        on = write_door(work, messages, True, 0)
    door = Table(title=f"The write door: {len(messages):,} messages put into a fresh SQLite file")
    for column in ("redaction", "seconds", "messages/s", "cost"):
        door.add_column(column, justify="right" if column != "redaction" else "left")
    door.add_row("off", f"{off:.2f}", f"{len(messages) / off:,.0f}", "")
    door.add_row("on", f"{on:.2f}", f"{len(messages) / on:,.0f}", f"{(on / off - 1) * 100:+.1f}%")
    Console().print(door)


if __name__ == "__main__":
    main()
