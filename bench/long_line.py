"""What one very long line of a JSONL log costs an import (issue 19's red-team case: a 2 GB line).

    .venv/bin/python bench/long_line.py [--mb 300] [--bound BYTES] [--other FOLDLINE_BIN]

Writes a real Claude Code session (tests/data) with one prompt line of ``--mb`` MiB appended,
into a temporary folder, and runs ``foldline import --json`` on it as a child process: its wall
time, CPU time and peak memory (max RSS), and what the summary says of the line.
``FOLDLINE_IMPORT_MAX_LINE`` is the default (256 MiB) unless ``--bound`` is given. ``--other``
runs another ``foldline`` executable the same way (an older build, which read the line whole).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
import time
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "tests" / "data" / "transcripts" / "claude-code" / "jnarowski__agentcmd" / "full-session.jsonl"
PIECE = 1 << 20


def write_log(path: Path, mib: int) -> int:
    lines = SOURCE.read_bytes().splitlines(keepends=True)
    line = orjson.loads(lines[0])
    line.update(uuid="00000000-0000-4000-8000-0000000000aa", parentUuid=None)
    head, tail = orjson.dumps({**line, "message": {"role": "user", "content": "x"}}).split(b'"content":"x"')
    with path.open("wb") as f:
        f.writelines(lines)
        f.write(head + b'"content":"')
        for _ in range(mib):
            f.write(b"y" * PIECE)
        f.write(b'"' + tail + b"\n")
    return path.stat().st_size


def run(binary: str, log: Path, env: dict[str, str]) -> tuple[float, float, int, str]:
    """Wall seconds, CPU seconds, max RSS in MiB, and what the summary says of the long line."""
    db = log.with_name(f"{time.monotonic_ns()}.db")
    start = time.monotonic()
    child = subprocess.Popen([binary, "import", "--json", "--db", str(db), str(log)], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, env=env)  # fmt: skip
    out = child.stdout.read() if child.stdout else b""
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.monotonic() - start
    if status != 0:
        raise SystemExit(f"{binary} import failed ({status})")
    summary = orjson.loads(out)
    said = "; ".join(s["reason"] for s in summary["skipped"]) or f"imported ({summary['messages']} messages)"
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss // 1024, said


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=int, default=300, help="the long line's size in MiB")
    parser.add_argument("--bound", type=int, help="FOLDLINE_IMPORT_MAX_LINE for the run (bytes)")
    parser.add_argument("--other", help="another foldline executable to run the same way")
    args = parser.parse_args()
    env = {**os.environ}
    if args.bound:
        env["FOLDLINE_IMPORT_MAX_LINE"] = str(args.bound)
    builds = [("this build", str(ROOT / ".venv" / "bin" / "foldline"))]
    if args.other:
        builds.append(("--other", args.other))
    with tempfile.TemporaryDirectory(prefix="foldline-long-line-") as tmp:
        log = Path(tmp) / "session.jsonl"
        size = write_log(log, args.mb)
        print(f"log: {size / 2**20:,.0f} MiB, one line of {args.mb} MiB\n")
        print("| build | wall s | CPU s | max RSS MiB | the long line |")
        print("|---|---:|---:|---:|---|")
        for name, binary in builds:
            wall, cpu, rss, said = run(binary, log, env)
            print(f"| {name} | {wall:.2f} | {cpu:.2f} | {rss:,} | {said[:90]} |")


if __name__ == "__main__":
    main()
