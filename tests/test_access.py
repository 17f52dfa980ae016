"""Access: 401 without a valid token; members read; only the owner writes; one identical not-found."""

from __future__ import annotations

import httpx
import pytest
from conftest import World
from core_helpers import add_member, new_id, put, user

from foldline import Forbidden
from foldline.service import Transcripts

NOT_FOUND = {"error": {"code": "not_found", "message": "not found"}}


def get(world: World, path: str, token: str | None = None, **headers: str) -> httpx.Response:
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    return world.http.get(f"{path}", headers=headers)


@pytest.mark.parametrize("header", [None, "", "Bearer", "Bearer nope", "Basic YWxpY2U6eA==", "fl_x"])
def test_a_missing_or_bad_token_is_401(world: World, header: str | None) -> None:
    headers = {} if header is None else {"Authorization": header}
    for path in ["/api/me", f"/api/agents/{world.agent}/messages", f"/api/agents?workspace_id={world.workspace}"]:
        response = world.http.get(f"{path}", headers=headers)
        assert response.status_code == 401
        assert response.json()["error"]["code"] == "unauthorized"


def test_a_write_without_a_token_is_401_and_stores_nothing(world: World) -> None:
    message = user("x")
    response = world.http.put(f"/api/agents/{world.agent}/messages/{message['id']}", json=message)
    assert response.status_code == 401
    assert world.alice.messages(world.agent)["messages"] == []


def test_the_cookie_works_for_reads_only(world: World) -> None:
    cookie = {"Cookie": f"foldline_token={world.alice_token}"}
    assert get(world, f"/api/agents/{world.agent}/messages", **cookie).status_code == 200
    message = user("x")
    url = f"/api/agents/{world.agent}/messages/{message['id']}"
    assert world.http.put(url, json=message, headers=cookie).status_code == 401


def test_members_read_and_only_the_owner_writes(world: World, transcripts: Transcripts) -> None:
    message = put(world.alice, world.agent, user("hello"))
    carol = add_member(transcripts, world.workspace, "carol")
    with world.client(carol["token"]) as client:
        assert client.messages(world.agent)["messages"] == [message]
        assert [a["id"] for a in client.agents(world.workspace)] == [world.agent]
        with pytest.raises(Forbidden):
            client.put_message(world.agent, user("intruder"))
        with pytest.raises(Forbidden):
            client.end_turn(world.agent)
        with pytest.raises(Forbidden):
            client.put_message(world.agent, user("sub"), call="call-1")
    assert world.alice.messages(world.agent)["messages"] == [message]
    assert world.alice.agent(world.agent)["subagents"] == []


def test_me_lists_the_callers_workspaces(world: World) -> None:
    me = world.alice.me()
    assert me["id"] == world.alice_id and me["name"] == "alice"
    assert me["workspaces"] == [{"id": world.workspace, "name": "team", "samples": False}]
    assert world.bob.me()["workspaces"] == []


def paths_not_found(world: World, message: str) -> list[str]:
    a = f"/api/agents/{world.agent}"
    return [
        f"/api/agents/{new_id()}",  # unknown agent
        f"/api/agents/{new_id()}/messages",
        "/api/agents/not-a-uuid",
        "/api/agents/not-a-uuid/messages",
        f"/api/agents?workspace_id={new_id()}",
        "/api/agents?workspace_id=zzz",
        f"{a}/messages/{new_id()}/parts/0",  # unknown message
        f"{a}/messages/{message}/parts/5",  # index past the end
        f"{a}/messages/{message}/parts/x",  # not a number
        f"{a}/messages/{message.upper()}x/parts/0",
        f"{a}/subagents/unknown-call/messages",  # unknown subagent call
        f"{a}/subagents/unknown-call/messages/{message}/parts/0",
        "/api/no/such/route",
    ]


def test_every_not_found_is_identical(world: World) -> None:
    message = str(put(world.alice, world.agent, user("hello"))["id"])
    for path in paths_not_found(world, message):
        response = get(world, path, world.alice_token)
        assert (path, response.status_code, response.json()) == (path, 404, NOT_FOUND)


def test_another_workspaces_agent_is_the_same_not_found(world: World) -> None:
    message = str(put(world.alice, world.agent, user("hello"))["id"])
    a = f"/api/agents/{world.agent}"
    for path in [a, f"{a}/messages", f"{a}/messages/{message}/parts/0", f"{a}/subagents/c/messages",
                 f"/api/agents?workspace_id={world.workspace}"]:
        response = get(world, path, world.bob_token)
        assert (path, response.status_code, response.json()) == (path, 404, NOT_FOUND)
    other = world.http.put(f"{a}/messages/{new_id()}", json=user("x"),
                      headers={"Authorization": f"Bearer {world.bob_token}"})
    assert (other.status_code, other.json()) == (404, NOT_FOUND)
    assert world.http.post(f"{a}/turn-end", headers={"Authorization": f"Bearer {world.bob_token}"}).json() \
        == NOT_FOUND


def test_creating_an_agent_in_a_workspace_one_is_not_in_is_not_found(world: World) -> None:
    response = world.http.post("/api/agents", json={"workspace_id": world.workspace},
                          headers={"Authorization": f"Bearer {world.bob_token}"})
    assert (response.status_code, response.json()) == (404, NOT_FOUND)
