"""Search over HTTP on both backends: exact offsets, the cut middle, chunk boundaries, replaced
messages, access, the engines' syntax taken literally, paging, and bad input."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from conftest import World
from core_helpers import add_member, assistant, bash, new_id, put, text, thought, tool, user

from foldline import Client, NotFound
from foldline.search.query import chunks_most
from foldline.search.results import MATCHES_MOST
from foldline.service import Transcripts
from foldline.store.chunks import CHUNK

Json = dict[str, Any]


def word() -> str:
    """A word no other test wrote (the stores are shared by the session's tests)."""
    return "w" + uuid.uuid4().hex[:10]


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    """One client per test: making one per request costs more than the request."""
    with httpx.Client(timeout=60) as client:
        yield client


def search(http: httpx.Client, world: World, q: str, token: str | None = None, **params: Any) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token or world.alice_token}"}
    return http.get(f"{world.url}/api/search", params={"q": q, **params}, headers=headers)


def each_match(results: list[Json]) -> list[Json]:
    """Every match of some results, each with its result's place (its own start, end, hidden)."""
    return [{**r, **m} for r in results for m in r["matches"]]


def all_hits(client: Client, q: str, **kw: Any) -> list[Json]:
    hits, cursor = [], None
    while True:
        page = client.search(q, cursor=cursor, **kw)
        hits += page["hits"]
        cursor = page["next"]
        if cursor is None:
            return hits


def test_a_hit_says_exactly_where_the_match_is(world: World) -> None:
    w = word()
    message = put(world.alice, world.agent, user(f"please fix {w.upper()} now"))
    [hit] = world.alice.search(w)["hits"]
    assert hit == {
        "agent_id": world.agent,
        "call": None,
        "message_id": message["id"],
        "part": 0,
        "field": "text",
        "start": 11,
        "end": 11 + len(w),
        "hidden": False,
        "count": 1,
        "more": False,
        "matches": [{"start": 11, "end": 11 + len(w), "hidden": False}],
        "role": "user",
        "tool": None,
        "title": "fix the build",
        "snippet": {"text": f"please fix {w.upper()} now", "start": 11, "end": 11 + len(w),
                    "matches": [{"start": 11, "end": 11 + len(w)}]},
    }  # fmt: skip


def test_head_tail_and_cut_middle_of_an_output_and_a_thought(world: World) -> None:
    w = word()
    size = 3 * CHUNK + 1000
    places = [100, 2048 - len(w) - 1, 2047, size // 2, size - 2048 - 2, size - 2048 + len(w), size - len(w) - 5]
    output = list("." * size)
    for at in places:
        output[at : at + len(w)] = w
    body = "".join(output)
    long_thought = "think " * 1000 + w + " think" * 1000
    message = put(world.alice, world.agent, assistant([thought(long_thought), bash(body), thought(f"short {w}")]))
    results = all_hits(world.alice, w)
    assert [(r["part"], r["count"]) for r in results] == [(2, 1), (1, 7), (0, 1)]  # one result per field
    hits = each_match(results)
    found = {(h["part"], h["start"]): h["hidden"] for h in hits}
    # The head and tail (2048 code points each) show; anything touching the middle is hidden.
    assert found == {
        (0, 6000): True,
        (1, 100): False,
        (1, 2048 - len(w) - 1): False,
        (1, 2047): True,
        (1, size // 2): True,
        (1, size - 2048 - 2): True,
        (1, size - 2048 + len(w)): False,
        (1, size - len(w) - 5): False,
        (2, 6): False,
    }
    for hit in hits:
        assert hit["message_id"] == message["id"] and hit["end"] == hit["start"] + len(w)
    for result in results:  # the snippet is around the first match, and marks it
        snippet = result["snippet"]
        assert snippet["text"][snippet["start"] : snippet["end"]] == w
        assert result["start"] == result["matches"][0]["start"] == min(m["start"] for m in result["matches"])


def test_a_tool_the_panel_does_not_draw_as_text_is_never_hidden(world: World) -> None:
    w = word()
    put(world.alice, world.agent, assistant([tool("Task", "x" * 10_000 + w + "y" * 10_000, input={})]))
    [hit] = world.alice.search(w)["hits"]
    assert (hit["tool"], hit["field"], hit["start"], hit["hidden"]) == ("Task", "output", 10_000, False)


def test_inputs_and_errors_are_searched_as_the_panel_draws_them(world: World) -> None:
    w = word()
    failed = {"type": "tool-bash", "toolCallId": new_id(), "state": "output-error", "input": {"command": f"ls {w}/ü"}}
    failed["errorText"] = f"no such file: {w}"
    put(world.alice, world.agent, assistant([failed]))
    hits = world.alice.search(w)["hits"]
    # Fields are stored input, output, errorText: the later chunk is the newer one.
    assert [(h["field"], h["start"]) for h in hits] == [("errorText", 14), ("input", 19)]
    assert {h["snippet"]["text"] for h in hits} == {'{\n  "command": "ls ' + w + '/ü"\n}', f"no such file: {w}"}


def test_a_match_across_a_chunk_boundary_is_found_once(world: World) -> None:
    w = word()
    shifts = (len(w) // 2, 0, len(w), 1)  # across the boundary, just after, just before, one in
    put(world.alice, world.agent, assistant([bash("a" * (CHUNK - s) + w + "b" * 600) for s in shifts]))
    hits = each_match(all_hits(world.alice, w))
    assert sorted((h["part"], h["start"]) for h in hits) == [(i, CHUNK - s) for i, s in enumerate(shifts)]


def test_every_word_must_match_and_a_phrase_matches_as_written(world: World) -> None:
    a, b = word(), word()
    put(world.alice, world.agent, user(f"{a} and {b}"))
    put(world.alice, world.agent, user(f"{a} alone"))
    [both] = all_hits(world.alice, f"{a} {b}")  # both words in one field: one result with both matches
    assert (both["count"], [m["start"] for m in both["matches"]]) == (2, [0, len(a) + 5])
    assert both["snippet"]["matches"] == [{"start": 0, "end": len(a)}, {"start": len(a) + 5, "end": 2 * len(a) + 5}]
    assert len(all_hits(world.alice, a)) == 2
    assert [h["start"] for h in all_hits(world.alice, f'"{a} AND {b}"')] == [0]
    assert all_hits(world.alice, f'"{b} and {a}"') == []


def test_a_replaced_message_leaves_no_stale_hit(world: World) -> None:
    old, new = word(), word()
    message_id = new_id()
    put(world.alice, world.agent, assistant([bash(old * 5000)], message_id))
    assert world.alice.search(old, limit=1)["hits"]
    put(world.alice, world.agent, assistant([text(f"now {new}")], message_id))
    assert world.alice.search(old)["hits"] == []
    assert [h["start"] for h in world.alice.search(new)["hits"]] == [4]


def test_newest_first_and_paging_without_repeats_or_gaps(world: World) -> None:
    w = word()
    for n in range(7):
        put(world.alice, world.agent, user(" ".join(f"{w}-{n}-{k}" for k in range(5))))
    results = all_hits(world.alice, w, limit=3)
    assert [r["count"] for r in results] == [5] * 7  # one result per message's text
    hits = each_match(results)
    keys = [(h["message_id"], h["start"]) for h in hits]
    assert len(keys) == 35 == len(set(keys))
    snippet = results[0]["snippet"]
    assert [snippet["text"][m["start"] : m["end"] + 4] for m in snippet["matches"]] == [f"{w}-6-{k}" for k in range(5)]
    assert keys == [(h["message_id"], h["start"]) for h in each_match(world.alice.search(w, limit=100)["hits"])]


# One world per test keeps these quick; each case names itself in its assertion.
NEEDLES = ['say"hi', 'x"', "a*b", "NEAR(x", "x OR y", "col:umn", "f(x)", "100%", "a_b", "C:\\dir\\"]
NEEDLES += ['"', "*", "(", "%", "_", "\\", ":"]
ENGINE_SYNTAX = ["NEAR(a b)", "a OR b", "col:val", '"unclosed', '""', "*", "^x", "a -b", "(((", "\\%_", "{x}", "a+b"]
ODD_UNICODE = ["🙂", "e\u0301", "日本語", "\u202e", "\u2028x", "\ufeff", "ﬁ", "ß", "İ", "\U0010fffd", "🏳️‍🌈", "x" * 244]


def test_the_engines_syntax_is_taken_literally(http: httpx.Client, world: World) -> None:
    for needle in NEEDLES:
        w = word()
        wild = needle != needle.replace("%", "").replace("_", "")
        decoy = needle.replace("%", "x").replace("_", "y") if wild else "zz"  # % and _ are no wildcards
        put(world.alice, world.agent, user(f"{w} 1 {needle} 2 {decoy}"))
        query = f"{w} {needle}" if " " not in needle else f'{w} "{needle}"'
        response = search(http, world, query)
        assert response.status_code == 200, (needle, response.text)
        assert [h["start"] for h in each_match(response.json()["hits"])] == [0, len(w) + 3], needle


def test_no_query_fails(http: httpx.Client, world: World) -> None:
    for q in ENGINE_SYNTAX:
        cursor = None
        while True:  # a page may end early on a loaded machine (partial, with its next): followed to the end
            response = search(http, world, q, **({"cursor": cursor} if cursor else {}))
            assert response.status_code == 200, q
            page = response.json()
            assert page["hits"] == [], q
            if (cursor := page["next"]) is None:
                assert page["partial"] is False, q
                break


def test_odd_unicode_never_fails(http: httpx.Client, world: World) -> None:
    for q in ODD_UNICODE:
        w = word()
        put(world.alice, world.agent, user(f"{w} {q}"))
        response = search(http, world, f"{w} {q}")
        assert response.status_code == 200, (q, response.text)
        starts = [h["start"] for h in each_match(response.json()["hits"])]
        assert starts[1:] == [len(w) + 1 + len(q) - len(q.lstrip())], q


def test_case_is_ignored_beyond_ascii(world: World) -> None:
    w = word()
    put(world.alice, world.agent, user(f"{w} ÉCOLE Ωμέγα"))
    assert [h["start"] for h in each_match(all_hits(world.alice, f"{w} école ωΜΈΓΑ"))] == [0, len(w) + 1, len(w) + 7]


def test_short_words_are_found_too(world: World) -> None:
    w = word()
    put(world.alice, world.agent, user(f"{w} go to é"))
    assert [h["start"] for h in each_match(all_hits(world.alice, f"{w} GO É"))] == [0, len(w) + 1, len(w) + 7]
    assert [h["end"] - h["start"] for h in each_match(all_hits(world.alice, f"{w} o"))] == [len(w), 1, 1]


def test_subagent_hits_carry_their_call_and_agent_narrows(world: World) -> None:
    w = word()
    put(world.alice, world.agent, user(f"parent {w}"))
    put(world.alice, world.agent, user(f"worker {w}"), call="toolu_9")
    other = world.alice.create_agent(world.workspace, title="other")
    put(world.alice, other["id"], user(f"other {w}"))
    hits = all_hits(world.alice, w, agent=world.agent)
    assert [(h["call"], h["title"]) for h in hits] == [("toolu_9", "fix the build"), (None, "fix the build")]
    assert {h["agent_id"] for h in hits} == {world.agent}
    assert len(all_hits(world.alice, w)) == 3
    assert len(all_hits(world.alice, w, workspace_id=world.workspace)) == 3


def test_a_hit_in_a_workspace_the_caller_is_not_in_never_exists(world: World, transcripts: Transcripts) -> None:
    w = word()
    put(world.alice, world.agent, user(f"secret {w}"))
    assert world.bob.search(w)["hits"] == []
    carol = add_member(transcripts, world.workspace, "carol")
    with Client(world.url, carol["token"]) as client:
        assert len(client.search(w)["hits"]) == 1


def test_a_foreign_or_malformed_workspace_or_agent_is_the_one_not_found(http: httpx.Client, world: World) -> None:
    for param, foreign in (("workspace_id", world.workspace), ("agent", world.agent)):
        for value in (foreign, "not-a-uuid", "00000000-0000-0000-0000-000000000000", "' or 1=1 --", foreign.upper()):
            response = search(http, world, "anything", token=world.bob_token, **{param: value})
            assert response.status_code == 404, (param, value)
            assert response.json() == {"error": {"code": "not_found", "message": "not found"}}
        with pytest.raises(NotFound):
            world.bob.search("anything", **{param: foreign})


def test_no_token_is_401(world: World) -> None:
    assert httpx.get(f"{world.url}/api/search", params={"q": "x"}).status_code == 401


BAD_INPUT = [
    ({"q": ""}, "q"),
    ({"q": "   \t "}, "q"),
    ({}, "q"),
    ({"q": "x" * 257}, "q"),
    ({"q": "a\x00b"}, "q"),
    ({"q": "x", "limit": "0"}, "limit"),
    ({"q": "x", "limit": "101"}, "limit"),
    ({"q": "x", "limit": "ten"}, "limit"),
    ({"q": "x", "limit": "-1"}, "limit"),
    ({"q": "x", "limit": ""}, "limit"),
    ({"q": "x", "cursor": "nope"}, "cursor"),
    ({"q": "x", "cursor": ""}, "cursor"),
    ({"q": "x", "cursor": "MTIz"}, "cursor"),
    ({"q": "x", "cursor": "é"}, "cursor"),
    ({"q": "x", "cursor": "=" * 80}, "cursor"),
]


def test_bad_input_is_a_400_with_where(http: httpx.Client, world: World) -> None:
    for params, where in BAD_INPUT:
        response = http.get(
            f"{world.url}/api/search", params=params, headers={"Authorization": f"Bearer {world.alice_token}"}
        )
        assert response.status_code == 400, (params, response.text)
        assert response.json()["error"]["where"] == where, params


def test_a_query_string_that_is_not_utf8_is_not_a_500(world: World) -> None:
    response = httpx.get(
        f"{world.url}/api/search?q=%ff%fe%ed%a0%80", headers={"Authorization": f"Bearer {world.alice_token}"}
    )
    assert response.status_code in (200, 400)


def test_a_turn_ends_outcome_is_searchable(world: World) -> None:
    w = word()
    open_tool = {"type": "tool-bash", "toolCallId": new_id(), "state": "input-available", "input": {"command": w}}
    put(world.alice, world.agent, assistant([open_tool]))
    world.alice.end_turn(world.agent)
    assert [h["field"] for h in all_hits(world.alice, w)] == ["input"]
    hits = all_hits(world.alice, '"the turn ended before this tool returned"', agent=world.agent)
    assert [(h["field"], h["start"]) for h in hits] == [("errorText", 0)]
    # Words must meet in one field: the input's word and the error's words never make a hit together.
    assert all_hits(world.alice, f"{w} ended", agent=world.agent) == []


def test_a_page_reads_a_bounded_share_of_a_long_field_and_goes_on_in_the_next(world: World) -> None:
    w = word()
    chunks = 7  # a match at the start of each chunk: more chunks than a page of limit=2 reads (3)
    big = "".join(w + "." * (CHUNK - len(w) - 1) + "\n" for _ in range(chunks))
    message = put(world.alice, world.agent, assistant([bash(big)]))
    first = world.alice.search(w, limit=2)
    [output] = first["hits"]  # the page ends inside the field, the count so far and more to come
    assert (output["count"], output["more"]) == (chunks_most(2), True) and first["next"] is not None
    results, cursor = list(first["hits"]), first["next"]
    while cursor is not None:
        page = world.alice.search(w, limit=2, cursor=cursor)
        results += page["hits"]
        cursor = page["next"]
    assert [r["count"] for r in results] == [3, 3, 1] and [r["more"] for r in results] == [True, True, False]
    assert {r["message_id"] for r in results} == {message["id"]}
    starts = [m["start"] for m in each_match(results)]  # every match once, none skipped
    assert sorted(starts) == [n * CHUNK for n in range(chunks)] and len(set(starts)) == chunks


def test_a_field_with_many_matches_is_one_result_paged_per_match(world: World) -> None:
    w = word()
    rest = MATCHES_MOST // 2 + 3  # fewer than a result lists
    count = 2 * MATCHES_MOST + rest
    big = "".join(f"{w} line {n}\n" for n in range(count))  # more matches than one result lists
    message = put(world.alice, world.agent, assistant([bash(big), text(f"then {w}")]))
    first = world.alice.search(w, limit=2)
    [text_result, output] = first["hits"]
    assert (text_result["field"], text_result["count"], text_result["more"]) == ("text", 1, False)
    assert (output["field"], output["count"], output["more"]) == ("output", MATCHES_MOST, True)
    results, cursor = list(first["hits"]), first["next"]
    while cursor is not None:  # the same field goes on, a match at a time: none repeated or skipped
        page = world.alice.search(w, limit=2, cursor=cursor)
        results += page["hits"]
        cursor = page["next"]
    outputs = [r for r in results if r["field"] == "output"]
    assert [r["count"] for r in outputs] == [MATCHES_MOST, MATCHES_MOST, rest]
    assert [r["more"] for r in outputs] == [True, True, False]
    starts = [m["start"] for m in each_match(outputs)]
    assert len(starts) == count == len(set(starts)) and all(r["message_id"] == message["id"] for r in outputs)
    assert sorted(starts) == [big.index(f"{w} line {n}\n") for n in range(count)]
