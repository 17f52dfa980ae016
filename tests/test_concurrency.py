"""Concurrent writers and readers, on SQLite and PostgreSQL: nothing lost, no message torn."""

from __future__ import annotations

import threading
from collections.abc import Callable

from core_helpers import new_id
from servers import ServerThread

from foldline import Client
from foldline.service import Transcripts

WRITERS, READERS, ROUNDS, MESSAGES = 3, 2, 6, 4


def message(message_id: str, writer: int, round_: int) -> dict[str, object]:
    """Every part carries the same stamp, so a part from another write shows at once."""
    stamp = f"w{writer}r{round_}"
    parts = [{"type": "text", "text": f"{stamp} part {i}"} for i in range(5)]
    parts.append({"type": "reasoning", "text": stamp + " " + "x" * 5000})
    return {"id": message_id, "role": "assistant", "parts": parts}


def stamps(msg: dict[str, object]) -> set[str]:
    parts = msg["parts"]
    assert isinstance(parts, list)
    return {p["text"].split(" ")[0] for p in parts}


def test_concurrent_writers_and_readers_lose_and_tear_nothing(server: ServerThread, transcripts: Transcripts) -> None:
    owner = transcripts.create_account("owner")
    space = transcripts.create_workspace("w", [owner["id"]])
    agents = [transcripts.create_agent(owner["id"], space["id"])["id"] for _ in range(WRITERS)]
    ids = {agent: [new_id() for _ in range(MESSAGES)] for agent in agents}
    problems: list[str] = []
    done = threading.Event()

    def writer(n: int) -> None:
        with Client(server.url, owner["token"]) as client:
            for r in range(ROUNDS):
                for message_id in ids[agents[n]]:
                    client.put_message(agents[n], message(message_id, n, r))

    def reader() -> None:
        with Client(server.url, owner["token"]) as client:
            while not done.is_set():
                for agent in agents:
                    for msg in client.messages(agent, limit=3)["messages"]:
                        if len(stamps(msg)) != 1:
                            problems.append(f"torn: {stamps(msg)}")

    def guarded(work: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            try:
                work()
            except Exception as exc:
                problems.append(repr(exc))
        return run

    readers = [threading.Thread(target=guarded(reader)) for _ in range(READERS)]
    writers = [threading.Thread(target=guarded(lambda n=n: writer(n))) for n in range(WRITERS)]
    for t in readers + writers:
        t.start()
    for t in writers:
        t.join()
    done.set()
    for t in readers:
        t.join()
    with Client(server.url, owner["token"]) as client:
        for n, agent in enumerate(agents):
            page = client.messages(agent)
            assert [m["id"] for m in page["messages"]] == ids[agent]
            assert all(stamps(m) == {f"w{n}r{ROUNDS - 1}"} for m in page["messages"])
            assert page["seq"] == ROUNDS * MESSAGES
    assert problems == []


def test_writers_racing_on_one_agent_each_take_their_own_seq(server: ServerThread, transcripts: Transcripts) -> None:
    """Writers racing on one conversation: every write gets its own seq, every message its own place."""
    owner = transcripts.create_account("owner")
    space = transcripts.create_workspace("w", [owner["id"]])
    agent = transcripts.create_agent(owner["id"], space["id"])["id"]
    results: list[tuple[str, int]] = []
    problems: list[str] = []
    start = threading.Barrier(WRITERS)

    def writer(n: int) -> None:
        try:
            with Client(server.url, owner["token"]) as client:
                start.wait()
                for _ in range(MESSAGES * ROUNDS):
                    written = client.put_message(agent, message(new_id(), n, 0))
                    results.append((written["id"], written["seq"]))
        except Exception as exc:
            problems.append(repr(exc))

    writers = [threading.Thread(target=writer, args=(n,)) for n in range(WRITERS)]
    for t in writers:
        t.start()
    for t in writers:
        t.join()
    assert problems == []
    total = WRITERS * MESSAGES * ROUNDS
    assert sorted(seq for _, seq in results) == list(range(1, total + 1))
    with Client(server.url, owner["token"]) as client:
        page = client.messages(agent)
    assert [m["id"] for m in page["messages"]] == [mid for mid, _ in sorted(results, key=lambda r: r[1])]
    assert page["seq"] == total
