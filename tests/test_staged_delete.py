"""A big agent deleted in steps (store/staging.py): one small transaction takes it out of every
read (its rows moved to dropped ids), then its rows are deleted in short transactions, so
another account's write commits between them; a process killed midway leaves nothing visible,
and the sweep at the next start finishes the delete. PostgreSQL deletes in one transaction."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from core_helpers import assistant, bash, caught_up, user
from sqlalchemy import text

from foldline.errors import NotFound
from foldline.service import Transcripts
from foldline.settings import Settings
from foldline.store import Store, open_store
from foldline.store import staging as staging_module
from foldline.store.terms import fts_query

Json = dict[str, Any]
WORD = "zqxdeletedword"  # in the big agent only
BIG = ("the big output's line of text\n" * 40_000 + WORD + "\n") * 3  # about 3.6 MB: a staged delete
USAGE = {"inputTokens": 1_000, "outputTokens": 50}
WAIT = 30  # seconds a thread or process is given to reach a checkpoint (a bound, not a measure)


@dataclass
class Agents:
    transcripts: Transcripts
    store: Store
    alice: str
    bob: str
    workspace: str  # alice's
    big: str  # alice's agent, with a subagent
    small: str  # bob's agent, in another workspace
    message: str  # the big agent's big message
    share: str  # a share link's token to the big agent


def agents_on(url: str) -> Agents:
    store = open_store(url)
    t = Transcripts(store, settings=Settings(db=url))
    alice, bob = t.create_account("alice")["id"], t.create_account("bob")["id"]
    workspace = t.create_workspace("a", [alice])["id"]
    big = t.create_agent(alice, workspace)["id"]
    small = t.create_agent(bob, t.create_workspace("b", [bob])["id"])["id"]
    message = assistant([bash(BIG)])
    t.put_message(alice, big, message["id"], message)
    used = {**assistant([{"type": "text", "text": "ok"}]), "metadata": {"usage": USAGE, "model": "gpt-5"}}
    t.put_message(alice, big, used["id"], used)
    caught_up(store)  # the big message's chunks indexed; the subagent's one below left pending
    worker = user(f"the worker saw {WORD}")
    t.put_message(alice, big, worker["id"], worker, call="call-1")
    share = t.create_share(alice, big)["token"]
    return Agents(t, store, alice, bob, workspace, big, small, message["id"], share)


@pytest.fixture
def sqlite_agents(tmp_path: Path) -> Iterator[Agents]:
    found = agents_on(str(tmp_path / "delete.db"))
    yield found
    found.store.close()


@pytest.fixture
def both_agents(fresh_url: str) -> Iterator[Agents]:
    found = agents_on(fresh_url)
    yield found
    found.store.close()


def conversation_ids(a: Agents) -> list[str]:
    with a.store.read() as conn:
        subagents = text("SELECT id FROM conversations WHERE parent_id = :agent")
        return [a.big, *conn.execute(subagents, {"agent": a.big}).scalars()]


def dropped_rows(store: Store) -> dict[str, int]:
    """The rows of each table under an id no conversation has, and the pieces."""
    with store.read() as conn:
        counts = {
            name: int(conn.execute(text(f"SELECT count(*) FROM {name} WHERE conversation_id >= '~'")).scalar_one())
            for name in ("part_text", "parts", "messages")
        }
        counts["part_pieces"] = int(conn.execute(text("SELECT count(*) FROM part_pieces")).scalar_one())
    return counts


def nothing_visible(a: Agents, ids: list[str]) -> None:
    """No read path shows anything of the big agent, and the other agent is whole."""
    t = a.transcripts
    for read in (
        lambda: t.agent(a.alice, a.big),
        lambda: t.messages(a.alice, a.big),
        lambda: t.messages(a.alice, a.big, call="call-1"),
        lambda: t.part(a.alice, a.big, a.message, "0"),
        lambda: t.export(a.alice, a.big),
        lambda: t.shared(a.share, a.big),
        lambda: t.create_share(a.alice, a.big),
    ):
        with pytest.raises(NotFound):
            read()
    assert t.list_agents(a.alice, a.workspace)["agents"] == []
    assert t.search(a.alice, WORD)["hits"] == []
    assert t.search(a.alice, "line of text")["hits"] == []
    assert t.usage(a.alice, by="agent")["rows"] == []
    assert t.usage(a.alice, by="model", workspace_id=a.workspace)["rows"] == []
    assert not any(a.store.exists(conv_id) for conv_id in ids)  # what a follower asks
    with a.store.read() as conn:
        for name in ("part_text", "parts", "messages"):
            held = sum(int(conn.execute(text(f"SELECT count(*) FROM {name} WHERE conversation_id = :c"),
                                        {"c": conv_id}).scalar_one()) for conv_id in ids)  # fmt: skip
            assert held == 0, name
        totals = text("SELECT count(*) FROM usage_totals WHERE agent_id = :a")
        assert conn.execute(totals, {"a": a.big}).scalar_one() == 0
    assert [m["role"] for m in t.messages(a.bob, a.small)["messages"]] in ([], ["user"])


def index_holds(store: Store, word: str) -> int:
    """The rows FTS5's own index holds for ``word`` (read without the content table)."""
    with store.read() as conn:
        found = conn.exec_driver_sql("SELECT count(*) FROM part_text_fts WHERE part_text_fts MATCH ?",
                                     (fts_query([word]),)).scalar_one()  # fmt: skip
    return int(found)


def index_is_whole(store: Store) -> None:
    caught_up(store)  # the indexer's next batches: FTS5 told the dropped rows are gone
    assert index_holds(store, WORD) == 0
    with store.read() as conn:
        assert conn.exec_driver_sql("SELECT count(*) FROM part_text_unindex").scalar_one() == 0
        conn.exec_driver_sql("INSERT INTO part_text_fts(part_text_fts, rank) VALUES ('integrity-check', 1)")


def test_a_small_write_commits_between_the_batches_of_a_big_delete(
    sqlite_agents: Agents, monkeypatch: pytest.MonkeyPatch
) -> None:
    a = sqlite_agents
    monkeypatch.setattr(staging_module, "CLEAR_BATCH", 16)  # chunk rows per batch: more batches
    ids = conversation_ids(a)
    assert len(ids) == 2 and index_holds(a.store, WORD) > 0
    store: Any = a.store
    write = store.write
    order: list[str] = []
    deleter: list[int] = []
    between, go = threading.Event(), threading.Event()

    @contextmanager
    def watched() -> Iterator[Any]:
        with write() as conn:
            yield conn
        if threading.get_ident() in deleter:  # one of the delete's transactions committed
            order.append("delete")
            if len(order) == 2:  # the one that took the agent out of reach, and one batch
                between.set()
                assert go.wait(WAIT)

    store.write = watched
    told: list[str] = []
    a.transcripts.listeners.append(told.append)
    done: list[Json] = []

    def delete() -> None:
        deleter.append(threading.get_ident())
        done.append(a.transcripts.delete_agent(a.alice, a.big))

    thread = threading.Thread(target=delete)
    thread.start()
    try:
        while not between.wait(0.05) and thread.is_alive():
            pass
        assert between.is_set()  # deleted in one transaction, it never lets go between two
        small = user("a small message " + "x" * 4000)
        assert a.transcripts.put_message(a.bob, a.small, small["id"], small)["created"] is True
        order.append("bob")
        left = dropped_rows(store)
        assert left["part_text"] > 0 and left["parts"] > 0 and left["messages"] > 0 and left["part_pieces"] > 0
        assert set(ids) <= set(told)  # followers told at the commit, not after the batches
        nothing_visible(a, ids)
        caught_up(store)  # the indexer meanwhile: the dropped pending chunk indexed, in no hit
        nothing_visible(a, ids)
    finally:
        go.set()
        thread.join(WAIT)
    assert not thread.is_alive()
    assert done == [{"id": a.big, "deleted": True, "subagents": 1, "forgotten": False}]
    # Bob's write came after the delete's first two transactions, and the delete went on after it.
    assert order.index("bob") == 2 and order.count("delete") > 4
    assert dropped_rows(store) == dict.fromkeys(("part_text", "parts", "messages", "part_pieces"), 0)
    nothing_visible(a, ids)
    index_is_whole(store)


def test_each_transaction_of_a_big_delete_is_short(sqlite_agents: Agents) -> None:
    """The delete takes the write lock many times, each for at most about STAGE_CHARS of rows."""
    a = sqlite_agents
    store: Any = a.store
    writes, write = [], store.write

    def counted() -> Any:
        writes.append(1)
        return write()

    store.write = counted
    a.transcripts.delete_agent(a.alice, a.big)
    # The chunks (3.6 MB in 32 K rows, CLEAR_BATCH a transaction) and the pieces (one each).
    assert len(writes) > len(BIG) // (staging_module.CLEAR_BATCH * 32_768) + len(BIG) // staging_module.PIECE


@pytest.mark.parametrize("forget", [False, True], ids=["kept", "forgotten"])
def test_a_deleted_big_agent_leaves_nothing_on_either_backend(both_agents: Agents, forget: bool) -> None:
    a = both_agents
    ids = conversation_ids(a)
    assert len(a.transcripts.search(a.alice, WORD)["hits"]) == 2  # indexed and pending
    done = a.transcripts.delete_agent(a.alice, a.big, forget=forget)
    assert done == {"id": a.big, "deleted": True, "subagents": 1, "forgotten": forget}
    nothing_visible(a, ids)
    assert dropped_rows(a.store) == dict.fromkeys(("part_text", "parts", "messages", "part_pieces"), 0)
    assert a.transcripts.forgotten(a.alice, a.workspace, a.big) is forget  # the import record, as ever
    if a.store.engine.dialect.name == "sqlite":
        index_is_whole(a.store)
    # Made again with its id, the agent holds nothing of the old one.
    a.transcripts.create_agent(a.alice, a.workspace, agent_id=a.big)
    again = user("made again")
    a.transcripts.put_message(a.alice, a.big, again["id"], again)
    assert [m["id"] for m in a.transcripts.messages(a.alice, a.big)["messages"]] == [again["id"]]
    assert a.transcripts.search(a.alice, WORD)["hits"] == []


DELETER = textwrap.dedent(
    """
    import contextlib, sys, time
    from foldline.service import Transcripts
    from foldline.settings import Settings
    from foldline.store import open_store

    url, account, agent = sys.argv[1:4]
    store = open_store(url)
    transcripts = Transcripts(store, settings=Settings(db=url))
    write, commits = store.write, []

    @contextlib.contextmanager
    def held():
        with write() as conn:
            yield conn
        commits.append(1)
        if len(commits) == 2:  # the agent out of reach and one batch deleted: killed here
            print("midway", flush=True)
            time.sleep(600)

    store.write = held
    transcripts.delete_agent(account, agent)
    print("done", flush=True)
    """
)


def test_a_delete_killed_midway_leaves_nothing_visible_and_the_sweep_finishes_it(sqlite_agents: Agents) -> None:
    a = sqlite_agents
    ids = conversation_ids(a)
    url = str(a.store.engine.url.database)
    deleter = subprocess.Popen(
        [sys.executable, "-c", DELETER, url, a.alice, a.big],
        stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )  # fmt: skip
    try:
        assert deleter.stdout is not None and deleter.stdout.readline().strip() == "midway"
    finally:
        os.kill(deleter.pid, signal.SIGKILL)
        deleter.wait(WAIT)
        assert deleter.stdout is not None
        deleter.stdout.close()
    left = dropped_rows(a.store)
    assert left["part_text"] > 0 and left["parts"] > 0 and left["messages"] > 0 and left["part_pieces"] > 0
    nothing_visible(a, ids)
    caught_up(a.store)
    nothing_visible(a, ids)
    # Made again with its id before any sweep, the agent finds none of the old rows.
    a.transcripts.create_agent(a.alice, a.workspace, agent_id=a.big)
    again = assistant([bash("made again")], a.message)  # the old big message's id, written anew
    a.transcripts.put_message(a.alice, a.big, a.message, again)
    assert [m["parts"][0]["output"] for m in a.transcripts.messages(a.alice, a.big)["messages"]] == ["made again"]
    assert a.transcripts.search(a.alice, WORD)["hits"] == []
    open_store(url).close()  # the next start's sweep: a dropped id is cleared whatever its age
    assert dropped_rows(a.store) == dict.fromkeys(("part_text", "parts", "messages", "part_pieces"), 0)
    index_is_whole(a.store)
    assert [m["id"] for m in a.transcripts.messages(a.alice, a.big)["messages"]] == [a.message]
    assert len(a.transcripts.search(a.alice, "made again")["hits"]) == 1
