"""SQLite under concurrent writers and readers: nothing lost, no message torn."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from core_helpers import new_id
from servers import ServerThread

from foldline import Client
from foldline.settings import Settings
from foldline.store import open_store
from foldline.transcripts import Transcripts

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


def test_concurrent_writers_and_readers_lose_and_tear_nothing(tmp_path: Path) -> None:
    db = str(tmp_path / "concurrent.db")
    transcripts = Transcripts(open_store(db), settings=Settings(db=db))
    owner = transcripts.create_account("owner")
    space = transcripts.create_workspace("w", [owner["id"]])
    agents = [transcripts.create_agent(owner["id"], space["id"])["id"] for _ in range(WRITERS)]
    ids = {agent: [new_id() for _ in range(MESSAGES)] for agent in agents}
    problems: list[str] = []
    done = threading.Event()

    with ServerThread(transcripts) as server:

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
    transcripts.close()
    assert problems == []
