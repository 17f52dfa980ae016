"""The MCP server over stdio (``foldline mcp`` in a process of its own, as an agent starts it):
who it answers as, and the same tools and access as over HTTP, with the SDK's own client."""

from __future__ import annotations

import functools

import pytest
from conftest import World
from core_helpers import assistant, bash, new_id, put, user
from mcp_clients import over_stdio, run, tool_list
from test_mcp import NOT_FOUND, big_output

pytestmark = pytest.mark.slow  # a real process each time


def test_as_an_account_the_tools_answer_as_over_http(world: World, db_url: str) -> None:
    marker = f"E{new_id()[:8]}"
    message = put(world.alice, world.agent, assistant([bash(big_output(marker))]))
    alice = functools.partial(over_stdio, db_url, ["--account", world.alice_id])
    assert len(tool_list(alice)) == 5
    [found] = run(alice, [("search", {"query": marker})])
    [hit] = found.data["hits"]
    assert (hit["message_id"], hit["hidden"]) == (message["id"], True)
    read, window, agents, usage = run(alice, [
        ("read_part", hit["read_part"]),
        ("read_transcript", {"agent_id": world.agent}),
        ("list_agents", {}),
        ("usage", {"by": "agent"}),
    ])  # fmt: skip
    assert f"ERROR {marker} at step 4711" in read.data["text"]
    assert [m["id"] for m in window.data["messages"]] == [message["id"]]
    assert [a["id"] for a in agents.data["agents"]] == [world.agent]
    assert usage.data["by"] == "agent"


def test_a_foreign_account_sees_nothing(world: World, db_url: str) -> None:
    marker = f"S{new_id()[:8]}"
    message = put(world.alice, world.agent, user(f"secret {marker}"))
    bob = functools.partial(over_stdio, db_url, token=world.bob_token)  # FOLDLINE_TOKEN names bob
    found, window, part, agents = run(bob, [
        ("search", {"query": marker}),
        ("read_transcript", {"agent_id": world.agent}),
        ("read_part", {"agent_id": world.agent, "message_id": message["id"], "part": 0}),
        ("list_agents", {"workspace_id": world.workspace}),
    ])  # fmt: skip
    assert found.data["hits"] == []
    assert [window.error, part.error, agents.error] == [NOT_FOUND] * 3


def test_without_an_account_the_local_one(fresh_url: str) -> None:
    [agents] = run(functools.partial(over_stdio, fresh_url), [("list_agents", {})])
    assert [w["name"] for w in agents.data["workspaces"]] == ["local"]
    assert agents.data["agents"] == []
