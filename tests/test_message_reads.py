"""Messages are read by id under the conversation and its owner, never by message id alone."""

from __future__ import annotations

import re

import pytest
from conftest import World
from core_helpers import add_member, assistant, bash, put, text, user

from foldline import NotFound
from foldline.service import Transcripts
from foldline.store import Store


def test_a_message_id_reused_in_two_conversations_stays_apart(world: World) -> None:
    other = world.alice.create_agent(world.workspace, title="other")["id"]
    first = put(world.alice, world.agent, user("first conversation"))
    second = put(world.alice, other, {**user("second conversation"), "id": first["id"]})
    assert world.alice.messages(world.agent)["messages"] == [first]
    assert world.alice.messages(other)["messages"] == [second]
    assert world.alice.part(world.agent, str(first["id"]), 0) == text("first conversation")
    assert world.alice.part(other, str(first["id"]), 0) == text("second conversation")


def test_a_part_is_not_read_through_another_conversation(world: World) -> None:
    other = world.alice.create_agent(world.workspace)["id"]
    message = put(world.alice, world.agent, assistant([bash("secret output")]))
    with pytest.raises(NotFound):
        world.alice.part(other, str(message["id"]), 0)


def test_a_part_is_not_read_through_another_accounts_agent(world: World, transcripts: Transcripts) -> None:
    message = put(world.alice, world.agent, assistant([bash("secret output")]))
    bob_space = transcripts.create_workspace("bob's", [world.bob_id])
    bob_agent = world.bob.create_agent(bob_space["id"])["id"]
    with pytest.raises(NotFound):
        world.bob.part(bob_agent, str(message["id"]), 0)
    assert world.bob.messages(bob_agent)["messages"] == []


def test_a_members_agent_does_not_expose_the_owners_other_messages(world: World, transcripts: Transcripts) -> None:
    carol = add_member(transcripts, world.workspace, "carol")
    message = put(world.alice, world.agent, assistant([bash("alice's output")]))
    with world.client(carol["token"]) as client:
        carols = client.create_agent(world.workspace)["id"]
        with pytest.raises(NotFound):
            client.part(carols, str(message["id"]), 0)
        assert client.messages(carols)["messages"] == []


def test_the_store_reads_a_message_only_under_its_conversation(
    world: World, transcripts: Transcripts, store: Store
) -> None:
    other = world.alice.create_agent(world.workspace)["id"]
    message = put(world.alice, world.agent, user("hello"))
    mine = transcripts.conversation(world.alice_id, world.agent)
    theirs = transcripts.conversation(world.alice_id, other)
    row = store.message(mine, str(message["id"]))
    assert row is not None and row.id == message["id"]
    assert store.message(theirs, str(message["id"])) is None


def test_a_cut_read_says_when_each_message_was_first_stored_and_a_whole_read_adds_nothing(world: World) -> None:
    first = put(world.alice, world.agent, user("first"))
    cut = world.alice.messages(world.agent, cut=True)["messages"][0]
    stamp = cut["createdAt"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", stamp)
    world.alice.put_message(world.agent, {**first, "parts": [{"type": "text", "text": "again"}]})
    assert world.alice.messages(world.agent, cut=True)["messages"][0]["createdAt"] == stamp
    assert "createdAt" not in world.alice.messages(world.agent)["messages"][0]  # the message as written
