"""The seed's page test in our terms: big outputs and long thoughts travel by reference on a cut read."""

from __future__ import annotations

import json
from typing import Any

from conftest import World
from core_helpers import BIG_OUTPUT, LONG_THOUGHT, assistant, bash, put, text, thought, tool, user

Json = dict[str, Any]


def only(page: Json) -> Json:
    assert len(page["messages"]) == 1
    message: Json = page["messages"][0]
    return message


def write_seed_page(world: World) -> Json:
    put(world.alice, world.agent, user("build it"))
    answer = "the worker says: " + "all done. " * 1000
    return put(
        world.alice,
        world.agent,
        assistant([thought(LONG_THOUGHT), bash(BIG_OUTPUT), tool("read_agent", answer, input={}), text("done")]),
    )


def test_a_cut_page_carries_the_cut_output_and_thought_with_sizes_and_indexes(world: World) -> None:
    written = write_seed_page(world)
    page = world.alice.messages(world.agent, cut=True)
    message = page["messages"][1]
    assert message["id"] == written["id"]
    refs = {ref["index"]: ref for ref in message["cutParts"]}
    assert set(refs) == {0, 1}
    assert refs[0] == {
        "index": 0,
        "field": "text",
        "bytes": len(LONG_THOUGHT.encode()),
        "head": LONG_THOUGHT[:2048],
        "tail": LONG_THOUGHT[-2048:],
    }
    assert refs[1]["field"] == "output" and refs[1]["bytes"] == len(BIG_OUTPUT.encode()) > 2_000_000
    assert refs[1]["head"] == BIG_OUTPUT[:2048] and refs[1]["tail"] == BIG_OUTPUT[-2048:]
    thought_part, bash_part, agent_part, text_part = message["parts"]
    assert "text" not in thought_part and thought_part["type"] == "reasoning"
    assert "output" not in bash_part and bash_part["input"] == {"command": "make test"}
    assert agent_part == written["parts"][2]  # a long read_agent answer is sent whole
    assert text_part == written["parts"][3]


def test_a_cut_page_weighs_kilobytes(world: World) -> None:
    write_seed_page(world)
    headers = {"Authorization": f"Bearer {world.alice_token}"}
    url = f"/api/agents/{world.agent}/messages"
    cut = world.http.get(url, params={"parts": "cut"}, headers=headers)
    whole = world.http.get(url, headers=headers)
    assert len(cut.content) < 40_000 < 2_000_000 < len(whole.content)


def test_a_read_without_parts_cut_gets_whole_parts(world: World) -> None:
    written = write_seed_page(world)
    message = world.alice.messages(world.agent)["messages"][1]
    assert message["parts"] == written["parts"]
    assert "cutParts" not in message


def test_parts_at_or_under_the_bound_are_sent_whole(world: World) -> None:
    message = put(world.alice, world.agent, assistant([bash("x" * 4096), thought("é" * 4096), bash("short")]))
    read = only(world.alice.messages(world.agent, cut=True))
    assert read["parts"] == message["parts"]
    assert "cutParts" not in read


def test_tools_not_drawn_as_text_are_sent_whole(world: World) -> None:
    long = "y" * 10_000
    parts = [
        tool("start_agent", {"summary": long}, input={"prompt": "go"}),
        tool("Edit", long, input={"file_path": "a.py"}),
        {"type": "dynamic-tool", "toolName": "my_own_tool", "toolCallId": "c1", "state": "output-available",
         "input": {}, "output": long},
    ]
    message = put(world.alice, world.agent, assistant(parts))
    read = only(world.alice.messages(world.agent, cut=True))
    assert read["parts"] == message["parts"]


def test_error_text_of_a_text_tool_is_cut(world: World) -> None:
    error = "segfault\n" * 1000
    part = {"type": "tool-bash", "toolCallId": "c1", "state": "output-error", "input": {"command": "x"},
            "errorText": error}
    put(world.alice, world.agent, assistant([part]))
    read = only(world.alice.messages(world.agent, cut=True))
    assert "errorText" not in read["parts"][0]
    assert read["cutParts"] == [{"index": 0, "field": "errorText", "bytes": len(error), "head": error[:2048],
                                 "tail": error[-2048:]}]


def test_dynamic_mcp_and_connection_tools_are_cut(world: World) -> None:
    long = "row\n" * 3000
    parts = [
        {"type": "dynamic-tool", "toolName": name, "toolCallId": f"c{i}", "state": "output-available",
         "input": {}, "output": long}
        for i, name in enumerate(["mcp__github__search", "connection_drive"])
    ]
    put(world.alice, world.agent, assistant(parts))
    read = only(world.alice.messages(world.agent, cut=True))
    assert [ref["index"] for ref in read["cutParts"]] == [0, 1]
    assert all("output" not in p for p in read["parts"])


def test_a_non_string_output_is_cut_by_its_indented_json_text(world: World) -> None:
    output = {"matches": [{"file": "ü.py", "line": n} for n in range(400)]}
    put(world.alice, world.agent, assistant([tool("grep", output, input={"pattern": "x"})]))
    read = only(world.alice.messages(world.agent, cut=True))
    drawn = json.dumps(output, indent=2, ensure_ascii=False)
    assert read["cutParts"][0]["bytes"] == len(drawn.encode())
    assert read["cutParts"][0]["head"] == drawn[:2048] and read["cutParts"][0]["tail"] == drawn[-2048:]


def test_astral_text_is_cut_by_code_points_and_sized_in_utf8(world: World) -> None:
    long = "🙂" * 5000
    put(world.alice, world.agent, assistant([thought(long)]))
    ref = only(world.alice.messages(world.agent, cut=True))["cutParts"][0]
    assert ref["head"] == "🙂" * 2048 and ref["tail"] == "🙂" * 2048 and ref["bytes"] == 20_000
