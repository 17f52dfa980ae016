"""A cut page read issues a fixed number of SQL statements, whatever the page holds."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from conftest import World
from core_helpers import BIG_OUTPUT, LONG_THOUGHT, assistant, bash, put, thought, user
from sqlalchemy import event

from foldline.store import Store
from foldline.transcripts import Transcripts


@contextmanager
def counted(store: Store) -> Iterator[list[str]]:
    statements: list[str] = []

    def count(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        statements.append(statement)

    event.listen(store.engine, "before_cursor_execute", count)
    try:
        yield statements
    finally:
        event.remove(store.engine, "before_cursor_execute", count)


def fill(world: World, turns: int) -> None:
    for n in range(turns):
        put(world.alice, world.agent, user(f"turn {n}"))
        put(world.alice, world.agent, assistant([thought(LONG_THOUGHT), bash(BIG_OUTPUT[: 10_000 * (n % 3 + 1)])]))


def statements_for_page(transcripts: Transcripts, world: World, limit: int) -> list[str]:
    with counted(transcripts.store) as statements:
        page = transcripts.messages(world.alice_id, world.agent, cut=True, limit=limit)
    assert len(page["messages"]) == limit
    return statements


def test_pages_of_1_and_50_messages_cost_the_same_statements(world: World, transcripts: Transcripts) -> None:
    fill(world, 30)
    one = statements_for_page(transcripts, world, 1)
    fifty = statements_for_page(transcripts, world, 50)
    assert len(one) == len(fifty)
    data = [s for s in fifty if "parts" in s or "messages" in s]
    assert len(data) <= 3  # the conversation, its messages, their parts


def test_a_cut_page_never_selects_a_whole_body(world: World, transcripts: Transcripts) -> None:
    fill(world, 2)
    with counted(transcripts.store) as statements:
        transcripts.messages(world.alice_id, world.agent, cut=True, limit=4)
    part_reads = [s for s in statements if "FROM parts" in s]
    assert len(part_reads) == 1
    assert "coalesce(parts.cut_body, parts.body)" in part_reads[0]
