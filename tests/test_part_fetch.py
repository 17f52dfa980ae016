"""The part fetch: a member gets the whole part; everyone else, and every bad address, the one not-found."""

from __future__ import annotations

import gc
import time

import httpx
import pytest
from conftest import World
from core_helpers import BIG_OUTPUT, LONG_THOUGHT, add_member, assistant, bash, new_id, put, thought

from foldline import NotFound
from foldline.service import Transcripts
from foldline.settings import Settings
from foldline.store import open_store


def written(world: World) -> dict[str, object]:
    return put(world.alice, world.agent, assistant([thought(LONG_THOUGHT), bash(BIG_OUTPUT)]))


def test_the_owner_fetches_the_whole_part(world: World) -> None:
    message = written(world)
    assert world.alice.part(world.agent, str(message["id"]), 1) == message["parts"][1]  # type: ignore[index]
    assert world.alice.part(world.agent, str(message["id"]), 0)["text"] == LONG_THOUGHT


def test_a_member_added_to_the_workspace_fetches_the_whole_part(world: World, transcripts: Transcripts) -> None:
    message = written(world)
    carol = add_member(transcripts, world.workspace, "carol")
    with world.client(carol["token"]) as client:
        part = client.part(world.agent, str(message["id"]), 1)
    assert part["output"] == BIG_OUTPUT


@pytest.mark.parametrize("index", ["2", "99", "999999999", "1x", "-1", "one", "²", "١", "0" * 40])
def test_a_bad_index_is_the_one_not_found(world: World, index: str) -> None:
    message = written(world)
    response = fetch(world, world.alice_token, world.agent, str(message["id"]), index)
    assert_not_found(response)


@pytest.mark.parametrize("message", ["not-a-uuid", "1", "' or 1=1 --", "%00", "g" * 36])
def test_a_message_id_that_is_not_a_uuid_is_the_one_not_found(world: World, message: str) -> None:
    written(world)
    assert_not_found(fetch(world, world.alice_token, world.agent, message, "0"))


def test_another_account_gets_the_one_not_found(world: World) -> None:
    message = written(world)
    with pytest.raises(NotFound):
        world.bob.part(world.agent, str(message["id"]), 1)
    assert_not_found(fetch(world, world.bob_token, world.agent, str(message["id"]), "1"))
    assert_not_found(fetch(world, world.bob_token, world.agent, str(message["id"]), "7"))
    assert_not_found(fetch(world, world.bob_token, world.agent, "x", "0"))


def test_an_unknown_message_is_the_one_not_found(world: World) -> None:
    written(world)
    assert_not_found(fetch(world, world.alice_token, world.agent, new_id(), "0"))


def fetch(world: World, token: str, agent: str, message: str, index: str) -> httpx.Response:
    url = f"/api/agents/{agent}/messages/{message}/parts/{index}"
    return world.http.get(url, headers={"Authorization": f"Bearer {token}"})


def assert_not_found(response: httpx.Response) -> None:
    assert response.status_code == 404
    assert response.json() == {"error": {"code": "not_found", "message": "not found"}}


def test_a_whole_read_dropped_half_way_leaves_the_service_working(world: World) -> None:
    # The reader goes after the first bytes of a big part: what the read held is given back,
    # and writes and reads go on (a connection left mid-answer once held a later write for ever).
    big = "a line of output that a build printed, again and again\n" * 60_000  # 3.3 MB
    message = put(world.alice, world.agent, assistant([bash(big)]))
    url = f"{world.url}/api/agents/{world.agent}/messages/{message['id']}/parts/0"
    for _ in range(6):  # more than the four whole reads an account may hold at once
        deadline = time.monotonic() + 20  # a dropped read's slot comes back once the server sees it gone
        while True:
            with httpx.stream("GET", url, headers={"Authorization": f"Bearer {world.alice_token}"}) as response:
                if response.status_code == 429 and time.monotonic() < deadline:
                    time.sleep(0.1)
                    continue
                assert response.status_code == 200
                next(response.iter_raw())
                break
    gc.collect()
    after = put(world.alice, world.agent, assistant([bash("still writing\n")]))
    assert world.alice.part(world.agent, str(after["id"]), 0)["output"] == "still writing\n"
    assert world.alice.part(world.agent, str(message["id"]), 0)["output"] == big


def test_a_whole_read_holds_no_connection_while_it_is_sent(db_url: str) -> None:
    """Once the answer began, the read holds no pooled connection (nor a snapshot) while it
    waits on its client: SQLite reads each chunk in a short read of its own, PostgreSQL reads
    the part into a spool first (issue 20); a reader gone early leaves nothing behind."""
    with Transcripts(open_store(db_url), settings=Settings(db=db_url)) as own:  # a pool of its own
        alice = own.create_account("alice")
        workspace = own.create_workspace("team", [alice["id"]])
        agent = own.create_agent(alice["id"], workspace["id"], "an agent")["id"]
        message = assistant([bash(BIG_OUTPUT)])
        own.put_message(alice["id"], agent, str(message["id"]), message)
        pool = own._store.engine.pool
        lent = pool.checkedout()  # type: ignore[attr-defined]
        size, chunks = own.part_stream(alice["id"], agent, str(message["id"]), "0")
        assert size > len(BIG_OUTPUT) and pool.checkedout() == lent  # type: ignore[attr-defined]
        assert len(next(chunks)) > 0 and pool.checkedout() == lent  # type: ignore[attr-defined]
        chunks.close()  # type: ignore[attr-defined]
        assert pool.checkedout() == lent  # type: ignore[attr-defined]
