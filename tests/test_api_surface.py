"""The API's surface: every route in the OpenAPI document, one error shape, a sorted public names list."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from conftest import World
from core_helpers import new_id

import foldline
from foldline import errors

CONVERSATION = [("PUT", "/messages/{message}"), ("POST", "/turn-end"), ("POST", "/stream"), ("GET", "/messages"),
                ("GET", "/messages/{message}/parts/{index}"), ("GET", "/events")]
ROUTES = {("GET", "/api/me"), ("POST", "/api/agents"), ("GET", "/api/agents"), ("GET", "/api/agents/{agent}"),
          ("GET", "/api/agents/{agent}/export"),
          ("DELETE", "/api/agents/{agent}"), ("POST", "/agents/{agent}/delete"),
          ("POST", "/agents/{agent}/share"), ("POST", "/shares/{share}/revoke"),
          ("DELETE", "/api/samples"), ("POST", "/samples/remove"),
          ("GET", "/api/search"), ("GET", "/api/status"), ("GET", "/"), ("GET", "/agents/{agent}"), ("GET", "/signin"),
          ("POST", "/signin"), ("GET", "/signout"), ("POST", "/signout")} | {
    (method, prefix + path) for method, path in CONVERSATION
    for prefix in ("/api/agents/{agent}", "/api/agents/{agent}/subagents/{call}")
} | {
    ("POST", "/api/agents/{agent}/shares"), ("GET", "/api/agents/{agent}/shares"), ("DELETE", "/api/shares/{share}"),
    ("GET", "/s/{token}"), ("GET", "/api/shared/{token}"), ("GET", "/api/shared/{token}/search"),
    ("GET", "/api/shared/{token}/agents/{agent}"), ("GET", "/api/shared/{token}/agents/{agent}/export"),
} | {
    (method, prefix + path) for method, path in CONVERSATION if method == "GET"
    for prefix in ("/api/shared/{token}/agents/{agent}", "/api/shared/{token}/agents/{agent}/subagents/{call}")
}


def test_every_route_is_in_the_openapi_document(world: World) -> None:
    document = httpx.get(f"{world.url}/api/openapi.json").json()
    documented = {(method.upper(), path) for path, ops in document["paths"].items() for method in ops}
    assert documented == ROUTES
    put = document["paths"]["/api/agents/{agent}/messages/{message}"]["put"]
    assert "requestBody" in put


def error_responses(world: World) -> list[httpx.Response]:
    auth = {"Authorization": f"Bearer {world.alice_token}"}
    a = f"{world.url}/api/agents/{world.agent}"
    return [
        httpx.get(f"{world.url}/api/me"),  # 401
        httpx.get(f"{a}/messages", params={"limit": "x"}, headers=auth),  # 400
        httpx.get(f"{world.url}/api/agents", headers=auth),  # 400, no workspace_id
        httpx.get(f"{a}/nothing-here", headers=auth),  # 404
        httpx.put(f"{a}/messages/{new_id()}", json={"role": "user", "parts": []}, headers=auth),  # 422
        httpx.put(f"{a}/messages/{new_id()}", content=b"{", headers=auth),  # 400
        httpx.patch(a, headers=auth),  # 405
        httpx.post(f"{a}/messages", headers=auth),  # 405
    ]


def test_every_error_body_has_the_one_shape(world: World) -> None:
    statuses = []
    for response in error_responses(world):
        body: Any = response.json()
        statuses.append(response.status_code)
        assert set(body) == {"error"}, body
        assert set(body["error"]) <= {"code", "message", "where"} and {"code", "message"} <= set(body["error"])
        assert all(isinstance(v, str) for v in body["error"].values())
    assert statuses == [401, 400, 400, 404, 422, 400, 405, 405]


def test_the_public_names_are_sorted_and_complete() -> None:
    assert foldline.__all__ == sorted(foldline.__all__)
    exported_errors = {name for name in vars(errors) if isinstance(getattr(errors, name), type)
                       and issubclass(getattr(errors, name), errors.FoldlineError)}
    assert exported_errors <= set(foldline.__all__)
    assert {"Client", "__version__"} <= set(foldline.__all__)
    assert all(hasattr(foldline, name) for name in foldline.__all__)


@pytest.mark.parametrize("method,path,allow", [
    ("DELETE", "/api/agents", "GET, POST"),
    ("POST", "/api/agents/{agent}/messages", "GET"),
    ("DELETE", "/api/agents/{agent}/subagents/c1/messages/{message}", "PUT"),
    ("PUT", "/api/me", "GET"),
])
def test_a_405_says_which_methods_are_allowed(world: World, method: str, path: str, allow: str) -> None:
    url = world.url + path.format(agent=world.agent, message=new_id())
    response = httpx.request(method, url, headers={"Authorization": f"Bearer {world.alice_token}"})
    assert response.status_code == 405 and response.headers["Allow"] == allow
    assert response.json()["error"]["code"] == "method_not_allowed"


def first_event(url: str, token: str, since: int) -> list[str]:
    """The id, event and data lines of the first message a stream sends after ``since``."""
    lines: list[str] = []
    headers = {"Authorization": f"Bearer {token}"}
    with httpx.stream("GET", url, params={"since": str(since)}, headers=headers, timeout=20) as response:
        assert response.status_code == 200 and response.headers["content-type"].startswith("text/event-stream")
        for line in response.iter_lines():
            if line.startswith(("id: ", "event: ", "data: ")):
                lines.append(line)
            if line.startswith("data: "):
                break
    return lines


@pytest.mark.parametrize("prefix", ["agent", "subagent"])
def test_each_conversation_route_behaves_the_same_under_both_prefixes(world: World, prefix: str) -> None:
    """The five routes are written once: an agent's conversation and a subagent's answer alike."""
    base = f"{world.url}/api/agents/{world.agent}" + ("/subagents/toolu_9" if prefix == "subagent" else "")
    auth = {"Authorization": f"Bearer {world.alice_token}"}
    first = {"id": new_id(), "role": "user", "parts": [{"type": "text", "text": "hello"}]}
    created = httpx.put(f"{base}/messages/{first['id']}", json=first, headers=auth)
    assert (created.status_code, created.json()) == (201, {"id": first["id"], "seq": 1, "created": True})
    replaced = httpx.put(f"{base}/messages/{first['id']}", json=first, headers=auth)
    assert (replaced.status_code, replaced.json()) == (200, {"id": first["id"], "seq": 2, "created": False})
    turn = {"id": new_id(), "role": "assistant", "parts": [
        {"type": "tool-bash", "toolCallId": "c", "state": "input-available", "input": {"command": "make"}}]}
    assert httpx.put(f"{base}/messages/{turn['id']}", json=turn, headers=auth).status_code == 201
    page = httpx.get(f"{base}/messages", params={"limit": "1", "parts": "cut"}, headers=auth).json()
    assert isinstance(page["messages"][0].pop("createdAt"), str)
    assert (page["messages"], page["seq"]) == ([turn], 3) and page["next"] is not None
    part = httpx.get(f"{base}/messages/{first['id']}/parts/0", headers=auth)
    assert part.json() == first["parts"][0]
    assert httpx.post(f"{base}/turn-end", headers=auth).json() == {"message": turn["id"], "ended": [0]}
    [event_id, event, data] = first_event(f"{base}/events", world.alice_token, since=3)
    assert (event_id, event) == ("id: 4", "event: message") and data.startswith('data: {"id":"' + turn["id"])
    bad = httpx.get(f"{base}/messages", params={"limit": "0"}, headers=auth)
    assert (bad.status_code, bad.json()["error"]["where"]) == (400, "limit")
    assert httpx.get(f"{base}/messages").status_code == 401
    bob = {"Authorization": f"Bearer {world.bob_token}"}
    assert httpx.get(f"{base}/messages", headers=bob).json() == {"error": {"code": "not_found", "message": "not found"}}
    assert httpx.delete(f"{base}/turn-end", headers=auth).headers["Allow"] == "POST"


@pytest.mark.parametrize("route,name", [("messages", "before"), ("events", "since")])
def test_a_cursor_past_any_position_is_400_not_a_database_error(world: World, route: str, name: str) -> None:
    url = f"{world.url}/api/agents/{world.agent}/{route}"
    response = httpx.get(url, params={name: str(2**31)}, headers={"Authorization": f"Bearer {world.alice_token}"})
    assert (response.status_code, response.json()["error"]["where"]) == (400, name)
