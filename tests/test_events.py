"""The event stream on one server: messages written after `since` arrive cut, with their seq as id."""

from __future__ import annotations

import itertools

import httpx
import pytest
from conftest import World
from core_helpers import BIG_OUTPUT, assistant, bash, put, user

from foldline import BadRequest, Client, NotFound
from foldline.client import Message


def live(world: World, token: str) -> Client:
    """A client over a real socket: an event stream never ends, so it cannot run in process."""
    return Client(world.url, token)


def frames(world: World, agent: str, count: int, *, call: str | None = None,
           since: int | None = None) -> list[tuple[int, Message]]:
    """The first ``count`` messages of the agent's (or subagent's) event stream, read as alice."""
    with live(world, world.alice_token) as client, client.events(agent, call=call, since=since) as events:
        return list(itertools.islice(events, count))


def test_messages_after_since_arrive_in_cut_form_with_their_seq(world: World) -> None:
    put(world.alice, world.agent, user("before"))
    since = world.alice.messages(world.agent)["seq"]
    message = put(world.alice, world.agent, assistant([bash(BIG_OUTPUT)]))
    [(seq, data)] = frames(world, world.agent, 1, since=since)
    assert seq == since + 1
    assert data == world.alice.messages(world.agent, cut=True, limit=1)["messages"][0]
    assert data["id"] == message["id"] and "output" not in data["parts"][0]  # type: ignore[index]


def test_a_subagents_events_carry_its_own_messages(world: World) -> None:
    put(world.alice, world.agent, user("parent"))
    sub = put(world.alice, world.agent, user("in the worker"), call="call-7")
    [(seq, data)] = frames(world, world.agent, 1, call="call-7", since=0)
    assert isinstance(data.pop("createdAt"), str)  # an event is a cut read: it says when the message was stored
    assert (seq, data) == (1, sub)


@pytest.mark.parametrize("since", ["x", "-1", "1.5", "²", "9" * 40])
def test_a_bad_since_is_400(world: World, since: str) -> None:
    response = httpx.get(f"{world.url}/api/agents/{world.agent}/events", params={"since": since},
                         headers={"Authorization": f"Bearer {world.alice_token}"})
    assert response.status_code == 400 and response.json()["error"]["where"] == "since"


def test_a_write_after_events_returns_arrives_and_a_rewrite_arrives_again(world: World) -> None:
    since = world.alice.messages(world.agent)["seq"]
    with live(world, world.alice_token) as client, client.events(world.agent, since=since) as events:
        first = put(world.alice, world.agent, user("after the stream opened"))
        seq, got = next(events)
        created = got.pop("createdAt")
        assert (seq, got) == (1, first)
        again = {**first, "parts": [{"type": "text", "text": "written again"}]}
        world.alice.put_message(world.agent, again)
        seq, got = next(events)
        assert got.pop("createdAt") == created  # a rewrite keeps the time the message was first stored
        assert (seq, got) == (2, again)


def test_events_raise_the_documented_errors(world: World) -> None:
    with live(world, world.bob_token) as bob, pytest.raises(NotFound):
        bob.events(world.agent)
    with live(world, world.alice_token) as alice, pytest.raises(BadRequest) as bad:
        alice.events(world.agent, since=-1)
    assert bad.value.where == "since"
