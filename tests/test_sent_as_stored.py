"""A page sent from its stored JSON text is the page the read's checks would build, byte for byte;
a remembered token is forgotten at once when asked."""

from __future__ import annotations

from dataclasses import replace

import httpx
import orjson
import pytest
from conftest import IN_PROCESS_URL, World
from core_helpers import BIG_OUTPUT, LONG_THOUGHT, assistant, bash, put, text, thought, tool, user
from servers import InProcess
from sqlalchemy import delete
from test_stored_rows import registry_with

from foldline import Unauthorized
from foldline.app import create_app
from foldline.service import Transcripts, hash_token
from foldline.settings import Settings
from foldline.store import Store
from foldline.store.schema import tokens


def fill(world: World) -> None:
    put(world.alice, world.agent, user("build it ✓ — ünïcode"))
    put(world.alice, world.agent, assistant([thought(LONG_THOUGHT), bash(BIG_OUTPUT[:50_000]), text("done")]))
    put(world.alice, world.agent, {**assistant([tool("read_agent", {"n": 1.5, "big": 2**62}, input={})]),
                                   "metadata": {"anything": [1, "two"]}, "unknownKey": {"kept": True}})
    put(world.alice, world.agent, assistant([]))


@pytest.mark.parametrize("cut", [True, False])
def test_a_stamped_page_is_the_page_the_checks_build(
    world: World, transcripts: Transcripts, store: Store, cut: bool
) -> None:
    fill(world)
    checking = Transcripts(store, settings=transcripts.settings)
    checking.read_stamp = "no stamp matches this"  # every message takes the decode-and-check path
    for limit in (None, 2):
        sent = transcripts.page_json(world.alice_id, world.agent, cut=cut, limit=limit)
        assert sent == checking.page_json(world.alice_id, world.agent, cut=cut, limit=limit)
        assert sent == orjson.dumps(orjson.loads(sent))  # one compact JSON text, as orjson writes it


def test_the_short_way_in_answers_as_the_route_does(world: World) -> None:
    fill(world)
    headers = {"Authorization": f"Bearer {world.alice_token}"}
    url = f"/api/agents/{world.agent}/messages"
    world.http.get(url, headers=headers)  # the token is now remembered: the next reads take the short way
    for params in ({"parts": "cut", "limit": "2"}, {"parts": "whole"}, {}, {"limit": "1", "before": "3"}):
        short = world.http.get(url, params=params, headers=headers)
        route = world.http.get(url, params={**params, "unknown": "1"}, headers=headers)  # not the short way
        assert (short.status_code, short.content) == (route.status_code, route.content)
        assert short.headers["content-type"] == route.headers["content-type"] == "application/json"


def test_a_remembered_token_is_forgotten_at_once(world: World, store: Store, transcripts: Transcripts) -> None:
    assert transcripts.authenticate(world.bob_token) == world.bob_id
    with store.write() as conn:  # as a revocation would
        conn.execute(delete(tokens).where(tokens.c.hash == hash_token(world.bob_token)))
    assert transcripts.authenticate(world.bob_token) == world.bob_id  # remembered for a few seconds
    transcripts.forget_tokens()
    with pytest.raises(Unauthorized):
        transcripts.authenticate(world.bob_token)
    assert transcripts.cached_account(world.bob_token) is None


def test_a_retired_tools_part_in_a_stamped_message_is_skipped(
    world: World, store: Store, transcripts: Transcripts
) -> None:
    message = put(world.alice, world.agent, assistant([text("a"), bash("x" * 9000), text("b")]))
    retired = Transcripts(store, registry=registry_with(bash={"retired": True}), settings=transcripts.settings)
    assert retired.read_stamp == transcripts.read_stamp  # the stamp holds: the tool column decides
    read = retired.messages(world.alice_id, world.agent, cut=True)["messages"][0]
    assert read["id"] == message["id"] and read["skippedParts"] == [1] and "cutParts" not in read


def test_a_body_past_the_gzip_bound_is_sent_as_it_is(world: World, store: Store, settings: Settings) -> None:
    fill(world)
    url = f"{IN_PROCESS_URL}/api/agents/{world.agent}/messages"
    headers = {"Authorization": f"Bearer {world.alice_token}", "Accept-Encoding": "gzip"}
    compressed = world.http.get(url, headers=headers)
    assert compressed.headers["content-encoding"] == "gzip"
    bounded = InProcess(create_app(Transcripts(store, settings=replace(settings, gzip_max=2_000))))
    try:
        with httpx.Client(transport=bounded) as http:
            plain = http.get(url, headers=headers)
    finally:
        bounded.stop()
    assert "content-encoding" not in plain.headers and plain.headers["vary"] == "Accept-Encoding"
    assert int(plain.headers["content-length"]) > 2_000
    assert plain.json() == compressed.json()


def test_a_whole_part_is_sent_as_stored_and_gives_its_slot_back(world: World) -> None:
    output = "é line of output\n" * 100_000
    message = put(world.alice, world.agent, assistant([bash(output)]))
    headers = {"Authorization": f"Bearer {world.alice_token}", "Accept-Encoding": "identity"}
    url = f"{world.url}/api/agents/{world.agent}/messages/{message['id']}/parts/0"
    for _ in range(6):  # past the 4 whole reads an account may have at once: each gave its slot back
        with httpx.stream("GET", url, headers=headers) as response:
            assert response.status_code == 200
            assert int(response.headers["content-length"]) == len(orjson.dumps(message["parts"][0]))
            assert orjson.loads(response.read()) == message["parts"][0]
    with httpx.stream("GET", url, headers=headers) as response:  # dropped after its first bytes
        next(response.iter_raw())
    assert world.alice.part(world.agent, message["id"], 0) == message["parts"][0]
