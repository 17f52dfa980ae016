"""The agents list with many agents: bytes and time of a page, and what keeping the totals costs a write.

    .venv/bin/python bench/agents_list.py [--agents 1000] [--backends sqlite,postgres]

Makes N agents, each with a prompt and an answer that reports usage, then measures: the bytes
of the list as it was before paging (every agent, the old six fields), the same agents with
today's fields, one page of 50 (with its facets) and a later page; the median time to read a
page through ``Transcripts``; and the median time of one message write with and without a usage
report (the write keeps the agent's totals in its transaction either way).
"""

from __future__ import annotations

import argparse
import statistics
import time
import uuid
from collections.abc import Callable

import orjson
from databases import postgres_url, sqlite_url

from foldline.service import Transcripts
from foldline.settings import Settings

USAGE = {"inputTokens": 42_000, "outputTokens": 900, "inputTokenDetails": {"cacheReadTokens": 40_000}}


def median_ms(work: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        work()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def message(role: str, usage: bool) -> dict[str, object]:
    meta: dict[str, object] = {"cwd": "/srv/app", "gitBranch": "main"}
    if usage:
        meta.update(model="claude-sonnet-4-5-20250929", usage=USAGE)
    return {"id": str(uuid.uuid4()), "role": role, "parts": [{"type": "text", "text": "hello"}], "metadata": meta}


def run(url: str, agents: int) -> dict[str, object]:
    t = Transcripts.open(Settings(db=url))
    try:
        account = t.create_account("bench")["id"]
        workspace = t.create_workspace("bench", [account])["id"]
        ids = []
        for i in range(agents):
            agent = t.create_agent(account, workspace, title=f"agent {i}")["id"]
            for role in ("user", "assistant"):
                m = message(role, role == "assistant")
                t.put_message(account, agent, str(m["id"]), m)
            ids.append(agent)
        every = t.list_agents(account, workspace, limit=200)
        rows = list(every["agents"])
        while every["next"]:
            every = t.list_agents(account, workspace, limit=200, cursor=every["next"])
            rows.extend(every["agents"])
        old = {"agents": [{k: a[k] for k in ("id", "workspace_id", "owner_id", "title", "created_at", "updated_at")}
                          for a in rows]}  # fmt: skip
        first = t.list_agents(account, workspace)
        later = t.list_agents(account, workspace, cursor=first["next"])
        page_ms = median_ms(lambda: t.list_agents(account, workspace), 30)
        cost_ms = median_ms(lambda: t.list_agents(account, workspace, sort="cost"), 30)
        agent = ids[0]

        def write(role: str, usage: bool) -> None:
            m = message(role, usage)
            t.put_message(account, agent, str(m["id"]), m)

        plain = median_ms(lambda: write("user", False), 100)
        used = median_ms(lambda: write("assistant", True), 100)
        assert len(rows) == agents  # every agent came through the pages
        return {
            "before: every agent, old fields (bytes)": len(orjson.dumps(old)),
            "every agent, today's fields (bytes)": len(orjson.dumps({"agents": rows})),
            "first page of 50, with facets (bytes)": len(orjson.dumps(first)),
            "a later page of 50 (bytes)": len(orjson.dumps(later)),
            "a page read, by activity (ms)": round(page_ms, 2),
            "a page read, by cost (ms)": round(cost_ms, 2),
            "a message write without usage (ms)": round(plain, 2),
            "a message write with usage, priced (ms)": round(used, 2),
        }
    finally:
        t.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=1000)
    parser.add_argument("--backends", default="sqlite,postgres")
    args = parser.parse_args()
    for backend in args.backends.split(","):
        with (sqlite_url if backend == "sqlite" else postgres_url)() as url:
            print(backend)
            for name, value in run(url, args.agents).items():
                print(f"  {name}: {value}")


if __name__ == "__main__":
    main()
