"""The write door: each kind of wrong message is a 422 naming the field; nothing is stored; no echo."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from conftest import World
from core_helpers import new_id, put, user

MARK = "ZQX-marker-7f3a"  # a value that must never come back in an error
Json = dict[str, Any]


def tool_part(**fields: Any) -> Json:
    base = {"type": "tool-bash", "toolCallId": "c1", "state": "output-available", "input": {"command": "ls"},
            "output": "ok"}
    base.update(fields)
    return {k: v for k, v in base.items() if v is not None}


REFUSED: list[tuple[str, Json, str]] = [
    ("unknown part type", {"role": "assistant", "parts": [{"type": MARK}]}, "parts[0].type"),
    ("unknown tool", {"role": "assistant", "parts": [tool_part(type=f"tool-{MARK}")]}, "parts[0].type"),
    ("text without text", {"role": "user", "parts": [{"type": "text", "note": MARK}]}, "parts[0].text"),
    ("text of wrong type", {"role": "user", "parts": [{"type": "text", "text": [MARK]}]}, "parts[0].text"),
    ("tool without call id", {"role": "assistant", "parts": [tool_part(toolCallId=None)]}, "parts[0].toolCallId"),
    ("unknown tool state", {"role": "assistant", "parts": [tool_part(state=MARK)]}, "parts[0].state"),
    ("output missing", {"role": "assistant", "parts": [tool_part(output=None)]}, "parts[0].output"),
    ("output in input-available", {"role": "assistant", "parts": [tool_part(state="input-available", output=MARK)]},
     "parts[0].output"),
    ("errorText in output-available", {"role": "assistant", "parts": [tool_part(errorText=MARK)]},
     "parts[0].errorText"),
    ("input against the schema", {"role": "assistant", "parts": [tool_part(input={"command": [MARK]})]},
     "parts[0].input.command"),
    ("input missing a required key", {"role": "assistant", "parts": [tool_part(input={"cwd": MARK})]},
     "parts[0].input"),
    ("output against the schema", {"role": "assistant", "parts": [tool_part(output=12345)]}, "parts[0].output"),
    ("approval not an object", {"role": "assistant", "parts": [tool_part(state="approval-requested", output=None,
                                                                          approval=MARK)]}, "parts[0].approval"),
    ("requested approval answered", {"role": "assistant", "parts": [tool_part(
        state="approval-requested", output=None, approval={"id": MARK, "approved": True})]}, "parts[0].approval"),
    ("executed without approval", {"role": "assistant", "parts": [tool_part(approval={"id": MARK,
                                                                                       "approved": False})]},
     "parts[0].approval"),
    ("dynamic tool without a name", {"role": "assistant", "parts": [tool_part(type="dynamic-tool")]},
     "parts[0].toolName"),
    ("user message without parts", {"role": "user", "parts": []}, "parts"),
    ("parts not a list", {"role": "user", "parts": {"0": MARK}}, "parts"),
    ("unknown role", {"role": MARK, "parts": []}, "role"),
    ("second part wrong", {"role": "user", "parts": [{"type": "text", "text": "a"}, {"type": "file", "url": MARK}]},
     "parts[1].mediaType"),
]


@pytest.mark.parametrize(("body", "where"), [(b, w) for _, b, w in REFUSED], ids=[n for n, _, _ in REFUSED])
def test_a_wrong_message_is_refused_at_the_field(world: World, body: Json, where: str) -> None:
    message_id = new_id()
    response = send(world, message_id, body)
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "invalid" and error["where"] == where
    assert MARK not in response.text
    assert world.alice.messages(world.agent)["messages"] == []


def test_an_id_that_differs_from_the_path_is_refused(world: World) -> None:
    response = send(world, new_id(), {**user("hi"), "id": new_id()})
    assert response.status_code == 422 and response.json()["error"]["where"] == "id"
    assert world.alice.messages(world.agent)["messages"] == []


def test_a_refused_replacement_keeps_the_old_message(world: World) -> None:
    message = put(world.alice, world.agent, user("kept"))
    response = send(world, str(message["id"]), {"role": "user", "parts": [{"type": MARK}]})
    assert response.status_code == 422
    assert world.alice.messages(world.agent)["messages"] == [message]


def test_put_answers_201_then_200(world: World) -> None:
    message = user("hello")
    first = send(world, str(message["id"]), message)
    second = send(world, str(message["id"]), message)
    assert (first.status_code, second.status_code) == (201, 200)
    assert first.json() == {"id": message["id"], "seq": 1, "created": True}
    assert second.json() == {"id": message["id"], "seq": 2, "created": False}


def test_the_id_may_be_left_to_the_path(world: World) -> None:
    message_id = new_id()
    assert send(world, message_id, {"role": "user", "parts": [{"type": "text", "text": "x"}]}).status_code == 201
    assert world.alice.messages(world.agent)["messages"][0]["id"] == message_id


def send(world: World, message_id: str, body: Json) -> httpx.Response:
    return world.http.put(
        f"/api/agents/{world.agent}/messages/{message_id}",
        json=body,
        headers={"Authorization": f"Bearer {world.alice_token}"},
    )
