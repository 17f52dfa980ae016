"""Subagents: the same routes under `/subagents/{call}`, a conversation of its own."""

from __future__ import annotations

import pytest
from conftest import World
from core_helpers import BIG_OUTPUT, assistant, bash, put, user

from foldline import NotFound

TURN_ENDED = "the turn ended before this tool returned; its outcome is unknown"


def test_a_subagent_is_written_read_cut_and_fetched(world: World) -> None:
    parent = put(world.alice, world.agent, user("start a worker"))
    sub = put(world.alice, world.agent, assistant([bash(BIG_OUTPUT)]), call="toolu_01")
    assert world.alice.messages(world.agent)["messages"] == [parent]
    assert world.alice.messages(world.agent, call="toolu_01")["messages"] == [sub]
    cut = world.alice.messages(world.agent, call="toolu_01", cut=True)["messages"][0]
    assert cut["cutParts"][0]["bytes"] == len(BIG_OUTPUT)
    assert world.alice.part(world.agent, str(sub["id"]), 0, call="toolu_01")["output"] == BIG_OUTPUT
    with pytest.raises(NotFound):
        world.alice.part(world.agent, str(sub["id"]), 0)
    assert world.alice.agent(world.agent)["subagents"] == ["toolu_01"]


def test_a_subagents_turn_ends_on_its_own(world: World) -> None:
    open_tool = {"type": "tool-bash", "toolCallId": "c", "state": "input-available", "input": {"command": "x"}}
    put(world.alice, world.agent, assistant([dict(open_tool)]))
    put(world.alice, world.agent, assistant([dict(open_tool)]), call="w1")
    assert world.alice.end_turn(world.agent, call="w1")["ended"] == [0]
    assert world.alice.messages(world.agent, call="w1")["messages"][0]["parts"][0]["errorText"] == TURN_ENDED
    assert world.alice.messages(world.agent)["messages"][0]["parts"][0]["state"] == "input-available"


def test_an_unknown_subagent_is_not_found_and_others_see_none(world: World) -> None:
    sub = put(world.alice, world.agent, user("hidden"), call="w2")
    with pytest.raises(NotFound):
        world.alice.messages(world.agent, call="w3")
    with pytest.raises(NotFound):
        world.bob.messages(world.agent, call="w2")
    with pytest.raises(NotFound):
        world.bob.part(world.agent, str(sub["id"]), 0, call="w2")


def test_call_ids_keep_their_odd_characters(world: World) -> None:
    call = "call:ü 1?x#y%z"
    message = put(world.alice, world.agent, user("odd"), call=call)
    assert world.alice.messages(world.agent, call=call)["messages"] == [message]
    assert world.alice.agent(world.agent)["subagents"] == [call]
