"""foldline.Client against the real server: every public method, and errors as the documented classes."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import World
from core_helpers import BIG_OUTPUT, assistant, bash, put, user
from servers import free_port

from foldline import BadRequest, Client, Forbidden, Invalid, NotFound, PayloadTooLarge, TransportError, Unauthorized
from foldline import client as types
from foldline.service import Transcripts


def test_every_public_method_works(world: World) -> None:
    assert world.alice.me()["id"] == world.alice_id
    second = world.alice.create_agent(world.workspace, title="second")
    assert second["title"] == "second" and second["subagents"] == []
    assert {a["id"] for a in world.alice.agents(world.workspace)} == {world.agent, second["id"]}
    assert world.alice.agent(world.agent)["title"] == "fix the build"
    first = put(world.alice, world.agent, user("go"))
    reply = assistant([bash(BIG_OUTPUT)])
    assert world.alice.put_message(world.agent, reply) == {"id": reply["id"], "seq": 2, "created": True}
    assert world.alice.messages(world.agent) == {"messages": [first, reply], "next": None, "seq": 2}
    page = world.alice.messages(world.agent, cut=True, limit=1)
    assert page["messages"][0]["cutParts"][0]["index"] == 0 and page["next"] is not None
    assert world.alice.messages(world.agent, limit=1, before=page["next"])["messages"] == [first]
    assert [m["id"] for m in world.alice.iter_messages(world.agent, cut=True, page_size=1)] == [reply["id"],
                                                                                               first["id"]]
    assert world.alice.part(world.agent, reply["id"], 0)["output"] == BIG_OUTPUT
    sub = put(world.alice, world.agent, user("worker"), call="w")
    assert world.alice.part(world.agent, sub["id"], 0, call="w") == {"type": "text", "text": "worker"}
    assert world.alice.end_turn(world.agent) == {"message": reply["id"], "ended": []}
    assert world.alice.end_turn(world.agent, call="w") == {"message": None, "ended": []}


def test_errors_arrive_as_their_classes(world: World, transcripts: Transcripts) -> None:
    with pytest.raises(NotFound):
        world.bob.messages(world.agent)
    with pytest.raises(Invalid) as invalid:
        world.alice.put_message(world.agent, {"id": user("x")["id"], "role": "user", "parts": [{"type": "nope"}]})
    assert invalid.value.where == "parts[0].type" and invalid.value.status == 422
    with world.client("fl_wrong") as stranger, pytest.raises(Unauthorized):
        stranger.me()
    member = transcripts.create_account("carol")
    transcripts.add_member(world.workspace, member["id"])
    with world.client(member["token"]) as carol, pytest.raises(Forbidden):
        carol.put_message(world.agent, user("x"))
    with pytest.raises(PayloadTooLarge):
        world.alice.put_message(world.agent, user("x" * (9 * 1024 * 1024)))


def test_a_closed_port_is_a_transport_error() -> None:
    with Client(f"http://127.0.0.1:{free_port()}", "fl_x", timeout=5) as client, pytest.raises(TransportError):
        client.me()


def test_a_message_without_an_id_gets_one_and_is_stored(world: World) -> None:
    result = world.alice.put_message(world.agent, {"role": "user", "parts": [{"type": "text", "text": "no id"}]})
    assert result["created"] is True
    assert [m["id"] for m in world.alice.messages(world.agent)["messages"]] == [result["id"]]


def test_a_trailing_slash_is_not_found_not_a_redirect(world: World) -> None:
    response = world.http.put(f"/api/agents/{world.agent}/messages/", json={},
                         headers={"Authorization": f"Bearer {world.alice_token}"})
    assert response.status_code == 404


def test_iter_messages_reads_newest_first(world: World) -> None:
    ids = [world.alice.put_message(world.agent, {"role": "user", "parts": [{"type": "text", "text": str(n)}]})["id"]
           for n in range(5)]
    assert [m["id"] for m in world.alice.iter_messages(world.agent, page_size=2)] == ids[::-1]


def keys_of(shape: Any) -> tuple[set[str], set[str]]:
    return set(shape.__required_keys__), set(shape.__required_keys__ | shape.__optional_keys__)


def fits(value: Any, shape: Any) -> bool:
    """The answer has every required key of its TypedDict and no key it does not name."""
    required, allowed = keys_of(shape)
    return isinstance(value, dict) and required <= set(value) <= allowed


def test_the_answers_have_the_shapes_the_client_types_name(world: World) -> None:
    me = world.alice.me()
    assert fits(me, types.Me) and all(fits(w, types.Workspace) for w in me["workspaces"])
    assert fits(world.alice.create_agent(world.workspace, title="t"), types.Agent)
    assert fits(world.alice.agent(world.agent), types.Agent)
    assert all(fits(a, types.AgentSummary) for a in world.alice.agents(world.workspace))
    assert fits(world.alice.put_message(world.agent, user("go")), types.WriteResult)
    world.alice.put_message(world.agent, assistant([bash(BIG_OUTPUT)]))
    page = world.alice.messages(world.agent, cut=True)
    assert fits(page, types.Page) and all(fits(m, types.Message) for m in page["messages"])
    assert all(fits(c, types.CutPart) for c in page["messages"][-1]["cutParts"])
    assert fits(world.alice.end_turn(world.agent), types.TurnEnd)


def test_events_on_a_closed_port_are_a_transport_error() -> None:
    with Client(f"http://127.0.0.1:{free_port()}", "fl_x", timeout=5) as client, pytest.raises(TransportError):
        client.events("agent")


def test_stream_sends_a_ui_message_stream_as_its_chunks_come(world: World) -> None:
    """``Client.stream``: chunks taken from a generator one by one, stored as the assistant
    message the SDK would assemble; a chunk the stream refuses is ``BadRequest`` with where it was."""
    message = str(uuid.uuid4())

    def chunks() -> Iterator[dict[str, Any] | str]:
        yield {"type": "start", "messageId": message}
        yield {"type": "text-start", "id": "t1"}
        for word in ("All ", "green", "."):
            yield {"type": "text-delta", "id": "t1", "delta": word}
        yield {"type": "text-end", "id": "t1"}
        yield {"type": "finish"}
        yield "[DONE]"

    with Client(world.url, world.alice_token) as alice:  # over a socket: the body goes as it comes
        done = alice.stream(world.agent, chunks())
        assert fits(done, types.Streamed)
        assert (done["id"], done["finished"], done["done"]) == (message, True, True)
        (stored,) = [m for m in alice.messages(world.agent)["messages"] if m["id"] == message]
        assert stored["role"] == "assistant"
        assert stored["parts"] == [{"type": "text", "text": "All green.", "state": "done"}]
        with pytest.raises(BadRequest) as refused:  # a malformed chunk: 400, where it was
            alice.stream(world.agent, [{"type": "start"}, {"type": "text-delta"}])
        assert refused.value.where is not None
