"""A big write staged (store/staging.py): its body and chunks written ahead in short
transactions, so another agent's small write commits meanwhile; staged rows are seen by no read
or search; a writer that dies between its stages leaves nothing visible, and the sweep at the
next start clears what it left."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest
from core_helpers import assistant, bash, caught_up, new_id, user
from sqlalchemy import text

from foldline.errors import NotFound
from foldline.service import Transcripts
from foldline.settings import Settings
from foldline.store import StaleWrite, Store, open_store
from foldline.store import staging as staging_module
from foldline.store.staging import Stage

Json = dict[str, Any]
WORD = "zqxstagedword"  # in the big output only
BIG = ("the big output's line of text\n" * 40_000 + WORD + "\n") * 3  # about 3.6 MB: staged
WAIT = 30  # seconds a thread is given to reach a checkpoint (a bound, not a measure)


@dataclass
class Agents:
    transcripts: Transcripts
    store: Store
    alice: str
    bob: str
    big: str  # alice's agent
    small: str  # bob's agent, in another workspace


def agents_on(url: str) -> Agents:
    store = open_store(url)
    transcripts = Transcripts(store, settings=Settings(db=url))
    alice, bob = transcripts.create_account("alice")["id"], transcripts.create_account("bob")["id"]
    big = transcripts.create_agent(alice, transcripts.create_workspace("a", [alice])["id"])["id"]
    small = transcripts.create_agent(bob, transcripts.create_workspace("b", [bob])["id"])["id"]
    return Agents(transcripts, store, alice, bob, big, small)


@pytest.fixture
def sqlite_agents(tmp_path: Path) -> Iterator[Agents]:
    found = agents_on(str(tmp_path / "staged.db"))
    yield found
    found.store.close()


@pytest.fixture
def both_agents(fresh_url: str) -> Iterator[Agents]:
    found = agents_on(fresh_url)
    yield found
    found.store.close()


def big_message(output: str = BIG, message_id: str | None = None) -> Json:
    return assistant([bash(output)], message_id)


def hits(a: Agents, account: str, word: str) -> list[Json]:
    found: list[Json] = a.transcripts.search(account, word)["hits"]
    return found


def loose(store: Store) -> tuple[int, int]:
    """Chunk rows under an id no conversation has, and pieces no part names."""
    with store.read() as conn:
        chunks = conn.execute(text("SELECT count(*) FROM part_text WHERE conversation_id >= '~'")).scalar_one()
        named = "SELECT pieces FROM parts WHERE pieces IS NOT NULL"
        pieces = conn.execute(text(f"SELECT count(*) FROM part_pieces WHERE key NOT IN ({named})")).scalar_one()
    return int(chunks), int(pieces)


def test_a_small_write_commits_while_a_big_write_is_staged(sqlite_agents: Agents) -> None:
    a = sqlite_agents
    store: Any = a.store
    staged, go = threading.Event(), threading.Event()
    stage = store.stage

    def held(*args: Any) -> Stage:  # the big write stops between its stages and its link
        done: Stage = stage(*args)
        staged.set()
        assert go.wait(WAIT)
        return done

    store.stage = held
    message = big_message()
    writer = threading.Thread(target=a.transcripts.put_message, args=(a.alice, a.big, message["id"], message))
    writer.start()
    try:
        assert staged.wait(WAIT)
        # Bob's small write commits while Alice's big one is half written...
        small = user("a small message " + "x" * 4000)
        assert a.transcripts.put_message(a.bob, a.small, small["id"], small)["created"] is True
        assert [m["id"] for m in a.transcripts.messages(a.bob, a.small)["messages"]] == [small["id"]]
        # ...and what is staged is in the file, seen by no read, search or slice.
        assert loose(store)[0] > 0
        assert a.transcripts.messages(a.alice, a.big)["messages"] == []
        assert hits(a, a.alice, WORD) == []
        caught_up(store)  # indexed too, the staged chunks stay out of every hit
        assert hits(a, a.alice, WORD) == []
        with pytest.raises(NotFound):
            a.transcripts.part(a.alice, a.big, message["id"], "0")
    finally:
        go.set()
        writer.join(WAIT)
    assert not writer.is_alive()
    page = a.transcripts.messages(a.alice, a.big)["messages"]
    assert [m["id"] for m in page] == [message["id"]] and page[0]["parts"][0]["output"] == BIG
    assert {h["message_id"] for h in hits(a, a.alice, WORD)} == {message["id"]}
    assert loose(store) == (0, 0)


def test_each_stage_is_a_short_transaction(sqlite_agents: Agents) -> None:
    """The big write takes the write lock many times, each for about a MiB of text."""
    a = sqlite_agents
    store: Any = a.store
    writes, write = [], store.write

    def counted() -> Any:
        writes.append(threading.get_ident())
        return write()

    store.write = counted
    message = big_message()
    a.transcripts.put_message(a.alice, a.big, message["id"], message)
    assert len(writes) >= 2 * len(BIG) // staging_module.STAGE_CHARS  # its body's pieces and its chunks


def test_a_big_part_reads_back_whole_every_way(sqlite_agents: Agents) -> None:
    a = sqlite_agents
    message = big_message("é" * 10 + BIG)  # not ASCII: pieces are cut by code point, sized in bytes
    a.transcripts.put_message(a.alice, a.big, message["id"], message)
    part = bash("é" * 10 + BIG) | {"toolCallId": message["parts"][0]["toolCallId"]}
    assert a.transcripts.part(a.alice, a.big, message["id"], "0") == part
    size, chunks = a.transcripts.part_stream(a.alice, a.big, message["id"], "0")
    body = b"".join(chunks)
    assert len(body) == size and orjson.loads(body) == part
    assert a.transcripts.messages(a.alice, a.big)["messages"][0]["parts"][0] == part
    cut = a.transcripts.messages(a.alice, a.big, cut=True)["messages"][0]
    assert "output" not in cut["parts"][0]  # the cut, written with the message, as ever
    _, _, exported = a.transcripts.export(a.alice, a.big)
    assert orjson.loads(b"".join(exported))["messages"][0]["parts"][0] == part
    with a.store.read() as conn:
        assert conn.execute(text("SELECT count(*) FROM part_pieces")).scalar_one() >= len(BIG) // staging_module.PIECE


def test_a_write_refused_after_its_stages_leaves_nothing(sqlite_agents: Agents) -> None:
    a = sqlite_agents
    old = user("kept")
    a.transcripts.put_message(a.alice, a.big, old["id"], old)
    conv = a.store.visible_conversation(a.alice, a.big, None)
    assert conv is not None
    write = a.transcripts.door.prepare(big_message(message_id=old["id"]), None)
    with pytest.raises(StaleWrite):  # the compare-and-set fails in the link, after the stages
        a.store.put_messages(conv, [write], expect_seq=12345)
    assert loose(a.store) == (0, 0)
    assert [m["parts"] for m in a.transcripts.messages(a.alice, a.big)["messages"]] == [old["parts"]]
    assert hits(a, a.alice, WORD) == []


def test_a_replaced_big_message_leaves_no_stale_hit(both_agents: Agents) -> None:
    """On both backends: the old version's many chunks are dropped out of reach in the write and
    deleted after it; its pieces too."""
    a = both_agents
    message = big_message()
    a.transcripts.put_message(a.alice, a.big, message["id"], message)
    caught_up(a.store)
    again = big_message(BIG.replace(WORD, "zqxnewword"), message["id"])
    a.transcripts.put_message(a.alice, a.big, message["id"], again)
    assert hits(a, a.alice, WORD) == []
    assert {h["message_id"] for h in hits(a, a.alice, "zqxnewword")} == {message["id"]}
    caught_up(a.store)
    assert hits(a, a.alice, WORD) == []
    assert loose(a.store) == (0, 0)
    small = user("short now", message["id"])
    a.transcripts.put_message(a.alice, a.big, message["id"], small)
    assert hits(a, a.alice, "zqxnewword") == [] and len(hits(a, a.alice, "short now")) == 1
    assert loose(a.store) == (0, 0)
    a.transcripts.delete_agent(a.alice, a.big)
    with a.store.read() as conn:
        assert conn.execute(text("SELECT count(*) FROM part_pieces")).scalar_one() == 0


WRITER = textwrap.dedent(
    """
    import os, sys, time
    from foldline.service import Transcripts
    from foldline.settings import Settings
    from foldline.store import open_store

    url, account, agent, message_id, output = sys.argv[1:6]
    store = open_store(url)
    transcripts = Transcripts(store, settings=Settings(db=url))
    stage = store.stage

    def held(*args):
        done = stage(*args)
        print("staged", flush=True)
        time.sleep(600)  # killed here, between its stages and its link
        return done

    store.stage = held
    part = {"type": "tool-bash", "toolCallId": "c1", "state": "output-available",
            "input": {"command": "make"}, "output": open(output).read()}
    transcripts.put_message(account, agent, message_id, {"role": "assistant", "parts": [part]})
    """
)


def test_a_writer_killed_between_its_stages_leaves_nothing_visible(
    sqlite_agents: Agents, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a = sqlite_agents
    output = tmp_path / "output.txt"
    output.write_text(BIG)
    message_id = str(uuid.uuid4())
    url = str(a.store.engine.url.database)
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, url, a.alice, a.big, message_id, str(output)],
        stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )  # fmt: skip
    try:
        assert writer.stdout is not None and writer.stdout.readline().strip() == "staged"
    finally:
        os.kill(writer.pid, signal.SIGKILL)
        writer.wait(WAIT)
        assert writer.stdout is not None
        writer.stdout.close()
    chunks, pieces = loose(a.store)
    assert chunks > 0 and pieces > 0
    assert a.transcripts.messages(a.alice, a.big)["messages"] == []
    caught_up(a.store)
    assert hits(a, a.alice, WORD) == []
    # A store opened now keeps a stage this fresh (its writer may be alive in another process)...
    open_store(url).close()
    assert loose(a.store) == (chunks, pieces)
    # ...and clears it once it is older than STALE_SECONDS (here: any age).
    monkeypatch.setattr(staging_module, "STALE_SECONDS", 0.0)
    open_store(url).close()
    assert loose(a.store) == (0, 0)
    with a.store.read() as conn:
        assert conn.execute(text("SELECT count(*) FROM part_text_unindex")).scalar_one() >= 0
    caught_up(a.store)  # the indexed staged rows' trigrams forgotten too
    assert hits(a, a.alice, WORD) == []
    # The agent is untouched: a message written now is the only one.
    fine = user("after the crash " + new_id())
    a.transcripts.put_message(a.alice, a.big, fine["id"], fine)
    assert [m["id"] for m in a.transcripts.messages(a.alice, a.big)["messages"]] == [fine["id"]]
