"""One parser per wire value: a part index and the bearer token mean the same on every path."""

from __future__ import annotations

import httpx
import pytest
from conftest import World
from core_helpers import BIG_OUTPUT, assistant, bash, put


def test_a_slice_of_part_00_is_the_same_not_found_as_part_00_whole(world: World) -> None:
    message = put(world.alice, world.agent, assistant([bash(BIG_OUTPUT)]))
    url = f"/api/agents/{world.agent}/messages/{message['id']}/parts"
    auth = {"Authorization": f"Bearer {world.alice_token}"}
    assert world.http.get(f"{url}/0", params={"field": "output", "end": "5"}, headers=auth).json()["text"] == "line "
    whole = world.http.get(f"{url}/00", headers=auth)
    sliced = world.http.get(f"{url}/00", params={"field": "output", "end": "5"}, headers=auth)
    assert whole.status_code == sliced.status_code == 404
    assert sliced.json() == whole.json() == {"error": {"code": "not_found", "message": "not found"}}


def two_tokens(world: World) -> list[tuple[str, str]]:
    return [("Authorization", f"Bearer {world.alice_token}"), ("Authorization", f"Bearer {world.bob_token}")]


@pytest.mark.parametrize(
    "method, path",
    [
        ("GET", "/api/agents/{agent}/messages"),  # the page fast path
        ("GET", "/api/agents/{agent}/messages?parts=cut&limit=50"),
        ("GET", "/api/agents/{agent}/messages?parts=bad"),  # the route itself
        ("GET", "/api/me"),
        ("GET", "/api/agents/{agent}"),
        ("POST", "/api/agents/{agent}/turn-end"),
    ],
)
def test_two_authorization_headers_are_refused_on_every_path(world: World, method: str, path: str) -> None:
    url = path.format(agent=world.agent)
    world.alice.messages(world.agent)  # both tokens known to this process: the fast path would answer
    world.bob.me()
    with httpx.Client(base_url=world.url) as over_a_socket:
        for http in (world.http, over_a_socket):
            response = http.request(method, url, headers=two_tokens(world))
            assert response.status_code == 400, (url, response.text)
            assert response.json()["error"]["where"] == "authorization"
