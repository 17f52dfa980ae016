"""The agents list (``GET /api/agents``): what it shows of each agent, sorted, filtered, paged,
and only to members; on SQLite and PostgreSQL, over HTTP in process.

What an imported agent should show is worked out here from the raw log lines, not by the importer.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from conftest import World
from core_helpers import assistant, new_id, text, user

from foldline import BadRequest, NotFound
from foldline.importers import import_paths
from foldline.service import Transcripts

DATA = Path(__file__).parent / "data" / "transcripts"
CLAUDE_FILES = [
    DATA / "claude-code" / "d-kimuson__claude-code-viewer" / "fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl",
    DATA / "claude-code" / "jnarowski__agentcmd" / "full-session.jsonl",
    DATA / "claude-code" / "codemie-ai__codemie-code" / "session-3fe1b6bc.jsonl",
]
CODEX_FILES = [
    DATA / "codex" / "jnarowski__agentcmd" / "rollout-2025-09-24T19-22-20-01997e76-d124-7592-9cac-2ec05abbca08.jsonl",
    DATA
    / "codex"
    / "AcidicSoil__codex-session-view"
    / "rollout-2025-11-17T15-30-28-019a93b9-f380-7600-98ff-940e6b99603c.jsonl",
]
Json = dict[str, Any]


def lines(path: Path) -> Iterator[Json]:
    for raw in path.read_bytes().splitlines():
        if raw.strip():
            yield orjson.loads(raw)


def claude_expected(path: Path) -> Json:
    """Where a Claude Code session ran, by its own main (not sidechain) lines: the last folder and
    branch they name, and the model of the last assistant line."""
    found: Json = {"source": "claude-code", "project": None, "branch": None, "model": None}
    for d in lines(path):
        if d.get("isSidechain") or d.get("type") not in ("user", "assistant", "system"):
            continue
        found["project"] = d.get("cwd") or found["project"]
        found["branch"] = d.get("gitBranch") or found["branch"]
        model = (d.get("message") or {}).get("model") if d.get("type") == "assistant" else None
        if isinstance(model, str) and not model.startswith("<"):
            found["model"] = model
    return found


def codex_expected(path: Path) -> Json:
    """A Codex rollout's folder (its session_meta's, then each turn_context's), git branch
    (session_meta) and model (the last turn_context's)."""
    found: Json = {"source": "codex", "project": None, "branch": None, "model": None}
    for d in lines(path):
        p = d.get("payload") or {}
        if d.get("type") == "session_meta":
            found["project"] = p.get("cwd")
            found["branch"] = (p.get("git") or {}).get("branch")
        elif d.get("type") == "turn_context":
            found["project"] = p.get("cwd") or found["project"]
            found["model"] = p.get("model") or found["model"]
    return found


def message_count(t: Transcripts, account: str, agent: Json) -> int:
    """Messages of the agent and of each of its subagents, as a whole read returns them."""
    count = len(t.messages(account, agent["id"])["messages"])
    for call in agent["subagents"]:
        count += len(t.messages(account, agent["id"], call=call)["messages"])
    return count


@pytest.fixture
def imported(world: World, transcripts: Transcripts) -> Iterator[list[tuple[Path, str, Json]]]:
    """Each sample session imported alone into a workspace of alice's: (file, workspace, expected)."""
    out = []
    for path in [*CLAUDE_FILES, *CODEX_FILES]:
        workspace = transcripts.create_workspace(path.stem[:30], [world.alice_id])["id"]
        import_paths(transcripts, [path], account_id=world.alice_id, workspace_id=workspace)
        out.append((path, workspace, claude_expected(path) if "claude-code" in path.parts else codex_expected(path)))
    yield out


def test_an_imported_session_is_listed_with_where_it_ran_and_its_totals(
    world: World, transcripts: Transcripts, imported: list[tuple[Path, str, Json]]
) -> None:
    for path, workspace, expected in imported:
        page = world.alice.agents_page(workspace)
        assert len(page["agents"]) == 1, path
        (listed,) = page["agents"]
        assert {k: listed[k] for k in expected} == expected, path
        assert listed["messages"] == message_count(transcripts, world.alice_id, world.alice.agent(listed["id"]))
        assert listed["messages"] > 0
        assert listed["live"] is False  # the samples are months old, whatever the file's time
        assert page["next"] is None
        assert page["prices"]["source"] == "genai-prices" and page["prices"]["version"]
        assert page["facets"]["sources"] == [{"value": expected["source"], "agents": 1}]
        assert page["facets"]["projects"] == [{"value": expected["project"], "agents": 1}]
        assert world.alice.agent(listed["id"])["project"] == expected["project"]


def test_an_api_agent_counts_its_messages_and_subagents_and_is_live(world: World) -> None:
    agent = world.agent
    world.alice.put_message(agent, user("go"))
    reply = assistant([text("ok")])
    world.alice.put_message(agent, reply)
    world.alice.put_message(agent, reply)  # a rewrite is not a new message
    world.alice.put_message(agent, user("in a subagent"), call="call-1")
    (listed,) = world.alice.agents_page(world.workspace)["agents"]
    assert listed["source"] == "api" and listed["live"] is True
    assert listed["messages"] == 3
    assert (listed["project"], listed["branch"], listed["model"]) == (None, None, None)
    assert listed["usage"] == {"input_tokens": 0, "output_tokens": 0, "cache_read_tokens": 0,
                               "cache_write_tokens": 0, "total_tokens": 0, "cost_usd": 0.0,
                               "priced_cost_usd": 0.0, "unpriced_messages": 0}  # fmt: skip


def test_an_api_writer_says_where_it_ran_in_metadata(world: World) -> None:
    meta = {"cwd": "/srv/app", "gitBranch": "main", "model": "claude-sonnet-4-5"}
    world.alice.put_message(world.agent, {**assistant([text("hi")]), "metadata": meta})
    world.alice.put_message(world.agent, {**user("next"), "metadata": {"cwd": "/srv/app2", "model": "ignored"}})
    listed = world.alice.agent(world.agent)
    assert (listed["project"], listed["branch"], listed["model"]) == ("/srv/app2", "main", "claude-sonnet-4-5")


def many_agents(world: World, n: int) -> list[str]:
    """``n`` agents, the i-th with i messages (and a title that sorts by i), two projects."""
    ids = []
    for i in range(n):
        agent = world.alice.create_agent(world.workspace, title=f"agent {i:02d}")["id"]
        meta = {"cwd": "/p/even" if i % 2 == 0 else "/p/odd"}
        for _ in range(i % 7):
            world.alice.put_message(agent, {**user("x"), "metadata": meta})
        ids.append(agent)
    return ids


def every_page(world: World, limit: int, **filters: str) -> list[Json]:
    seen: list[Json] = []
    cursor = None
    for _ in range(100):
        page = world.alice.agents_page(world.workspace, limit=limit, cursor=cursor, **filters)
        assert len(page["agents"]) <= limit
        assert ("facets" in page) == (cursor is None)
        seen.extend(page["agents"])
        cursor = page["next"]
        if cursor is None:
            return seen
    raise AssertionError("the pages never ended")


@pytest.mark.parametrize("sort", ["activity", "messages", "tokens", "cost", "title"])
@pytest.mark.parametrize("order", [None, "asc"])
def test_pages_cover_every_agent_once_in_order(world: World, sort: str, order: str | None) -> None:
    ids = many_agents(world, 17)
    filters = {"sort": sort, **({"order": order} if order else {})}
    seen = every_page(world, 4, **filters)
    assert sorted(a["id"] for a in seen) == sorted([*ids, world.agent])
    assert len({a["id"] for a in seen}) == len(seen)  # no agent twice
    key = {
        "activity": lambda a: a["updated_at"],
        "messages": lambda a: a["messages"],
        "tokens": lambda a: a["usage"]["total_tokens"],
        "cost": lambda a: a["usage"]["cost_usd"] or 0,
        "title": lambda a: (a["title"] or "").lower(),
    }[sort]
    values = [key(a) for a in seen]
    descending = (order or ("asc" if sort == "title" else "desc")) == "desc"
    assert values == sorted(values, reverse=descending)


def test_filters_by_source_and_project(world: World) -> None:
    ids = many_agents(world, 9)
    odd = every_page(world, 2, project="/p/odd")
    assert {a["id"] for a in odd} == {ids[i] for i in range(9) if i % 2 == 1 and i % 7}
    assert all(a["project"] == "/p/odd" for a in odd)
    assert every_page(world, 50, source="codex") == []
    api = every_page(world, 50, source="api")
    assert {a["id"] for a in api} == {ids[i] for i in range(9) if i % 7}
    facets = world.alice.agents_page(world.workspace)["facets"]
    assert {f["value"]: f["agents"] for f in facets["projects"]} == {"/p/even": 4, "/p/odd": 3, None: 3}
    # the agents that name no folder, as the facets' null counts them
    none = every_page(world, 2, no_project=True)
    assert {a["id"] for a in none} == {ids[0], ids[7], world.agent}
    assert all(a["project"] is None for a in none)
    assert every_page(world, 50, no_project=True, source="codex") == []
    assert len(every_page(world, 50, no_project=False)) == 10


def test_another_account_sees_nothing(world: World) -> None:
    many_agents(world, 3)
    with pytest.raises(NotFound):
        world.bob.agents_page(world.workspace)
    with pytest.raises(NotFound):
        world.bob.agents_page(world.workspace, sort="cost", source="api", project="/p/odd")
    # bad parameters on a foreign workspace say nothing of it either: checked first, the same 400
    with pytest.raises(BadRequest):
        world.bob.agents_page(world.workspace, sort="nope")


@pytest.mark.parametrize(
    ("params", "where"),
    [
        ({"sort": "nope"}, "sort"),
        ({"order": "up"}, "order"),
        ({"source": "nope"}, "source"),
        ({"limit": "0"}, "limit"),
        ({"limit": "201"}, "limit"),
        ({"limit": "ten"}, "limit"),
        ({"limit": "-1"}, "limit"),
        ({"cursor": "!!"}, "cursor"),
        ({"cursor": "W10"}, "cursor"),  # [] in base64
        ({"project": ""}, "project"),
        ({"project": "a\x00b"}, "project"),
        ({"no_project": "yes"}, "no_project"),
        ({"no_project": "true", "project": "/p/odd"}, "no_project"),
    ],
)
def test_bad_parameters_are_a_400_naming_them(world: World, params: Json, where: str) -> None:
    answer = world.http.get(
        "/api/agents", params={"workspace_id": world.workspace, **params},
        headers={"Authorization": f"Bearer {world.alice_token}"},
    )  # fmt: skip
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"]["where"] == where


def test_a_cursor_of_another_sort_is_refused(world: World) -> None:
    many_agents(world, 5)
    first = world.alice.agents_page(world.workspace, limit=2, sort="messages")
    assert first["next"]
    with pytest.raises(BadRequest) as refused:
        world.alice.agents_page(world.workspace, limit=2, sort="title", cursor=first["next"])
    assert refused.value.where == "cursor"
    with pytest.raises(BadRequest):
        world.alice.agents_page(world.workspace, limit=2, sort="messages", order="asc", cursor=first["next"])


def test_every_agent_still_comes_through_the_client(world: World) -> None:
    ids = many_agents(world, 5)
    assert {a["id"] for a in world.alice.agents(world.workspace)} == {*ids, world.agent}
    assert new_id() not in {a["id"] for a in world.alice.agents(world.workspace, source="api")}


def test_titles_beyond_ascii_page_without_repeats(world: World) -> None:
    titles = ["Ärger", "äpfel", "Zebra", "émile", "Émile", "ñu", "apple", "Ωmega", "ωmega", "日本", None, ""]
    ids = {world.alice.create_agent(world.workspace, **({"title": t} if t is not None else {}))["id"] for t in titles}
    for order in ("asc", "desc"):
        seen = every_page(world, 2, sort="title", order=order)
        assert sorted(a["id"] for a in seen) == sorted([*ids, world.agent])


def test_odd_facts_are_stored_safely(world: World) -> None:
    meta = {"cwd": "a\x00b", "gitBranch": "b" * 10_000, "model": "m\x00", "usage": {"inputTokens": 1}}
    world.alice.put_message(world.agent, {**assistant([text("x")]), "metadata": meta})
    long_model = {"model": "x" * 5000, "usage": {"inputTokens": 2}}
    world.alice.put_message(world.agent, {**assistant([text("y")]), "metadata": long_model})
    listed = world.alice.agent(world.agent)
    assert listed["project"] is None and listed["branch"] == "b" * 256 and listed["model"] == "x" * 256
    assert listed["usage"]["input_tokens"] == 3 and listed["usage"]["cost_usd"] is None
    assert {m["model"] for m in listed["usage_by_model"]} == {None, "x" * 256}


def test_facets_are_counted_once_a_moment_and_a_write_shows_in_them(
    fresh_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The facets are two GROUP BYs over every agent of a workspace: a count is kept a moment
    # (FACETS_SECONDS) for the pages asked meanwhile, forgotten at once by a write this process
    # makes, and shown within that moment when another process (here another service on the
    # same store) writes.
    from foldline.service import agents as agents_module
    from foldline.settings import Settings
    from foldline.store import open_store

    monkeypatch.setattr(agents_module, "FACETS_SECONDS", 0.5)
    here = Transcripts(open_store(fresh_url), settings=Settings(db=fresh_url))
    there = Transcripts(open_store(fresh_url), settings=Settings(db=fresh_url))
    try:
        me = here.create_account("facets")["id"]
        space = here.create_workspace("facets", [me])["id"]
        counted: list[str] = []
        agent_facets = here._store.agent_facets
        monkeypatch.setattr(here._store, "agent_facets", lambda w: counted.append(w) or agent_facets(w))

        def projects() -> dict[str | None, int]:
            return {f["value"]: f["agents"] for f in here.list_agents(me, space)["facets"]["projects"]}

        def say(t: Transcripts, agent: str, cwd: str) -> None:
            message_id = new_id()
            t.put_message(me, agent, message_id, {**user("x", message_id), "metadata": {"cwd": cwd}})

        mine = here.create_agent(me, space)["id"]
        say(here, mine, "/p/here")
        assert projects() == {"/p/here": 1} and projects() == {"/p/here": 1} and len(counted) == 1
        say(here, mine, "/p/moved")
        assert projects() == {"/p/moved": 1} and len(counted) == 2  # this process's write: at once
        theirs = there.create_agent(me, space)["id"]
        say(there, theirs, "/p/there")
        time.sleep(0.6)
        assert projects() == {"/p/moved": 1, "/p/there": 1}  # another process's: within the moment
    finally:
        here.close()
        there.close()
