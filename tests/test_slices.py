"""Slices of one field of one part, on both backends: the same text as the whole part, end
clamped, across chunk boundaries and astral code points; bad input a 400, bad ids the one not-found."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from conftest import World
from core_helpers import assistant, bash, new_id, put, thought, tool, user

from foldline.cut import output_text
from foldline.store.chunks import CHUNK, OVERLAP

# About 3.5 chunks, astral and combining code points throughout, so byte and code-point offsets differ.
BODY = "".join(f"{n:06d} é🙂 e\u0301 日本 ß\n" for n in range(7_000))[: 3 * CHUNK + CHUNK // 2]


def written(world: World, call: str | None = None) -> dict[str, Any]:
    failed = {"type": "tool-grep", "toolCallId": new_id(), "state": "output-error", "input": {"pattern": "ü.*"}}
    failed["errorText"] = "exit 2"
    parts = [bash(BODY), thought("a short thought"), failed, tool("Task", {"done": ["ö"]}, input={})]
    return put(world.alice, world.agent, assistant(parts), call=call)


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    """One client per test: making one per request costs more than the request."""
    with httpx.Client(timeout=60) as client:
        yield client


def get(
    http: httpx.Client,
    world: World,
    message: str,
    index: str,
    token: str | None = None,
    call: str | None = None,
    **q: str,
) -> Any:
    base = f"{world.url}/api/agents/{world.agent}" + (f"/subagents/{call}" if call else "")
    headers = {"Authorization": f"Bearer {token or world.alice_token}"}
    return http.get(f"{base}/messages/{message}/parts/{index}", params=q, headers=headers)


EDGES = [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, CHUNK + OVERLAP, 2 * CHUNK, 3 * CHUNK + 5, len(BODY) - 1, len(BODY)]


def test_a_slice_is_the_same_text_as_the_whole_part(world: World) -> None:
    message = written(world)
    for start in EDGES:
        for end in sorted({start, start + 1, start + 100, start + CHUNK + 7, start + 3 * CHUNK, len(BODY) + 50}):
            got = world.alice.part_slice(world.agent, message["id"], 0, "output", start=start, end=end)
            assert got == {
                "field": "output",
                "start": start,
                "end": min(end, len(BODY)),
                "length": len(BODY),
                "text": BODY[start:end],
            }, (start, end)


def test_every_field_slices_as_the_panel_draws_it(world: World) -> None:
    message = written(world)
    s = world.alice.part_slice
    assert s(world.agent, message["id"], 1, "text")["text"] == "a short thought"
    assert s(world.agent, message["id"], 1, "text", start=2, end=7)["text"] == "short"
    assert s(world.agent, message["id"], 2, "input")["text"] == '{\n  "pattern": "ü.*"\n}'
    assert s(world.agent, message["id"], 2, "errorText")["text"] == "exit 2"
    assert s(world.agent, message["id"], 3, "output")["text"] == output_text({"done": ["ö"]})
    assert s(world.agent, message["id"], 0, "input", start=4)["text"] == '"command": "make test"\n}'


def test_past_the_end_is_an_empty_slice_at_the_end(world: World) -> None:
    message = written(world)
    got = world.alice.part_slice(world.agent, message["id"], 1, "text", start=99, end=200)
    assert got == {"field": "text", "start": 15, "end": 15, "length": 15, "text": ""}


def test_without_field_the_route_answers_the_whole_part(http: httpx.Client, world: World) -> None:
    message = written(world)
    assert get(http, world, message["id"], "0").json()["output"] == BODY


def test_a_subagent_part_slices_too(http: httpx.Client, world: World) -> None:
    message = written(world, call="toolu_slice")
    got = world.alice.part_slice(
        world.agent, message["id"], 0, "output", start=CHUNK - 2, end=CHUNK + 2, call="toolu_slice"
    )
    assert got["text"] == BODY[CHUNK - 2 : CHUNK + 2]
    assert get(http, world, message["id"], "0", field="output").status_code == 404  # not the parent's message


BAD_INPUT = [
    ({"field": "body"}, "field"),
    ({"field": "url"}, "field"),
    ({"field": ""}, "field"),
    ({"start": "3"}, "field"),
    ({"field": "output", "start": "-1"}, "start"),
    ({"field": "output", "start": "x"}, "start"),
    ({"field": "output", "start": ""}, "start"),
    ({"field": "output", "start": "1.5"}, "start"),
    ({"field": "output", "start": "٣"}, "start"),
    ({"field": "output", "end": "-4"}, "end"),
    ({"field": "output", "end": "9" * 40}, "end"),
    ({"field": "output", "start": "10", "end": "9"}, "start"),
]


def test_bad_input_is_a_400_with_where(http: httpx.Client, world: World) -> None:
    message = written(world)
    for query, where in BAD_INPUT:
        response = get(http, world, message["id"], "0", **query)
        assert response.status_code == 400, (query, response.text)
        assert response.json()["error"]["where"] == where, query


def test_bad_ids_are_the_one_not_found(http: httpx.Client, world: World) -> None:
    mine = written(world)["id"]
    other_agent = world.alice.create_agent(world.workspace)
    other = put(world.alice, other_agent["id"], user("elsewhere"))["id"]
    cases = [
        (mine, "9", "output"),  # index past the end
        (mine, "x", "output"),
        (mine, "-1", "output"),
        (mine, "0", "errorText"),  # a field the part does not have
        (mine, "1", "input"),
        (other, "0", "text"),  # a message of another conversation
        ("not-a-uuid", "0", "text"),
        (new_id(), "0", "text"),
    ]
    for message, index, field in cases:
        response = get(http, world, message, index, field=field)
        assert response.status_code == 404, (message, index, field)
        assert response.json() == {"error": {"code": "not_found", "message": "not found"}}


def test_another_account_gets_the_one_not_found(http: httpx.Client, world: World) -> None:
    message = written(world)
    response = get(http, world, message["id"], "0", token=world.bob_token, field="output", start="0", end="10")
    assert response.status_code == 404
    assert response.json() == {"error": {"code": "not_found", "message": "not found"}}
