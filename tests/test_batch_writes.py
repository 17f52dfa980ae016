"""Many messages of one conversation through the write door at once (``Transcripts.put_messages``,
what the importers write with): the same result as writing them one by one, or nothing at all."""

from __future__ import annotations

import math

import pytest
from conftest import World
from core_helpers import assistant, bash, new_id, text, user

from foldline.errors import Invalid
from foldline.service import Transcripts


def test_a_batch_is_stored_as_its_writes_one_by_one(world: World, transcripts: Transcripts) -> None:
    first, second = user("build the batch", new_id()), assistant([text("on it"), bash("batch ok")], new_id())
    again = assistant([text("done, the batch is green")], second["id"])  # the same message, replaced
    done = transcripts.put_messages(world.alice_id, world.agent, [(m["id"], m) for m in (first, second, again)])
    assert [(d["seq"], d["created"]) for d in done] == [(1, True), (2, True), (3, False)]
    page = world.alice.messages(world.agent)
    assert [(m["id"], m["parts"]) for m in page["messages"]] == [
        (first["id"], first["parts"]), (second["id"], again["parts"])
    ]  # the replaced message keeps its place
    assert page["seq"] == 3 and world.alice.agent(world.agent)["messages"] == 2
    found = transcripts.search(world.alice_id, "batch", agent=world.agent, seconds=math.inf)["hits"]
    assert sorted(h["message_id"] for h in found) == sorted([first["id"], second["id"]])
    assert not any("ok" in h["snippet"]["text"] for h in found)  # the replaced part's text is gone


def test_a_batch_with_one_refused_message_stores_nothing(world: World, transcripts: Transcripts) -> None:
    good = user("fine on its own", new_id())
    bad = {"id": new_id(), "role": "assistant", "parts": [{"type": "text", "text": ["not a string"]}]}
    with pytest.raises(Invalid) as refused:
        transcripts.put_messages(world.alice_id, world.agent, [(good["id"], good), (bad["id"], bad)])
    assert refused.value.where == "parts[0].text"
    assert world.alice.messages(world.agent)["messages"] == []
    assert transcripts.search(world.alice_id, "fine on its own", agent=world.agent, seconds=math.inf)["hits"] == []
