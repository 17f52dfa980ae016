"""Hostile input at the write door and in addresses: refused with a clear status, nothing stored,
never a 500 — on both backends."""

from __future__ import annotations

from typing import Any

import httpx
import orjson
import pytest
from conftest import World
from core_helpers import assistant, new_id, put, text, user

from foldline import Invalid, NotFound
from foldline.message import MAX_DEPTH, MAX_PARTS
from foldline.service import Transcripts
from foldline.store import Store, StoredPart


def nested(levels: int) -> Any:
    value: Any = "bottom"
    for _ in range(levels):
        value = [value]
    return value


def data_part(levels: int) -> dict[str, Any]:
    return {"type": "data-x", "data": nested(levels)}


def auth(world: World) -> dict[str, str]:
    return {"Authorization": f"Bearer {world.alice_token}"}


@pytest.mark.parametrize("levels", [62, 250, 253, 300, 1000])
def test_a_message_nested_past_the_limit_is_refused_with_400(world: World, levels: int) -> None:
    data = "[" * levels + '"bottom"' + "]" * levels
    body = '{"role": "assistant", "parts": [{"type": "data-x", "data": ' + data + "}]}"
    url = f"{world.url}/api/agents/{world.agent}/messages/{new_id()}"
    response = httpx.put(url, content=body, headers=auth(world))
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "bad_request" and error["where"].startswith("parts[0].data")
    assert world.alice.messages(world.agent)["messages"] == []


def test_a_message_at_the_limit_is_stored_and_read_everywhere(world: World) -> None:
    put(world.alice, world.agent, assistant([data_part(MAX_DEPTH - 3)]))  # message, parts, part, data: the limit
    for cut in (True, False):
        assert len(world.alice.messages(world.agent, cut=cut, limit=5)["messages"]) == 1


def test_a_too_deep_stored_part_never_fails_a_read(world: World, transcripts: Transcripts, store: Store) -> None:
    """A part stored before the limit existed is skipped on read, like any damaged row."""
    conv = transcripts.conversation(world.alice_id, world.agent)
    message_id = new_id()
    head = orjson.dumps({"id": message_id, "role": "assistant"}).decode()
    deep = '{"type": "data-x", "data": ' + "[" * 250 + "1" + "]" * 250 + "}"
    fine = '{"type": "text", "text": "ok"}'
    store.put_message(conv, message_id, "assistant", head, [StoredPart(0, None, deep), StoredPart(1, None, fine)])
    for cut in (True, False):
        (message,) = world.alice.messages(world.agent, cut=cut)["messages"]
        assert message["parts"] == [{"type": "text", "text": "ok"}] and message["skippedParts"] == [0]
    with pytest.raises(NotFound):
        world.alice.part(world.agent, message_id, 0)


def test_too_many_parts_are_refused(world: World) -> None:
    with pytest.raises(Invalid) as refused:
        put(world.alice, world.agent, assistant([text("x")] * (MAX_PARTS + 1)))
    assert refused.value.where == "parts"


@pytest.mark.parametrize("title", ["a\x00b", "bell\x07", "x" * 501, "\x1b[31mred"])
def test_a_title_with_control_characters_or_too_long_is_refused(world: World, title: str) -> None:
    with pytest.raises(Invalid) as refused:
        world.alice.create_agent(world.workspace, title=title)
    assert refused.value.where == "title"


def test_a_title_with_tabs_newlines_and_any_script_is_kept(world: World) -> None:
    title = "fix\tthe build\n修复 构建 🛠"
    assert world.alice.create_agent(world.workspace, title=title)["title"] == title


@pytest.mark.parametrize("name", ["a\x00b", "", "x" * 257, "tab\there", "bad\ufffd"])
def test_a_dynamic_tool_name_must_be_printable(world: World, name: str) -> None:
    part = {"type": "dynamic-tool", "toolName": name, "toolCallId": "c1", "state": "input-available", "input": {}}
    with pytest.raises(Invalid) as refused:
        put(world.alice, world.agent, assistant([part]))
    assert refused.value.where == "parts[0].toolName"


@pytest.mark.parametrize("call", ["a%00b", "%1b%5b31m", "%2E%2E", "%2E", "bad%EF%BF%BD", "x" * 257])
def test_a_call_id_that_is_no_call_id_is_not_found_on_every_route(world: World, call: str) -> None:
    base = f"{world.url}/api/agents/{world.agent}/subagents/{call}"
    body = orjson.dumps(user("hi"))
    answers = [
        httpx.get(f"{base}/messages", headers=auth(world)),
        httpx.put(f"{base}/messages/{new_id()}", content=body, headers=auth(world)),
        httpx.post(f"{base}/turn-end", headers=auth(world)),
    ]
    assert [a.status_code for a in answers] == [404, 404, 404]
    assert world.alice.agent(world.agent)["subagents"] == []


@pytest.mark.parametrize("before", ["2147483648", "99999999999", "-1", "1e3", "٣"])
def test_a_cursor_out_of_range_is_a_400(world: World, before: str) -> None:
    response = httpx.get(f"{world.url}/api/agents/{world.agent}/messages", params={"before": before, "limit": "5"},
                         headers=auth(world))
    assert response.status_code == 400 and response.json()["error"]["where"] == "before"


def test_a_part_index_has_one_spelling(world: World) -> None:
    message = put(world.alice, world.agent, user("hello"))
    assert world.alice.part(world.agent, message["id"], 0) == text("hello")
    for index in ("00", "+0", "0x0", " 0"):
        url = f"{world.url}/api/agents/{world.agent}/messages/{message['id']}/parts/{index}"
        assert httpx.get(url, headers=auth(world)).status_code == 404


def test_a_huge_text_part_is_cut_on_cut_pages_and_whole_on_whole_reads(world: World) -> None:
    pasted = "a pasted log line\n" * 10_000  # 180,000 code points: past the 64 KiB text bound
    message = put(world.alice, world.agent, user(pasted))
    (cut,) = world.alice.messages(world.agent, cut=True)["messages"]
    assert cut["parts"] == [{"type": "text"}]
    (ref,) = cut["cutParts"]
    assert ref["field"] == "text" and ref["bytes"] == len(pasted) and ref["head"] == pasted[:2048]
    assert world.alice.messages(world.agent)["messages"][0]["parts"][0]["text"] == pasted
    assert world.alice.part(world.agent, message["id"], 0)["text"] == pasted


def test_a_long_answer_under_the_text_bound_is_sent_whole(world: World) -> None:
    answer = "word " * 10_000  # 50,000 code points
    put(world.alice, world.agent, assistant([text(answer)]))
    (sent,) = world.alice.messages(world.agent, cut=True)["messages"]
    assert sent["parts"] == [text(answer)] and "cutParts" not in sent
