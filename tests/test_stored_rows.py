"""The read runs only the cheap checks: today's schema does not hide old rows; broken rows never fail a read."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from conftest import World
from core_helpers import assistant, bash, new_id, put, text, tool

from foldline import Invalid, NotFound
from foldline.registry import Registry
from foldline.service import Transcripts
from foldline.store import Store, StoredPart


def registry_with(**changes: dict[str, Any]) -> Registry:
    """The default registry with some tools' specs changed."""
    base = Registry.load()
    data: dict[str, Any] = {
        "tools": {name: {"text": t.text, "retired": t.retired, "input": t.input, "output": t.output}
                  for name, t in base.tools.items()},
        "dynamic_text_prefixes": list(base.dynamic_text_prefixes),
        "metadata": base.metadata,
    }
    for name, spec in changes.items():
        data["tools"][name].update(spec)
    return Registry.from_dict(data)


def test_an_output_todays_schema_refuses_is_still_read(world: World, store: Store, transcripts: Transcripts) -> None:
    message = put(world.alice, world.agent, assistant([bash({"exit": 0, "stdout": "ok"})]))
    stricter = Transcripts(store, registry=registry_with(bash={"output": {"type": "string"}}),
                           settings=transcripts.settings)
    for cut in (True, False):
        read = stricter.messages(world.alice_id, world.agent, cut=cut)["messages"]
        assert read[0]["parts"] == message["parts"]
    again = {**message, "id": new_id()}
    with pytest.raises(Invalid) as refused:
        stricter.put_message(world.alice_id, world.agent, again["id"], again)
    assert refused.value.where == "parts[0].output"


def test_retired_tools_parts_are_dropped_on_read(world: World, store: Store, transcripts: Transcripts) -> None:
    message = put(world.alice, world.agent, assistant([text("before"), bash("x" * 9000), text("after")]))
    retired = Transcripts(store, registry=registry_with(bash={"retired": True}), settings=transcripts.settings)
    for cut in (True, False):
        read = retired.messages(world.alice_id, world.agent, cut=cut)["messages"][0]
        assert [p["text"] for p in read["parts"]] == ["before", "after"]
        assert read["skippedParts"] == [1]
        assert "cutParts" not in read
    with pytest.raises(NotFound):
        retired.part(world.alice_id, world.agent, str(message["id"]), "1")


def write_raw(transcripts: Transcripts, store: Store, world: World, bodies: list[str]) -> str:
    """Store a message straight through the store, bypassing the write door."""
    conv = transcripts.conversation(world.alice_id, world.agent)
    message_id = new_id()
    head = orjson.dumps({"id": message_id, "role": "assistant"}).decode()
    store.put_message(conv, message_id, "assistant", head, [StoredPart(i, None, body) for i, body in enumerate(bodies)])
    return message_id


BROKEN = [
    '{"type": "text"}',  # text without its text
    '{"type": "tool-bash", "toolCallId": "c", "state": "output-available", "input": {}}',  # no output
    '{"type": "tool-bash", "toolCallId": "c", "state": "exploded", "input": {}}',
    '{"type": "no-such-part"}',
    '["a", "list"]',
    '"just a string"',
    "null",
]


def test_a_structurally_broken_row_is_dropped_without_failing_the_read(
    world: World, transcripts: Transcripts, store: Store
) -> None:
    message_id = write_raw(transcripts, store, world, ['{"type": "text", "text": "fine"}', *BROKEN])
    for cut in (True, False):
        read = world.alice.messages(world.agent, cut=cut)["messages"][0]
        assert read["id"] == message_id
        assert read["parts"] == [{"type": "text", "text": "fine"}]
        assert read["skippedParts"] == list(range(1, len(BROKEN) + 1))
    with pytest.raises(NotFound):
        world.alice.part(world.agent, message_id, 1)


def test_a_row_that_is_not_json_is_dropped_without_failing_the_read(
    world: World, transcripts: Transcripts, store: Store
) -> None:
    message_id = write_raw(transcripts, store, world, ['{"type": "text", "text": "fine"}', '{"type": "te'])
    read = world.alice.messages(world.agent, cut=True)["messages"][0]
    assert read["id"] == message_id and read["skippedParts"] == [1]
    with pytest.raises(NotFound):
        world.alice.part(world.agent, message_id, 1)


def test_a_dynamic_tool_unknown_to_the_registry_is_read(world: World) -> None:
    part = {"type": "dynamic-tool", "toolName": "brand_new", "toolCallId": "c", "state": "output-available",
            "input": {"a": 1}, "output": [1, 2]}
    put(world.alice, world.agent, assistant([part, tool("read_agent", "ok", input={})]))
    assert world.alice.messages(world.agent, cut=True)["messages"][0]["parts"][0] == part
