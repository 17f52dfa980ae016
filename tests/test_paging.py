"""Paging: newest N in order with a cursor, back to the start; no limit gives all; replacing keeps the place."""

from __future__ import annotations

import pytest
from conftest import World
from core_helpers import put, user

from foldline import BadRequest


def write(world: World, count: int) -> list[str]:
    return [str(put(world.alice, world.agent, user(f"message {n}"))["id"]) for n in range(count)]


def ids(page: dict[str, list[dict[str, str]]]) -> list[str]:
    return [m["id"] for m in page["messages"]]


def test_limit_gives_the_newest_messages_in_order_with_a_cursor(world: World) -> None:
    written = write(world, 7)
    page = world.alice.messages(world.agent, limit=3)
    assert ids(page) == written[4:]
    assert page["next"] is not None


def test_before_pages_back_to_the_start(world: World) -> None:
    written = write(world, 7)
    seen, before = [], None
    pages = 0
    while True:
        page = world.alice.messages(world.agent, limit=3, before=before)
        seen = ids(page) + seen
        pages += 1
        before = page["next"]
        if before is None:
            break
    assert seen == written and pages == 3


def test_a_page_that_holds_exactly_the_rest_has_no_cursor(world: World) -> None:
    write(world, 4)
    page = world.alice.messages(world.agent, limit=4)
    assert len(page["messages"]) == 4 and page["next"] is None


def test_no_limit_gives_all(world: World) -> None:
    written = write(world, 12)
    page = world.alice.messages(world.agent)
    assert ids(page) == written and page["next"] is None
    assert [m["id"] for m in world.alice.iter_messages(world.agent, page_size=5)] == written[::-1]


def test_replacing_a_message_keeps_its_position(world: World) -> None:
    written = write(world, 3)
    put(world.alice, world.agent, user("rewritten", message_id=written[0]))
    page = world.alice.messages(world.agent)
    assert ids(page) == written
    assert page["messages"][0]["parts"][0]["text"] == "rewritten"


def test_the_read_reports_the_write_counter(world: World) -> None:
    written = write(world, 3)
    put(world.alice, world.agent, user("again", message_id=written[1]))
    assert world.alice.messages(world.agent, limit=1)["seq"] == 4


@pytest.mark.parametrize("cursor", ["abc", "-1", "1.5", "", "9" * 40, "²"])
def test_a_bad_cursor_is_400(world: World, cursor: str) -> None:
    write(world, 2)
    with pytest.raises(BadRequest) as refused:
        world.alice.messages(world.agent, limit=1, before=cursor)
    assert refused.value.where == "before"


@pytest.mark.parametrize("limit", ["0", "-5", "1001", "9" * 5000, "ten", "2.5", "³"])
def test_a_bad_limit_is_400(world: World, limit: str) -> None:
    url = f"/api/agents/{world.agent}/messages"
    response = world.http.get(url, params={"limit": limit}, headers={"Authorization": f"Bearer {world.alice_token}"})
    assert response.status_code == 400
    assert response.json()["error"]["where"] == "limit"
