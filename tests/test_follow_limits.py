"""Live follow under load: a long catch-up comes in batches, idle streams cost one query per poll
for the whole process, and a follower who loses access stops receiving."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import replace

import httpx
import orjson
import pytest
from conftest import World
from core_helpers import add_member, put, user
from servers import ServerThread
from test_query_count import counted
from waits import eventually

from foldline.service import Transcripts
from foldline.store import Store


def stream_lines(world: World, token: str, path: str, **params: str) -> Iterator[str]:
    headers = {"Authorization": f"Bearer {token}"}
    with httpx.stream("GET", f"{world.url}{path}", params=params, headers=headers, timeout=30) as response:
        assert response.status_code == 200
        yield from response.iter_lines()


def test_a_long_catch_up_arrives_whole_and_in_order(world: World, transcripts: Transcripts) -> None:
    for n in range(450):  # more than two batches
        message = user(f"m{n}")
        transcripts.put_message(world.alice_id, world.agent, message["id"], message)
    seqs, texts = [], []
    for line in stream_lines(world, world.alice_token, f"/api/agents/{world.agent}/events", since="0"):
        if line.startswith("id: "):
            seqs.append(int(line[4:]))
        elif line.startswith("data: "):
            texts.append(orjson.loads(line[6:])["parts"][0]["text"])
            if len(texts) == 450:
                break
    assert texts == [f"m{n}" for n in range(450)] and seqs == sorted(seqs) and len(set(seqs)) == 450


def test_a_member_taken_out_of_the_workspace_stops_receiving(world: World, transcripts: Transcripts) -> None:
    bob = add_member(transcripts, world.workspace, "bob")
    received: list[str] = []
    ended = threading.Event()

    def follow() -> None:
        for line in stream_lines(world, bob["token"], f"/api/agents/{world.agent}/events"):
            if line.startswith("data: "):
                received.append(line)
        ended.set()

    follower = threading.Thread(target=follow, daemon=True)
    follower.start()
    put(world.alice, world.agent, user("bob may read this"))
    eventually(lambda: bool(received), 20, "bob never received the message")
    transcripts.remove_member(world.workspace, bob["id"])
    assert ended.wait(20), "the stream of a removed member must end"
    put(world.alice, world.agent, user("bob may not read this"))
    assert len(received) == 1 and "bob may read this" in received[0]


def test_idle_streams_cost_one_look_per_poll_for_the_whole_process(
    world: World, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """20 idle followers, five polls: a handful of statements, not one per stream per poll."""
    looks: list[int] = []  # the hub's looks at the followed conversations' write counters
    look = store.seqs
    monkeypatch.setattr(store, "seqs", lambda ids: looks.append(len(ids)) or look(ids))
    opened = threading.Barrier(21, timeout=30)
    stop = threading.Event()

    def follow() -> None:
        for line in stream_lines(world, world.alice_token, f"/api/agents/{world.agent}/events"):
            if line.startswith("retry:"):
                opened.wait()
            if stop.is_set():
                return

    followers = [threading.Thread(target=follow, daemon=True) for _ in range(20)]
    for f in followers:
        f.start()
    opened.wait()
    # the hub's first look at a newly followed conversation wakes its streams once; two more find it quiet
    eventually(lambda: len(looks) >= 3, what="the hub did not look at the followed conversation")
    with counted(store) as statements:
        before = len(looks)
        eventually(lambda: len(looks) >= before + 5, what="the hub stopped polling")
    stop.set()
    put(world.alice, world.agent, user("wake up and leave"))
    for f in followers:
        f.join(20)
    assert len(statements) <= 40, statements  # a poll per stream would make 200 (BEGIN and SELECT)


def test_an_account_past_its_stream_cap_is_refused_and_gets_its_slots_back(
    world: World, transcripts: Transcripts, store: Store
) -> None:
    capped = Transcripts(store, settings=replace(transcripts.settings, max_streams=2))  # a server of its own
    with ServerThread(capped) as server:
        path = f"{server.url}/api/agents/{world.agent}/events"
        headers = {"Authorization": f"Bearer {world.alice_token}"}
        with httpx.stream("GET", path, headers=headers, timeout=20) as one, httpx.stream(
            "GET", path, headers=headers, timeout=20
        ) as two:
            first, second = one.iter_lines(), two.iter_lines()  # kept: a dropped iterator closes its stream
            assert next(first).startswith("retry:") and next(second).startswith("retry:")
            third = httpx.get(path, headers=headers, timeout=20)
            assert third.status_code == 429 and third.json()["error"]["code"] == "too_many_requests"
            other = httpx.get(path, headers={"Authorization": f"Bearer {world.bob_token}"}, timeout=20)
            assert other.status_code == 404  # the cap is per account; bob is simply not a member
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:  # both closed: their slots come back
            with httpx.stream("GET", path, headers=headers, timeout=20) as again:
                if again.status_code == 200:
                    break
            time.sleep(0.2)
        assert again.status_code == 200


def test_simultaneous_opens_never_pass_the_stream_cap(world: World, transcripts: Transcripts, store: Store) -> None:
    """The slot is taken when a stream is admitted, atomically: 40 opens at once with a cap of 3
    give 3 streams and 37 refusals (checking first and taking later let many more through)."""
    capped = Transcripts(store, settings=replace(transcripts.settings, max_streams=3))
    with ServerThread(capped) as server:
        path = f"{server.url}/api/agents/{world.agent}/events"
        headers = {"Authorization": f"Bearer {world.alice_token}"}
        statuses: list[int] = []
        opened = threading.Barrier(40)
        done = threading.Event()

        def open_one() -> None:
            opened.wait(10)
            with httpx.stream("GET", path, headers=headers, timeout=20) as response:
                statuses.append(response.status_code)
                if response.status_code == 200:
                    done.wait(20)  # held open until every open has been answered

        threads = [threading.Thread(target=open_one) for _ in range(40)]
        for thread in threads:
            thread.start()
        eventually(lambda: len(statuses) == 40, 20, "every open was answered")
        done.set()
        for thread in threads:
            thread.join(20)
        assert sorted(statuses) == [200] * 3 + [429] * 37
