"""What a read decides with today's registry, and rows a read must survive.

The cut is computed at write time for every part with a field over the bound; whether a tool's
part is *sent* cut is the registry's call when the part is read. Attachments sent inline as
``data:`` URLs travel by reference too.
"""

from __future__ import annotations

import base64

import orjson
import pytest
from conftest import World
from core_helpers import assistant, bash, new_id, put, tool, user
from test_stored_rows import registry_with

from foldline import Conflict, Invalid, NotFound
from foldline.service import Transcripts
from foldline.settings import Settings
from foldline.store import StaleWrite, Store, StoredPart

OUTPUT = "a line of output\n" * 600  # 10 200 characters


def last(t: Transcripts, world: World, cut: bool = True) -> dict[str, object]:
    message: dict[str, object] = t.messages(world.alice_id, world.agent, cut=cut)["messages"][-1]
    return message


def test_a_tool_unmarked_as_text_is_sent_whole_from_then_on(world: World, store: Store, settings: Settings) -> None:
    put(world.alice, world.agent, assistant([bash(OUTPUT)]))
    today = Transcripts(store, settings=settings)
    assert "cutParts" in last(today, world)
    tomorrow = Transcripts(store, registry_with(bash={"text": False}), settings)
    message = last(tomorrow, world)
    assert "cutParts" not in message
    assert message["parts"] == [bash(OUTPUT) | {"toolCallId": message["parts"][0]["toolCallId"]}]  # type: ignore[index]


def test_a_tool_marked_as_text_later_cuts_its_older_parts(world: World, store: Store, settings: Settings) -> None:
    part = tool("Edit", OUTPUT, input={"file_path": "a.py"})
    put(world.alice, world.agent, assistant([part]))
    assert "cutParts" not in last(Transcripts(store, settings=settings), world)
    marked = Transcripts(store, registry_with(Edit={"text": True}), settings)
    message = last(marked, world)
    assert message["cutParts"] == [
        {"index": 0, "field": "output", "bytes": len(OUTPUT), "head": OUTPUT[:2048], "tail": OUTPUT[-2048:]}
    ]
    assert "output" not in message["parts"][0]  # type: ignore[index]


def png_data_url(size: int) -> str:
    return "data:image/png;base64," + base64.b64encode(b"\x89PNG" + bytes(size)).decode()


def test_an_inline_attachment_travels_by_reference(world: World) -> None:
    url = png_data_url(300_000)
    message = {"id": new_id(), "role": "user", "parts": [
        {"type": "text", "text": "see the screenshot"},
        {"type": "file", "mediaType": "image/png", "filename": "shot.png", "url": url},
    ]}
    put(world.alice, world.agent, message)
    page = world.alice.messages(world.agent, cut=True, limit=5)
    sent = page["messages"][-1]
    assert sent["parts"][1] == {"type": "file", "mediaType": "image/png", "filename": "shot.png"}
    ref = {"index": 1, "field": "url", "bytes": len(url), "head": url[:2048], "tail": url[-2048:]}
    assert sent["cutParts"] == [ref]
    assert len(orjson.dumps(page)) < 20_000
    assert world.alice.part(world.agent, message["id"], 1)["url"] == url
    assert world.alice.messages(world.agent)["messages"][-1]["parts"][1]["url"] == url


def test_a_small_or_linked_attachment_is_sent_whole(world: World) -> None:
    small = png_data_url(100)
    linked = "https://example.com/" + "x" * 5000
    put(world.alice, world.agent, {"id": new_id(), "role": "user", "parts": [
        {"type": "file", "mediaType": "image/png", "url": small},
        {"type": "file", "mediaType": "image/png", "url": linked},
    ]})
    sent = world.alice.messages(world.agent, cut=True)["messages"][-1]
    assert [p["url"] for p in sent["parts"]] == [small, linked]
    assert "cutParts" not in sent


def write_raw(t: Transcripts, store: Store, world: World, head: dict[str, object], stored: list[StoredPart]) -> str:
    conv = t.conversation(world.alice_id, world.agent)
    message_id = new_id()
    store.put_message(conv, message_id, "assistant", orjson.dumps({"id": message_id, **head}).decode(), stored)
    return message_id


def test_a_damaged_cut_reference_is_skipped_not_a_500(
    world: World, transcripts: Transcripts, store: Store
) -> None:
    body = orjson.dumps(bash("x")).decode()
    write_raw(transcripts, store, world, {"role": "assistant"}, [StoredPart(0, "bash", body, body, '{"index": 0}')])
    message = last(transcripts, world)
    assert message["parts"] == [] and message["skippedParts"] == [0]


def test_a_head_with_a_strange_role_is_read_not_a_500(
    world: World, transcripts: Transcripts, store: Store
) -> None:
    body = orjson.dumps({"type": "text", "text": "hi"}).decode()
    write_raw(transcripts, store, world, {"role": ["assistant"], "metadata": {"a": 1}}, [StoredPart(0, None, body)])
    assert last(transcripts, world)["parts"] == [{"type": "text", "text": "hi"}]


def test_a_stale_compare_and_set_write_changes_nothing(
    world: World, transcripts: Transcripts, store: Store
) -> None:
    message = put(world.alice, world.agent, assistant([bash("first")]))
    conv = transcripts.conversation(world.alice_id, world.agent)
    stale = store.message(conv, message["id"])
    assert stale is not None
    put(world.alice, world.agent, assistant([bash("second")], message["id"]))
    head = orjson.dumps({"id": message["id"], "role": "assistant"}).decode()
    with pytest.raises(StaleWrite):
        store.put_message(conv, message["id"], "assistant", head, [], expect_seq=stale.seq)
    assert last(transcripts, world, cut=False)["parts"][0]["output"] == "second"  # type: ignore[index]


def test_a_refused_write_to_a_new_subagent_creates_nothing(world: World) -> None:
    with pytest.raises(Invalid):
        world.alice.put_message(world.agent, {"id": new_id(), "role": "bogus", "parts": []}, call="new-call")
    assert world.alice.agent(world.agent)["subagents"] == []
    with pytest.raises(NotFound):
        world.alice.messages(world.agent, call="new-call")


def test_ending_the_turn_of_an_unknown_subagent_is_not_found(world: World) -> None:
    with pytest.raises(NotFound):
        world.alice.end_turn(world.agent, call="typo-call")
    assert world.alice.agent(world.agent)["subagents"] == []


def test_uuids_are_compared_without_regard_to_case(world: World) -> None:
    message = user("hello")
    world.alice.put_message(world.agent.upper(), {**message, "id": message["id"].upper()})
    world.alice.put_message(world.agent, user("hello again", message["id"]))
    page = world.alice.messages(world.agent)["messages"]
    assert [m["id"] for m in page] == [message["id"]]
    assert world.alice.part(world.agent, message["id"].upper(), 0) == {"type": "text", "text": "hello again"}


def test_a_bound_under_two_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 2"):
        Settings(bound=1)


def test_tool_name_prefixes_are_matched_with_case_on_every_backend(world: World) -> None:
    def dynamic(name: str) -> dict[str, object]:
        return {"type": "dynamic-tool", "toolName": name, "toolCallId": new_id(), "state": "output-available",
                "input": {}, "output": OUTPUT}

    names = ["mcp__x", "MCP__x", "Connection_foo", "connection_foo", "mcpX__y"]
    put(world.alice, world.agent, assistant([dynamic(n) for n in names]))
    sent = world.alice.messages(world.agent, cut=True)["messages"][-1]
    assert [c["index"] for c in sent["cutParts"]] == [0, 3]


def test_turn_end_keeps_a_result_that_lands_while_it_runs(
    world: World, transcripts: Transcripts, store: Store
) -> None:
    """The agent writes the tool's real outcome between the turn-end's read and its write."""
    message = assistant([{"type": "tool-bash", "toolCallId": "c1", "state": "input-available",
                          "input": {"command": "make"}}])
    put(world.alice, world.agent, message)
    done = assistant([bash("BUILD OK") | {"toolCallId": "c1"}], message["id"])
    read = store.message

    def read_then_race(*args: object) -> object:
        row = read(*args)  # type: ignore[arg-type]
        if row is not None and not done.get("raced"):
            done["raced"] = True
            put(world.alice, world.agent, {k: v for k, v in done.items() if k != "raced"})
        return row

    store.message = read_then_race  # type: ignore[method-assign]
    try:
        result = transcripts.end_turn(world.alice_id, world.agent)
    finally:
        del store.message
    assert result == {"message": message["id"], "ended": []}
    assert last(transcripts, world, cut=False)["parts"][0]["output"] == "BUILD OK"  # type: ignore[index]


def test_a_turn_end_that_keeps_losing_the_race_is_a_conflict(
    world: World, transcripts: Transcripts, store: Store
) -> None:
    message = assistant([{"type": "tool-bash", "toolCallId": "c1", "state": "input-available",
                          "input": {"command": "make"}}])
    put(world.alice, world.agent, message)
    read = store.message

    def read_then_rewrite(*args: object) -> object:
        row = read(*args)  # type: ignore[arg-type]
        put(world.alice, world.agent, message)  # the same message again: a new seq every time
        return row

    store.message = read_then_rewrite  # type: ignore[method-assign]
    try:
        with pytest.raises(Conflict):
            transcripts.end_turn(world.alice_id, world.agent)
    finally:
        del store.message
    assert last(transcripts, world, cut=False)["parts"][0]["state"] == "input-available"  # type: ignore[index]
