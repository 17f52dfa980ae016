"""Bad input is never a 500: each answer is a 4xx in the one error shape, and nothing is stored."""

from __future__ import annotations

from typing import Any

import httpx
import orjson
import pytest
from conftest import World
from core_helpers import new_id, user


def put_raw(world: World, content: bytes, message: str | None = None, **headers: str) -> httpx.Response:
    url = f"{world.url}/api/agents/{world.agent}/messages/{message or new_id()}"
    headers = {"Authorization": f"Bearer {world.alice_token}", "Content-Type": "application/json", **headers}
    return httpx.put(url, content=content, headers=headers, timeout=60)


def assert_refused(response: httpx.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status
    body: dict[str, Any] = response.json()
    assert set(body) == {"error"} and {"code", "message"} <= set(body["error"])
    return body


BODIES = {
    "malformed": b'{"role": "user", "parts": [',
    "empty": b"",
    "not an object": b"[1, 2, 3]",
    "a string": b'"hello"',
    "invalid utf-8": b'{"role": "user", "parts": [{"type": "text", "text": "\xff\xfe"}]}',
    "lone surrogate": b'{"role": "user", "parts": [{"type": "text", "text": "\\ud800"}]}',
    "deep arrays": b"[" * 100_000 + b"]" * 100_000,
    "deep objects": b'{"a":' * 100_000 + b"1" + b"}" * 100_000,
    "nan": b'{"role": "user", "parts": [{"type": "text", "text": NaN}]}',
    "trailing garbage": b'{"role": "user", "parts": []} x',
}


@pytest.mark.parametrize("content", list(BODIES.values()), ids=list(BODIES))
def test_a_body_that_is_no_message_is_refused_and_stores_nothing(world: World, content: bytes) -> None:
    response = put_raw(world, content)
    assert response.status_code in (400, 422)
    assert_refused(response, response.status_code)
    assert world.alice.messages(world.agent)["messages"] == []


WRONG_TYPES: list[Any] = [
    {"role": 1, "parts": []},
    {"role": "user", "parts": "text"},
    {"role": "user", "parts": [None]},
    {"role": "user", "parts": [1]},
    {"role": "user", "parts": [{"type": None}]},
    {"role": "user", "parts": [{"type": "text", "text": "x", "state": 5}]},
    {"role": "assistant", "parts": [{"type": "tool-bash", "toolCallId": 5, "state": "input-available",
                                     "input": {"command": "x"}}]},
    {"role": "user", "parts": [{"type": "text", "text": "x"}], "metadata": "not an object"},
    {"id": 12, "role": "user", "parts": [{"type": "text", "text": "x"}]},
    {"role": "assistant", "parts": [{"type": "tool-bash", "toolCallId": "c", "state": "output-available",
                                     "input": {"command": "x"}, "output": "y", "preliminary": "yes"}]},
]


@pytest.mark.parametrize("body", WRONG_TYPES)
def test_wrong_types_are_422(world: World, body: Any) -> None:
    assert_refused(put_raw(world, orjson.dumps(body)), 422)
    assert world.alice.messages(world.agent)["messages"] == []


def test_a_body_over_the_limit_is_413(world: World) -> None:
    big = b'{"role": "user", "parts": [{"type": "text", "text": "' + b"x" * (9 * 1024 * 1024) + b'"}]}'
    assert assert_refused(put_raw(world, big), 413)["error"]["code"] == "too_large"
    assert world.alice.messages(world.agent)["messages"] == []


def test_a_body_over_the_limit_without_a_length_is_413(world: World) -> None:
    def chunks() -> Any:
        for _ in range(10):
            yield b"x" * (1024 * 1024)

    url = f"{world.url}/api/agents/{world.agent}/messages/{new_id()}"
    response = httpx.put(url, content=chunks(), headers={"Authorization": f"Bearer {world.alice_token}"}, timeout=60)
    assert_refused(response, 413)


A_UUID = "3f2c9a1e-7b4d-4e8a-9c61-0d5b2f8e4a17"  # fixed: every pytest-xdist worker collects the same ids
WRONG_IDS = ["x", "1", "0" * 36, "g" * 36, "%20", "a" * 5000, "00000000-0000-0000-0000-00000000000g",
             "{" + A_UUID + "}", A_UUID.replace("-", ""), "urn:uuid:" + A_UUID, "%F0%9F%99%82"]


@pytest.mark.parametrize("bad", WRONG_IDS)
def test_ids_of_every_wrong_shape_are_4xx(world: World, bad: str) -> None:
    auth = {"Authorization": f"Bearer {world.alice_token}"}
    a = f"{world.url}/api/agents"
    for url in [f"{a}/{bad}", f"{a}/{bad}/messages", f"{a}/{world.agent}/messages/{bad}/parts/0",
                f"{a}/{world.agent}/subagents/{bad}/messages", f"{a}?workspace_id={bad}"]:
        response = httpx.get(url, headers=auth)
        assert response.status_code in (400, 404), url
        assert_refused(response, response.status_code)
    response = put_raw(world, b'{"role": "user", "parts": [{"type": "text", "text": "x"}]}', message=bad)
    assert response.status_code in (400, 404, 422)
    assert world.alice.messages(world.agent)["messages"] == []


@pytest.mark.parametrize("query", ["limit=99999999999999999999999", "limit=1e3", "before=99999999999999999999999",
                                   "parts=everything", "limit=%00", "before=-0", "limit=" + "9" * 5000])
def test_odd_queries_are_400(world: World, query: str) -> None:
    url = f"{world.url}/api/agents/{world.agent}/messages?{query}"
    assert_refused(httpx.get(url, headers={"Authorization": f"Bearer {world.alice_token}"}), 400)


@pytest.mark.parametrize("body", [b"[]", b'{"workspace_id": 5}', b'{"workspace_id": "x", "title": []}', b"{", b""])
def test_creating_an_agent_from_a_bad_body_is_4xx(world: World, body: bytes) -> None:
    response = httpx.post(f"{world.url}/api/agents", content=body,
                          headers={"Authorization": f"Bearer {world.alice_token}"})
    assert response.status_code in (400, 422)
    assert_refused(response, response.status_code)


def test_a_token_with_odd_bytes_is_401(world: World) -> None:
    response = httpx.get(f"{world.url}/api/me", headers={"Authorization": "Bearer \xe9\xff".encode("latin-1")})
    assert_refused(response, 401)


def test_a_written_message_still_reads_after_all_that(world: World) -> None:
    message = user("still here")
    put_raw(world, b"[" * 100_000)
    assert world.alice.put_message(world.agent, message)["created"] is True
    assert world.alice.messages(world.agent)["messages"] == [message]
