"""Benchmark: what an agent reads through the MCP tools to reach one line of a 20 MB tool output,
and how long each tool takes, on SQLite and PostgreSQL.

    .venv/bin/python bench/mcp_tools.py                    # 20 MB output, both backends
    .venv/bin/python bench/mcp_tools.py --size 2MB --backends sqlite --calls 5

One agent holds a user prompt, a short answer and a bash call whose output is ``--size`` of log
lines with one marker line (a random hex token) in the middle, written in-process through the
write door. Then ``foldline serve`` runs as a process of its own on that store and the MCP SDK's
client talks to ``/mcp`` over streamable HTTP, as an agent host does. Reaching the marker's line:

- with the tools: ``search`` for the token, then ``read_part`` with the hit's ``read_part``
  arguments (the characters of both answers, as the agent reads them);
- whole, over the HTTP API: the transcript's page with ``parts=whole`` (its bytes);
- whole, with the tools alone: ``read_part`` slices from the start of the output until the line
  is in one (the answers' characters and how many calls).

Each tool is then called ``--calls`` times in one session (median and 90th percentile, ms, the
client's round trip). Every answer is checked (the marker's line is in the slice).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import socket
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import httpx
import httpx2
import orjson
from databases import postgres_url, sqlite_url
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from foldline.mcp.answers import SLICE_MAX
from foldline.service import Transcripts
from foldline.settings import Settings

LINE = "ok step passed, nothing to see here\n"
FOLDLINE = str(Path(sys.executable).with_name("foldline"))


def parse_size(text: str) -> int:
    units = {"KB": 2**10, "MB": 2**20, "GB": 2**30}
    for unit, factor in units.items():
        if text.upper().endswith(unit):
            return int(float(text[: -len(unit)]) * factor)
    return int(text)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def fill(db: str, size: int) -> dict[str, Any]:
    """The store's one agent and its marker: ids, token, where the marker's line starts."""
    marker = f"M{secrets.token_hex(8)}"
    half = LINE * (size // 2 // len(LINE))
    output = f"{half}ERROR {marker} at step 4711\n{half}"
    with Transcripts.open(Settings(db=db)) as t:
        account = t.create_account("bench")
        workspace = t.create_workspace("bench", [account["id"]])
        agent = t.create_agent(account["id"], workspace["id"], "a long build")["id"]
        for message in (
            {"role": "user", "parts": [{"type": "text", "text": "run the build and tell me what failed"}]},
            {"role": "assistant", "parts": [{"type": "text", "text": "Running it."}, {
                "type": "tool-bash", "toolCallId": "call-1", "state": "output-available",
                "input": {"command": "make all"}, "output": output}]},
        ):  # fmt: skip
            message_id = str(uuid.uuid4())
            t.put_message(account["id"], agent, message_id, {"id": message_id, **message})
        return {"token": account["token"], "agent": agent, "marker": marker, "message": message_id,
                "line": f"ERROR {marker} at step 4711", "output": len(output)}  # fmt: skip


class Served(AbstractContextManager["Served"]):
    """``foldline serve`` on ``db`` in a process of its own."""

    def __init__(self, db: str) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {**os.environ, "FOLDLINE_DB": db}
        args = [FOLDLINE, "serve", "--no-import", "--port", str(self.port)]
        self.process = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def __enter__(self) -> Served:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                httpx.get(self.url + "/api/openapi.json", timeout=1)
                return self
            except httpx.TransportError:
                time.sleep(0.1)
        raise RuntimeError("the server did not start")

    def __exit__(self, *exc: object) -> None:
        self.process.terminate()
        self.process.wait(10)


async def tool(session: ClientSession, name: str, args: dict[str, Any]) -> str:
    result = await session.call_tool(name, args)
    text = "".join(block.text for block in result.content)
    if result.is_error:
        raise RuntimeError(f"{name}: {text}")
    return text


async def measure(url: str, facts: dict[str, Any], calls: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    headers = {"Authorization": f"Bearer {facts['token']}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=120) as http,
        streamable_http_client(url + "/mcp", http_client=http) as (read, write, *_),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        found = await tool(session, "search", {"query": facts["marker"]})
        [hit] = orjson.loads(found)["hits"]
        near = await tool(session, "read_part", hit["read_part"])
        assert facts["line"] in orjson.loads(near)["text"]
        out["tools"] = len(found) + len(near)
        read, start, slices = 0, 0, 0
        while True:  # the whole output from its start, a slice at a time, until the line is read
            args = {"agent_id": facts["agent"], "message_id": facts["message"], "part": 1, "field": "output",
                    "start": start}  # fmt: skip
            text = await tool(session, "read_part", args)
            read, slices = read + len(text), slices + 1
            answer = orjson.loads(text)
            if facts["line"] in answer["text"]:
                break
            start = answer["end"] - len(facts["line"])  # overlap, so a line cut in two is seen whole
        out["slices"], out["sliced"] = read, slices
        asks: dict[str, dict[str, Any]] = {
            "search": {"query": facts["marker"]},
            "list_agents": {},
            "read_transcript": {"agent_id": facts["agent"]},
            "read_part (hit)": hit["read_part"],
            "read_part (64 KB)": {"agent_id": facts["agent"], "message_id": facts["message"], "part": 1,
                                  "field": "output", "start": facts["output"] // 3},  # fmt: skip
            "usage": {"by": "day"},
        }
        out["latency"] = {}
        for name, args in asks.items():
            out["latency"][name] = await timed(lambda n=name, a=args: tool(session, n.split(" ")[0], a), calls)
    page = httpx.get(f"{url}/api/agents/{facts['agent']}/messages", params={"parts": "whole"}, headers=headers,
                     timeout=120)  # fmt: skip
    assert facts["line"] in page.text
    out["whole"] = len(page.content)
    return out


async def timed(call: Callable[[], Awaitable[str]], calls: int) -> tuple[float, float]:
    await call()  # warm
    times = []
    for _ in range(calls):
        began = time.perf_counter()
        await call()
        times.append((time.perf_counter() - began) * 1000)
    times.sort()
    return statistics.median(times), times[min(len(times) - 1, int(len(times) * 0.9))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", default="20MB", help="the tool output's size (default 20MB)")
    parser.add_argument("--backends", default="sqlite,postgres")
    parser.add_argument("--calls", type=int, default=20, help="calls of each tool timed (default 20)")
    options = parser.parse_args()
    size = parse_size(options.size)
    results = {}
    for backend in options.backends.split(","):
        with (sqlite_url if backend == "sqlite" else postgres_url)() as db:
            facts = fill(db, size)
            with Served(db) as served:
                results[backend] = asyncio.run(measure(served.url, facts, options.calls))
    names = list(results)
    print(f"Reaching the marker's line in a {size / 2**20:.0f} MB output (characters read):\n")
    print("| how | " + " | ".join(names) + " |")
    print("|---|" + "---:|" * len(names))
    print("| search + one read_part (MCP) | " + " | ".join(f"{r['tools']:,}" for r in results.values()) + " |")
    print("| the transcript whole (GET …/messages?parts=whole) | "
          + " | ".join(f"{r['whole']:,}" for r in results.values()) + " |")  # fmt: skip
    print(f"| read_part slices of {SLICE_MAX:,} from the start (MCP) | "
          + " | ".join(f"{r['slices']:,} in {r['sliced']} calls" for r in results.values()) + " |")  # fmt: skip
    print("\nEach tool's round trip, ms (median / p90 of", options.calls, "calls):\n")
    print("| tool | " + " | ".join(names) + " |")
    print("|---|" + "---:|" * len(names))
    for name in results[names[0]]["latency"]:
        cells = [f"{r['latency'][name][0]:.1f} / {r['latency'][name][1]:.1f}" for r in results.values()]
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
