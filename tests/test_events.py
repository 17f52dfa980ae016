"""The event stream on one server: messages written after `since` arrive cut, with their seq as id."""

from __future__ import annotations

import httpx
import orjson
import pytest
from conftest import World
from core_helpers import BIG_OUTPUT, assistant, bash, put, user


def frames(world: World, path: str, count: int, **params: str) -> list[tuple[int, dict[str, object]]]:
    """The first ``count`` message frames of the stream at ``path``."""
    found: list[tuple[int, dict[str, object]]] = []
    headers = {"Authorization": f"Bearer {world.alice_token}"}
    with httpx.stream("GET", f"{world.url}{path}", params=params, headers=headers, timeout=20) as response:
        assert response.status_code == 200
        seq = None
        for line in response.iter_lines():
            if line.startswith("id: "):
                seq = int(line[4:])
            elif line.startswith("data: "):
                assert seq is not None
                found.append((seq, orjson.loads(line[6:])))
                if len(found) == count:
                    break
    return found


def test_messages_after_since_arrive_in_cut_form_with_their_seq(world: World) -> None:
    put(world.alice, world.agent, user("before"))
    since = world.alice.messages(world.agent)["seq"]
    message = put(world.alice, world.agent, assistant([bash(BIG_OUTPUT)]))
    [(seq, data)] = frames(world, f"/api/agents/{world.agent}/events", 1, since=str(since))
    assert seq == since + 1
    assert data == world.alice.messages(world.agent, cut=True, limit=1)["messages"][0]
    assert data["id"] == message["id"] and "output" not in data["parts"][0]  # type: ignore[index]


def test_a_subagents_events_carry_its_own_messages(world: World) -> None:
    put(world.alice, world.agent, user("parent"))
    sub = put(world.alice, world.agent, user("in the worker"), call="call-7")
    [(seq, data)] = frames(world, f"/api/agents/{world.agent}/subagents/call-7/events", 1, since="0")
    assert (seq, data) == (1, sub)


@pytest.mark.parametrize("since", ["x", "-1", "1.5", "²", "9" * 40])
def test_a_bad_since_is_400(world: World, since: str) -> None:
    response = httpx.get(f"{world.url}/api/agents/{world.agent}/events", params={"since": since},
                         headers={"Authorization": f"Bearer {world.alice_token}"})
    assert response.status_code == 400 and response.json()["error"]["where"] == "since"
