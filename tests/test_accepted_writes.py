"""What the write door accepts: the empty opening message, the turn-end outcome, and unknown keys kept."""

from __future__ import annotations

from typing import Any

from conftest import World
from core_helpers import assistant, new_id, put, text

TURN_ENDED = "the turn ended before this tool returned; its outcome is unknown"
Json = dict[str, Any]


def test_the_empty_assistant_message_that_opens_a_turn_is_accepted(world: World) -> None:
    message = put(world.alice, world.agent, assistant([]))
    assert world.alice.messages(world.agent)["messages"] == [message]


def open_tools() -> list[Json]:
    return [
        {"type": "tool-bash", "toolCallId": "a", "state": "input-streaming", "input": {"comm": "partial"}},
        {"type": "tool-bash", "toolCallId": "b", "state": "input-available", "input": {"command": "make"}},
        {"type": "tool-bash", "toolCallId": "c", "state": "approval-requested", "input": {"command": "rm -r"},
         "approval": {"id": "ap1"}},
        {"type": "dynamic-tool", "toolName": "mcp__db__query", "toolCallId": "d", "state": "approval-responded",
         "input": {"sql": "select 1"}, "approval": {"id": "ap2", "approved": True}},
        {"type": "tool-bash", "toolCallId": "e", "state": "output-available", "input": {"command": "ls"},
         "output": "done"},
        text("working on it"),
    ]


def test_turn_end_gives_open_tools_the_unknown_outcome_and_keeps_inputs(world: World) -> None:
    message = put(world.alice, world.agent, assistant(open_tools()))
    ended = world.alice.end_turn(world.agent)
    assert ended == {"message": message["id"], "ended": [0, 1, 2, 3]}
    parts = world.alice.messages(world.agent)["messages"][0]["parts"]
    for before, after in zip(message["parts"][:4], parts[:4], strict=True):
        assert after["state"] == "output-error"
        assert after["errorText"] == TURN_ENDED
        assert after["input"] == before["input"]
        assert after["toolCallId"] == before["toolCallId"]
    assert "approval" not in parts[2]  # an unanswered approval is not an approval
    assert parts[3]["approval"] == {"id": "ap2", "approved": True}
    assert parts[4:] == message["parts"][4:]


def test_turn_end_without_open_tools_changes_nothing(world: World) -> None:
    message = put(world.alice, world.agent, assistant([text("all done")]))
    seq = world.alice.messages(world.agent)["seq"]
    assert world.alice.end_turn(world.agent) == {"message": message["id"], "ended": []}
    assert world.alice.messages(world.agent) == {"messages": [message], "next": None, "seq": seq}


def test_turn_end_on_an_empty_agent_is_a_no_op(world: World) -> None:
    assert world.alice.end_turn(world.agent) == {"message": None, "ended": []}


def sdk_shapes() -> Json:
    """One message with the keys AI SDK v5, v6 and v7 add, some of them unknown to us."""
    return {
        "id": new_id(),
        "role": "assistant",
        "metadata": {"model": "m-1", "usage": {"input": 3}},
        "futureKey": {"nested": [1, 2, {"x": None}]},
        "parts": [
            {"type": "step-start"},
            {"type": "reasoning", "text": "hm", "state": "done", "providerMetadata": {"p": {"sig": "s"}}},
            {"type": "tool-bash", "toolCallId": "t1", "state": "output-available", "title": "Run tests",
             "input": {"command": "make"}, "output": "ok", "toolMetadata": {"ui": {"icon": "term"}},
             "callProviderMetadata": {"p": {"a": 1}}, "resultProviderMetadata": {"p": {"b": 2}},
             "approval": {"id": "ap", "approved": True, "reason": "policy", "isAutomatic": True,
                          "signature": "hmac-abc"},
             "providerExecuted": False, "preliminary": False, "extraToolKey": 7},
            {"type": "tool-bash", "toolCallId": "t2", "state": "approval-requested", "input": {"command": "rm"},
             "approval": {"id": "ap2", "isAutomatic": False, "signature": "hmac-def"}},
            {"type": "tool-bash", "toolCallId": "t3", "state": "output-denied", "input": {"command": "rm"},
             "approval": {"id": "ap3", "approved": False, "reason": "no"}},
            {"type": "tool-read_file", "toolCallId": "t4", "state": "output-error", "rawInput": "{bad",
             "errorText": "could not parse"},
            {"type": "file", "mediaType": "image/png", "url": "https://example.com/a.png",
             "providerReference": {"openai": "file-123"}},
            {"type": "reasoning-file", "mediaType": "image/png", "url": "data:image/png;base64,AAAA"},
            {"type": "custom", "kind": "acme.widget", "providerMetadata": {"acme": {"v": 1}}, "payload": [1]},
            {"type": "source-url", "sourceId": "s1", "url": "https://example.com"},
            {"type": "source-document", "sourceId": "s2", "mediaType": "text/plain", "title": "notes"},
            {"type": "data-progress", "id": "d1", "data": {"pct": 50}},
            {"type": "text", "text": "ünïcode ✓ 🙂", "state": "streaming"},
        ],
    }


def test_unknown_keys_and_every_sdk_shape_round_trip(world: World) -> None:
    message = put(world.alice, world.agent, sdk_shapes())
    assert world.alice.messages(world.agent)["messages"] == [message]
    [cut] = world.alice.messages(world.agent, cut=True)["messages"]
    assert isinstance(cut.pop("createdAt"), str)  # a cut read adds when the message was stored, nothing else
    assert cut == message
    for index, part in enumerate(message["parts"]):
        assert world.alice.part(world.agent, str(message["id"]), index) == part
