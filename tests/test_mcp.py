"""The MCP server over streamable HTTP (``/mcp`` on the app): sign-in, the five tools, the same
access as the API, bounded answers and stale cursors, with the SDK's own client."""

from __future__ import annotations

import functools
from typing import Any

import httpx
import pytest
from conftest import World
from core_helpers import add_member, assistant, bash, new_id, put, user
from mcp_clients import over_http, run, tool_list

from foldline.mcp.answers import ANSWER_MAX, HIT_CONTEXT
from foldline.service import Transcripts

NOT_FOUND = {"code": "not_found", "message": "not found"}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}


def http(world: World, token: str) -> Any:
    return functools.partial(over_http, world.url, token)


def big_output(marker: str, size: int = 300_000) -> str:
    """``size`` characters of log lines with ``marker`` on one line in the middle."""
    line = "ok step passed, nothing to see here\n"
    half = line * (size // 2 // len(line))
    return f"{half}ERROR {marker} at step 4711\n{half}"


@pytest.mark.parametrize("header", [None, "Bearer nope", "Basic YWxpY2U6eA=="])
def test_no_or_a_bad_token_is_401(world: World, header: str | None) -> None:
    headers = {"Accept": "application/json, text/event-stream"}
    if header is not None:
        headers["Authorization"] = header
    response = httpx.post(world.url + "/mcp", json=INITIALIZE, headers=headers)
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == "Bearer"
    assert response.json()["error"]["code"] == "unauthorized"


def test_the_five_tools_tell_how_to_reach_a_hits_lines(world: World) -> None:
    tools = {tool.name: tool for tool in tool_list(http(world, world.alice_token))}
    assert sorted(tools) == ["list_agents", "read_part", "read_transcript", "search", "usage"]
    assert "read_part" in (tools["search"].description or "")
    assert tools["read_part"].input_schema["required"] == ["agent_id", "message_id", "part"]


def test_a_hit_to_its_line_in_two_calls(world: World) -> None:
    marker = f"E{new_id()[:8]}"
    message = put(world.alice, world.agent, assistant([bash(big_output(marker))]))
    [found] = run(http(world, world.alice_token), [("search", {"query": marker})])
    [hit] = found.data["hits"]
    assert (hit["message_id"], hit["part"], hit["field"], hit["hidden"]) == (message["id"], 0, "output", True)
    [read] = run(http(world, world.alice_token), [("read_part", hit["read_part"])])
    slice_ = read.data
    assert f"ERROR {marker} at step 4711" in slice_["text"]
    assert slice_["start"] == hit["start"] - HIT_CONTEXT and slice_["end"] == hit["end"] + HIT_CONTEXT
    assert len(found.text) + len(read.text) < 3 * HIT_CONTEXT + 3000


def test_a_transcript_window_is_cut_form_and_pages_back(world: World) -> None:
    first = put(world.alice, world.agent, user("first question"))
    put(world.alice, world.agent, assistant([bash(big_output("x"))]))
    last = put(world.alice, world.agent, user("last question"))
    [newest] = run(http(world, world.alice_token), [("read_transcript", {"agent_id": world.agent, "limit": 2})])
    page = newest.data
    assert [m["id"] for m in page["messages"]][-1] == last["id"]
    assert page["messages"][0]["cutParts"]  # the big output is sent cut
    assert len(newest.text) < 20_000
    [older] = run(http(world, world.alice_token),
                  [("read_transcript", {"agent_id": world.agent, "before": page["next"]})])  # fmt: skip
    assert [m["id"] for m in older.data["messages"]] == [first["id"]]
    assert older.data["next"] is None


def test_a_cursor_on_a_changed_transcript_says_so(world: World) -> None:
    put(world.alice, world.agent, user("one"))
    put(world.alice, world.agent, user("two"))
    session = http(world, world.alice_token)
    [window] = run(session, [("read_transcript", {"agent_id": world.agent, "limit": 1})])
    put(world.alice, world.agent, user("three"))
    [again] = run(session, [("read_transcript", {"agent_id": world.agent, "before": window.data["next"]})])
    assert again.error is not None
    assert (again.error["code"], again.error["where"]) == ("conflict", "before")
    assert "changed" in again.error["message"]


def test_every_answer_is_bounded_and_says_how_to_read_on(world: World) -> None:
    for _ in range(3):  # each message near the bound: a window of all of them cannot fit
        put(world.alice, world.agent, assistant([{"type": "text", "text": "w" * (ANSWER_MAX // 2)}]))
    big = put(world.alice, world.agent, assistant([bash(big_output("y", 200_000))]))
    answers = run(http(world, world.alice_token), [
        ("read_transcript", {"agent_id": world.agent}),
        ("read_part", {"agent_id": world.agent, "message_id": big["id"], "part": 0, "field": "output"}),
        ("read_part", {"agent_id": world.agent, "message_id": big["id"], "part": 0}),
    ])  # fmt: skip
    window, slice_, whole = (answer.data for answer in answers)
    assert all(len(answer.text) <= ANSWER_MAX for answer in answers)
    assert window["cut"] and window["next"] and 0 < len(window["messages"]) < 4
    assert slice_["cut"] is False and slice_["more"]["start"] == slice_["end"] < slice_["length"]
    assert whole["cut"] and whole["lengths"]["output"] > ANSWER_MAX and whole["heads"]["output"]
    [rest] = run(http(world, world.alice_token), [("read_part", {**slice_["more"], "agent_id": world.agent,
                                                                  "message_id": big["id"], "part": 0})])  # fmt: skip
    assert rest.data["start"] == slice_["end"]


def test_bad_arguments_name_where(world: World) -> None:
    answers = run(http(world, world.alice_token), [
        ("search", {"query": "x", "limit": 0}),
        ("read_transcript", {"agent_id": world.agent, "before": "not a cursor"}),
        ("read_part", {"agent_id": world.agent, "message_id": new_id(), "part": 0, "start": 5}),
        ("usage", {"by": "week"}),
    ])  # fmt: skip
    wheres = [answer.error and answer.error.get("where") for answer in answers]
    assert wheres[:3] == ["limit", "before", "field"]
    assert answers[3].error is not None  # refused by the tool's schema before it runs


def test_a_foreign_account_sees_nothing_and_the_same_not_found(world: World, transcripts: Transcripts) -> None:
    marker = f"S{new_id()[:8]}"
    message = put(world.alice, world.agent, user(f"secret {marker}"))
    stranger = new_id()
    carol = add_member(transcripts, world.workspace, "carol")
    asks = [
        ("search", {"query": marker}),
        ("search", {"query": marker, "agent_id": world.agent}),
        ("search", {"query": marker, "workspace_id": world.workspace}),
        ("list_agents", {"workspace_id": world.workspace}),
        ("list_agents", {}),
        ("read_transcript", {"agent_id": world.agent}),
        ("read_part", {"agent_id": world.agent, "message_id": message["id"], "part": 0}),
        ("read_part", {"agent_id": world.agent, "message_id": message["id"], "part": 0, "field": "text"}),
        ("usage", {"by": "agent"}),
    ]
    bob = run(http(world, world.bob_token), asks)
    assert bob[0].data["hits"] == []
    assert [answer.error for answer in bob[1:4]] == [NOT_FOUND] * 3
    assert bob[4].data["agents"] == [] and bob[4].data["workspaces"] == []
    assert [answer.error for answer in bob[5:8]] == [NOT_FOUND] * 3
    assert bob[8].data["rows"] == []
    nobody = run(http(world, world.bob_token), [("read_transcript", {"agent_id": stranger}),
                                                 ("read_part", {"agent_id": stranger, "message_id": message["id"],
                                                                "part": 0})])  # fmt: skip
    assert [answer.text for answer in nobody] == [answer.text for answer in bob[5:7]]
    member = run(http(world, carol["token"]), asks)
    assert [hit["message_id"] for hit in member[0].data["hits"]] == [message["id"]]
    assert [agent["id"] for agent in member[3].data["agents"]] == [world.agent]
    assert member[6].data["part"] == {"type": "text", "text": f"secret {marker}"}
    assert all(answer.error is None for answer in member)
