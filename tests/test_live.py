"""Live follow across servers: a write through one `foldline serve` reaches a follower on another."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator

import httpx
import orjson
import pytest
from conftest import World
from servers import ServerThread

from foldline.settings import Settings
from foldline.store import Store
from foldline.transcripts import Transcripts


@pytest.fixture
def second_server(store: Store, settings: Settings) -> Iterator[ServerThread]:
    """Another server process's view: its own app, hub and connections, the same database.

    It polls only every 30 s, so only a cross-process notice wakes it in time: PostgreSQL's
    NOTIFY, or on SQLite the operating system's word that the write-ahead log changed.
    """
    other = Transcripts(type(store)(store.url), settings=Settings(db=settings.db, poll_seconds=30.0))
    with ServerThread(other) as running:
        yield running
    other.close()


def read_frames(url: str, token: str, path: str, since: int, opened: threading.Event,
                found: list[dict[str, object]]) -> None:
    headers = {"Authorization": f"Bearer {token}"}
    with httpx.stream("GET", f"{url}{path}?since={since}", headers=headers, timeout=40) as response:
        frame: dict[str, object] = {}
        for line in response.iter_lines():
            if line.startswith("retry: "):
                opened.set()
            elif line.startswith("id: "):
                frame["id"] = int(line[4:])
            elif line.startswith("data: "):
                frame["data"] = orjson.loads(line[6:])
            elif line == "" and "data" in frame:
                found.append(frame)
                return


def test_a_write_through_one_server_reaches_a_follower_on_another(world: World, second_server: ServerThread) -> None:
    page = world.alice.messages(world.agent, cut=True, limit=10)
    found: list[dict[str, object]] = []
    opened = threading.Event()
    path = f"/api/agents/{world.agent}/events"
    follower = threading.Thread(
        target=read_frames, args=(second_server.url, world.alice_token, path, page["seq"], opened, found)
    )
    follower.start()
    assert opened.wait(20), "the event stream did not open"
    message_id = str(uuid.uuid4())
    big = "line of output\n" * 1000
    world.alice.put_message(world.agent, {"id": message_id, "role": "assistant", "parts": [
        {"type": "tool-bash", "toolCallId": "c1", "state": "output-available", "input": {"command": "make"},
         "output": big},
    ]})
    follower.join(10)  # well before the stream's 15 s heartbeat, which would look again by itself
    assert found, "the follower on the other server saw nothing"
    data = found[0]["data"]
    assert isinstance(data, dict) and data["id"] == message_id
    assert "output" not in data["parts"][0], "events carry the cut form"
    assert data["cutParts"][0]["bytes"] == len(big.encode())
    assert found[0]["id"] == page["seq"] + 1


def test_events_resume_from_last_event_id(world: World) -> None:
    ids = [str(uuid.uuid4()) for _ in range(3)]
    for message_id in ids:
        text = {"type": "text", "text": "hi"}
        world.alice.put_message(world.agent, {"id": message_id, "role": "user", "parts": [text]})
    found: list[dict[str, object]] = []
    headers = {"Authorization": f"Bearer {world.alice_token}", "Last-Event-ID": "1"}
    with httpx.stream("GET", f"{world.url}/api/agents/{world.agent}/events", headers=headers, timeout=20) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        for line in response.iter_lines():
            if line.startswith("data: "):
                found.append(orjson.loads(line[6:]))
                if len(found) == 2:
                    break
    assert [m["id"] for m in found] == ids[1:]


def test_events_of_an_agent_one_cannot_read_are_not_found(world: World) -> None:
    response = httpx.get(f"{world.url}/api/agents/{world.agent}/events",
                         headers={"Authorization": f"Bearer {world.bob_token}"})
    assert response.status_code == 404
    assert response.json() == {"error": {"code": "not_found", "message": "not found"}}
