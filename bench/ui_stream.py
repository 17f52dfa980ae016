"""The AI SDK's UI message stream taken in: how long `POST …/stream` takes for a fast model's
answer, and how many writes it makes (coalesced), against one write per chunk.

    .venv/bin/python bench/ui_stream.py                  # both backends, the default sizes
    .venv/bin/python bench/ui_stream.py --deltas 20000 --backends sqlite

Runs `foldline serve` as its own process on a fresh SQLite file and a fresh PostgreSQL database
(127.0.0.1 only), and sends it, as fast as the socket takes them, one stream of: a thought of D/4
deltas, a tool call whose input streams in D/4 deltas and whose output arrives in 10 preliminary
outputs of growing size (to 200 KB), and an answer of D/2 deltas (4 characters each). Prints the
stream's size, the seconds from the first byte sent to the answer, the writes the server made,
chunks per second, and the server's CPU seconds; then a smaller stream, coalesced and with the
window set to 0 (a write per chunk that changes the message), for scale.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import httpx
from abuse import free_port
from databases import postgres_url, sqlite_url

from foldline.service import Transcripts
from foldline.settings import Settings


def stream(deltas: int) -> bytes:
    message = str(uuid.uuid4())
    chunks: list[dict[str, object]] = [{"type": "start", "messageId": message}, {"type": "start-step"}]
    chunks += [{"type": "reasoning-start", "id": "r"}]
    chunks += [{"type": "reasoning-delta", "id": "r", "delta": "hmm "} for _ in range(deltas // 4)]
    chunks += [{"type": "reasoning-end", "id": "r"}]
    chunks += [{"type": "tool-input-start", "toolCallId": "c", "toolName": "bash"}]
    command = "echo " + "x" * (deltas // 4 * 4)
    raw = json.dumps({"command": command})
    chunks += [{"type": "tool-input-delta", "toolCallId": "c", "inputTextDelta": raw[i : i + 4]}
               for i in range(0, len(raw), 4)]  # fmt: skip
    chunks += [{"type": "tool-input-available", "toolCallId": "c", "toolName": "bash", "input": {"command": command}}]
    for n in range(1, 11):
        chunks += [{"type": "tool-output-available", "toolCallId": "c", "output": "line\n" * (4000 * n),
                    "preliminary": n < 10}]  # fmt: skip
    chunks += [{"type": "text-start", "id": "t"}]
    chunks += [{"type": "text-delta", "id": "t", "delta": "word"} for _ in range(deltas // 2)]
    chunks += [{"type": "text-end", "id": "t"}, {"type": "finish-step"}, {"type": "finish"}]
    return ("".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n").encode()


def serve(db: str, port: int, home: str, window: float) -> subprocess.Popen[bytes]:
    env = {**os.environ, "FOLDLINE_DB": db, "HOME": home}
    code = f"import foldline.intake as i; i.WINDOW = {window}; from foldline.cli import main; main()"
    command = [sys.executable, "-c", code, "serve", "--port", str(port), "--no-import"]
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


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run(db: str, body: bytes, window: float) -> tuple[float, int, float]:
    t = Transcripts.open(Settings(db=db))
    owner = t.create_account("owner")
    space = t.create_workspace("team", [owner["id"]])
    agent = t.create_agent(owner["id"], space["id"], "streamed")["id"]
    t.close()
    port = free_port()
    with tempfile.TemporaryDirectory() as home:
        proc = serve(db, port, home, window)
        try:
            before = cpu_seconds(proc.pid)
            started = time.perf_counter()
            answer = httpx.post(f"http://127.0.0.1:{port}/api/agents/{agent}/stream", content=body, timeout=600,
                                headers={"Authorization": f"Bearer {owner['token']}",
                                         "Content-Type": "text/event-stream"})  # fmt: skip
            took = time.perf_counter() - started
            answer.raise_for_status()
            return took, int(answer.json()["writes"]), cpu_seconds(proc.pid) - before
        finally:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--deltas", type=int, default=20_000)
    parser.add_argument("--per-chunk-deltas", type=int, default=400, help="the smaller stream, also run uncoalesced")
    parser.add_argument("--backends", default="sqlite,postgres")
    args = parser.parse_args()
    print("| backend | stream | window | seconds | writes | chunks/s | server CPU s |")
    print("|---|---|---|---|---|---|---|")
    runs = ((args.deltas, 0.25), (args.per_chunk_deltas, 0.25), (args.per_chunk_deltas, 0.0))
    for backend in args.backends.split(","):
        for deltas, window in runs:
            body = stream(deltas)
            chunks = body.count(b"\ndata: ") + 1
            with sqlite_url() if backend == "sqlite" else postgres_url() as db:
                took, writes, cpu = run(db, body, window)
            size = f"{chunks:,} chunks, {len(body) / 1e6:.1f} MB"
            print(f"| {backend} | {size} | {window:g} s | {took:.2f} | {writes:,} | {chunks / took:,.0f} | {cpu:.2f} |")


if __name__ == "__main__":
    main()
