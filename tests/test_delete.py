"""Deleting an agent (issue 23, item 8): ``DELETE /api/agents/{agent}``, the client, the CLI.

Everything stored of it goes (messages, parts, subagents, search chunks and the engine's index
rows, usage totals, kept pages), on both backends; only the owner may delete; followers are told;
an imported session comes back on re-import unless it was deleted with ``forget``.
"""

from __future__ import annotations

import threading
import uuid
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from click.testing import CliRunner
from conftest import World
from core_helpers import add_member, assistant, bash, caught_up, new_id, put, text, user
from sqlalchemy import func, select

from foldline import Client, Forbidden, NotFound
from foldline import events as events_module
from foldline.cli import main
from foldline.importers import import_paths
from foldline.service import Transcripts
from foldline.settings import Settings
from foldline.store import Store, open_store
from foldline.store.chunks import CHUNK
from foldline.store.schema import conversations, messages, part_text, parts, usage_totals
from foldline.store.terms import fts_query

DATA = Path(__file__).parent / "data" / "transcripts" / "claude-code"
SESSION = DATA / "daaain__claude-code-log" / "-src-deep-manifest"  # a session and its subagent's file
USAGE = {"inputTokens": 1_000, "outputTokens": 50}
Json = dict[str, Any]


def word() -> str:
    return "gone" + uuid.uuid4().hex[:10]


def stored_rows(store: Store, ids: list[str]) -> dict[str, int]:
    """How many rows of each table still belong to the conversations ``ids``."""
    with store.read() as conn:
        counts = {
            table.name: conn.execute(
                select(func.count()).select_from(table).where(table.c.conversation_id.in_(ids))
            ).scalar_one()
            for table in (messages, parts, part_text)
        }
        counts["conversations"] = conn.execute(
            select(func.count()).select_from(conversations).where(conversations.c.id.in_(ids))
        ).scalar_one()
        counts["usage_totals"] = conn.execute(
            select(func.count()).select_from(usage_totals).where(usage_totals.c.agent_id.in_(ids))
        ).scalar_one()
    return counts


def index_rows(store: Store, chunk_ids: list[int], term: str) -> list[int]:
    """The chunk ids among ``chunk_ids`` the engine's own index still holds for ``term``
    (SQLite: FTS5's rows, read without the content table; PostgreSQL: the chunks are gone)."""
    with store.read() as conn:
        if store.engine.dialect.name == "sqlite":
            found = conn.exec_driver_sql(
                "SELECT rowid FROM part_text_fts WHERE part_text_fts MATCH ?", (fts_query([term]),)
            ).scalars()
        else:
            found = conn.execute(select(part_text.c.id).where(part_text.c.text.ilike(f"%{term}%"))).scalars()
        return sorted(set(found) & set(chunk_ids))


def filled_agent(world: World, secret: str) -> None:
    """The world's agent with messages (one with usage, one a big output), a subagent, and a
    page read (kept)."""
    put(world.alice, world.agent, user(f"please find {secret}"))
    big = "build line\n" * (CHUNK // 5)  # several chunks
    put(world.alice, world.agent, assistant([bash(f"{big}{secret}\n{big}")]))
    put(world.alice, world.agent, {**assistant([text("ok")]), "metadata": {"usage": USAGE, "model": "gpt-5"}})
    put(world.alice, world.agent, user(f"worker sees {secret}"), call="call-1")
    world.alice.messages(world.agent, cut=True, limit=10)  # a page kept by the process


@pytest.mark.parametrize("indexed", [True, False], ids=["indexed", "pending"])
def test_the_owner_deletes_an_agent_and_everything_of_it_goes(
    world: World, transcripts: Transcripts, store: Store, indexed: bool
) -> None:
    secret = word()
    filled_agent(world, secret)
    with store.read() as conn:
        subagents = select(conversations.c.id).where(conversations.c.parent_id == world.agent)
        ids = [world.agent, *conn.execute(subagents).scalars()]
        chunk_ids = list(conn.execute(select(part_text.c.id).where(part_text.c.conversation_id.in_(ids))).scalars())
    assert len(ids) == 2 and stored_rows(store, ids)["part_text"] > 2
    if indexed:
        caught_up(store)
        assert index_rows(store, chunk_ids, secret)  # the index holds it before the delete
    assert len(world.alice.search(secret)["hits"]) == 3
    assert world.alice.delete_agent(world.agent) == {
        "id": world.agent, "deleted": True, "subagents": 1, "forgotten": False,
    }  # fmt: skip

    assert stored_rows(store, ids) == dict.fromkeys(("messages", "parts", "part_text", "conversations",
                                                     "usage_totals"), 0)  # fmt: skip
    for read in (
        lambda: world.alice.agent(world.agent),
        lambda: world.alice.messages(world.agent, cut=True, limit=10),  # the kept page is not sent
        lambda: world.alice.messages(world.agent, call="call-1"),
    ):
        with pytest.raises(NotFound):
            read()
    assert world.alice.search(secret)["hits"] == []  # the pending path, and the index's
    assert world.agent not in [a["id"] for a in world.alice.agents(world.workspace)]
    assert all(row["agent"] != world.agent for row in transcripts.usage(world.alice_id, by="agent")["rows"])
    assert transcripts.usage(world.alice_id, by="model", workspace_id=world.workspace)["rows"] == []
    caught_up(store)  # the indexer's next batches: FTS5 is told the rows are gone
    assert index_rows(store, chunk_ids, secret) == []
    assert world.alice.search(secret)["hits"] == []
    if store.engine.dialect.name == "sqlite":
        with store.read() as conn:
            assert conn.exec_driver_sql("SELECT count(*) FROM part_text_unindex").scalar_one() == 0
            conn.exec_driver_sql("INSERT INTO part_text_fts(part_text_fts, rank) VALUES ('integrity-check', 1)")


def test_only_the_owner_deletes_and_a_stranger_learns_nothing(world: World, transcripts: Transcripts) -> None:
    put(world.alice, world.agent, user("mine"))
    member = add_member(transcripts, world.workspace, "carol")
    with world.client(member["token"]) as carol, pytest.raises(Forbidden):
        carol.delete_agent(world.agent)  # a member who is not its owner: 403 (as for every write)
    stranger = world.http.delete(f"/api/agents/{world.agent}", headers={"Authorization": f"Bearer {world.bob_token}"})
    nowhere = world.http.delete(f"/api/agents/{new_id()}", headers={"Authorization": f"Bearer {world.bob_token}"})
    garbage = world.http.delete("/api/agents/not-a-uuid", headers={"Authorization": f"Bearer {world.bob_token}"})
    assert stranger.status_code == nowhere.status_code == garbage.status_code == 404
    assert stranger.content == nowhere.content == garbage.content  # one not-found: nothing to tell apart
    assert world.http.delete(f"/api/agents/{world.agent}").status_code == 401
    alice = {"Authorization": f"Bearer {world.alice_token}"}
    refused = world.http.delete(f"/api/agents/{world.agent}", params={"forget": "maybe"}, headers=alice)
    assert refused.status_code == 400 and refused.json()["error"]["where"] == "forget"
    assert len(world.alice.messages(world.agent)["messages"]) == 1  # nothing was deleted
    world.alice.delete_agent(world.agent)
    with pytest.raises(NotFound):
        world.alice.delete_agent(world.agent)  # twice: the second finds nothing


def test_a_follower_is_told_and_its_stream_ends(world: World) -> None:
    put(world.alice, world.agent, user("followed"))
    put(world.alice, world.agent, user("worker"), call="call-9")
    seen: dict[str, Any] = {}
    opened = {call: threading.Event() for call in (None, "call-9")}

    def follow(call: str | None) -> None:
        with Client(world.url, world.alice_token) as live, live.events(world.agent, call=call, since=0) as events:
            opened[call].set()  # its stream is open (a follower that came after the delete is a 404)
            seen[f"messages {call}"] = len(list(events))  # the iteration ends: the stream ended
            seen[f"deleted {call}"] = events.deleted

    threads = [threading.Thread(target=follow, args=(call,)) for call in opened]
    for thread in threads:
        thread.start()
    assert all(event.wait(30) for event in opened.values())
    with httpx.Client(base_url=world.url, timeout=30) as raw, raw.stream(
        "GET", f"/api/agents/{world.agent}/events", params={"since": 1},
        headers={"Authorization": f"Bearer {world.alice_token}"},
    ) as response:  # fmt: skip
        lines = response.iter_lines()
        assert next(lines).startswith("retry:")
        world.alice.delete_agent(world.agent)  # in process: the server learns it from the store
        rest = list(lines)  # ends: the server closed it
    for thread in threads:
        thread.join(30)
    assert "event: deleted" in rest
    assert f'data: {{"agent_id":"{world.agent}","call":null}}' in rest
    assert seen == {"messages None": 1, "deleted None": True, "messages call-9": 1, "deleted call-9": True}


@pytest.fixture
def team(transcripts: Transcripts) -> tuple[str, str]:
    account = transcripts.create_account("importer")["id"]
    return account, transcripts.create_workspace("imports", [account])["id"]


def imported(transcripts: Transcripts, account: str, workspace: str) -> Any:
    return import_paths(transcripts, [SESSION], account_id=account, workspace_id=workspace)


def shown(transcripts: Transcripts, account: str, agent: str) -> list[Any]:
    """The agent's messages as read: ids, roles and parts (the times a write stamps aside)."""
    page = orjson.loads(transcripts.page_json(account, agent, cut=True))
    return [(m["id"], m["role"], m["parts"]) for m in page["messages"]]


def test_a_deleted_session_comes_back_on_reimport_unless_forgotten(
    transcripts: Transcripts, team: tuple[str, str]
) -> None:
    account, workspace = team
    first = imported(transcripts, account, workspace)
    assert first.agents == 1
    [agent] = transcripts.list_agents(account, workspace)["agents"]
    before = shown(transcripts, account, agent["id"])
    calls = transcripts.agent(account, agent["id"])["subagents"]
    assert len(calls) == 1
    assert imported(transcripts, account, workspace).unchanged == 1

    transcripts.delete_agent(account, agent["id"])
    again = imported(transcripts, account, workspace)  # not excluded: it comes back, whole
    assert (again.agents, again.messages) == (1, first.messages)
    assert shown(transcripts, account, agent["id"]) == before
    assert transcripts.agent(account, agent["id"])["subagents"] == calls

    assert transcripts.delete_agent(account, agent["id"], forget=True)["forgotten"] is True
    passed = imported(transcripts, account, workspace)
    assert (passed.agents, passed.messages, passed.forgotten) == (0, 0, 1)
    assert "1 deleted sessions passed over" in passed.line()
    assert transcripts.list_agents(account, workspace)["agents"] == []
    with pytest.raises(NotFound):
        transcripts.agent(account, agent["id"])


def test_agent_delete_on_the_command_line(tmp_path: Path) -> None:
    db = str(tmp_path / "foldline.db")
    runner = CliRunner()
    assert runner.invoke(main, ["import", str(SESSION), "--db", db]).exit_code == 0
    with Transcripts.open(Settings(db=db)) as t:
        account = t.accounts_named("local")[0]
        workspace = t.me(account)["workspaces"][0]["id"]
        [agent] = t.list_agents(account, workspace)["agents"]
    done = runner.invoke(main, ["agent", "delete", agent["id"], "--forget", "--db", db])
    assert done.exit_code == 0, done.output
    assert done.output.startswith(f"deleted agent {agent['id']} and 1 subagents; imports pass its session over")
    again = runner.invoke(main, ["import", str(SESSION), "--db", db, "--json"])
    assert again.exit_code == 0 and '"forgotten": 1' in again.output.replace('":1', '": 1')
    missing = runner.invoke(main, ["agent", "delete", agent["id"], "--db", db])
    assert missing.exit_code == 1 and "not found" in missing.output.lower()
    nowhere = runner.invoke(main, ["agent", "delete", agent["id"], "--db", str(tmp_path / "none.db")])
    assert nowhere.exit_code != 0 and not (tmp_path / "none.db").exists()



def test_a_follower_on_another_server_is_told_of_a_delete_made_elsewhere(
    world: World, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The server follows the store it was opened on; the delete comes through another store on
    # the same database, as from another process (PostgreSQL's notice; SQLite's write-ahead log,
    # where the hub finds the followed conversation gone).
    monkeypatch.setattr(events_module, "HEARTBEAT_SECONDS", 600.0)  # told by the notice, not a heartbeat's look
    put(world.alice, world.agent, user("followed from afar"))
    elsewhere = Transcripts(open_store(db_url), settings=Settings(db=db_url))
    try:
        with Client(world.url, world.alice_token) as live, live.events(world.agent, since=0) as events:
            assert next(events)[1]["parts"][0]["text"] == "followed from afar"
            elsewhere.delete_agent(world.alice_id, world.agent)
            assert list(events) == [] and events.deleted  # else it would wait past the client's 60 s
    finally:
        elsewhere.close()
