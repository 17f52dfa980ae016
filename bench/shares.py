"""What a share link's reads cost beside an account's, over HTTP on a real server.

    .venv/bin/python bench/shares.py [--runs 200] [--backends sqlite,postgres]

An agent of 200 messages (a prompt, and an answer holding a 20 KB bash output each) is read the
newest 15 messages cut, and as its agent read, by its member's bearer token and by a share link
(``/api/shared/{token}/…``), in turn, with one keep-alive connection each; and the check a
share's event stream makes every second (``may_follow_share``) is timed beside an account's.
A share is read from the database on every request (no cache, so a revocation holds at once);
an account's token is remembered for a few seconds and its page read takes the short way in.
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time
import uuid
from collections.abc import Callable

import httpx
from databases import postgres_url, sqlite_url

from foldline import server as serving
from foldline.app import create_app
from foldline.service import Transcripts
from foldline.settings import Settings


def interleaved(works: dict[str, Callable[[], object]], runs: int) -> dict[str, float]:
    """The median of each work, run in turn (one of each, ``runs`` times): a loaded machine's
    slow moments fall on all of them alike."""
    times: dict[str, list[float]] = {name: [] for name in works}
    for _ in range(runs):
        for name, work in works.items():
            start = time.perf_counter()
            work()
            times[name].append((time.perf_counter() - start) * 1000)
    return {name: statistics.median(found) for name, found in times.items()}


def fill(t: Transcripts, account: str, agent: str, messages: int) -> None:
    for i in range(messages // 2):
        prompt = {"id": str(uuid.uuid4()), "role": "user", "parts": [{"type": "text", "text": f"step {i}"}]}
        answer = {"id": str(uuid.uuid4()), "role": "assistant", "parts": [
            {"type": "text", "text": "running it"},
            {"type": "tool-bash", "toolCallId": f"c{i}", "state": "output-available",
             "input": {"command": "make"}, "output": "ok line\n" * 2_500},
        ]}  # fmt: skip
        for m in (prompt, answer):
            t.put_message(account, agent, str(m["id"]), m)


def run(url: str, runs: int) -> dict[str, float]:
    t = Transcripts.open(Settings(db=url))
    port = 18_000 + uuid.uuid4().int % 2_000
    server = serving.Server(serving.config(create_app(t), t.settings, "127.0.0.1", port, log_level="error"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        while not server.started:
            time.sleep(0.02)
        made = t.create_account("bench")
        account, token = made["id"], made["token"]
        workspace = t.create_workspace("bench", [account])["id"]
        agent = t.create_agent(account, workspace, "shared")["id"]
        fill(t, account, agent, 200)
        share = t.create_share(account, agent)["token"]
        base = f"http://127.0.0.1:{port}"
        cut = {"parts": "cut", "limit": "15"}
        with (
            httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}) as member,
            httpx.Client(base_url=f"{base}/api/shared/{share}") as shared,
        ):
            reads: dict[str, Callable[[], object]] = {
                "cut page of 15, member (ms)": lambda: member.get(f"/api/agents/{agent}/messages", params=cut),
                "cut page of 15, share link (ms)": lambda: shared.get(f"/agents/{agent}/messages", params=cut),
                "agent read, member (ms)": lambda: member.get(f"/api/agents/{agent}"),
                "agent read, share link (ms)": lambda: shared.get(f"/agents/{agent}"),
            }
            for read in reads.values():
                answer = read()
                assert isinstance(answer, httpx.Response) and answer.status_code == 200
            reads["stream check, member (ms)"] = lambda: t.may_follow(token, account, agent)
            reads["stream check, share link (ms)"] = lambda: t.may_follow_share(share, agent)
            return interleaved(reads, runs)
    finally:
        server.should_exit = True
        thread.join(10)
        t.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--backends", default="sqlite,postgres")
    args = parser.parse_args()
    columns: dict[str, dict[str, float]] = {}
    for backend in args.backends.split(","):
        with sqlite_url() if backend == "sqlite" else postgres_url() as url:
            columns[backend] = run(url, args.runs)
    names = list(next(iter(columns.values())))
    print("| | " + " | ".join(columns) + " |")
    print("|---|" + "---:|" * len(columns))
    for name in names:
        print(f"| {name} | " + " | ".join(f"{columns[b][name]:.2f}" for b in columns) + " |")


if __name__ == "__main__":
    main()
