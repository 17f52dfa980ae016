"""A page read again is sent from this process's copy when the conversation has not been
written since (docs/architecture.md, "Pages already sent are kept"); any write, from any process, and any
change of access is seen at once."""

from __future__ import annotations

import dataclasses
import tracemalloc

import httpx
import psycopg
import pytest
from conftest import World
from core_helpers import BIG_OUTPUT, LONG_THOUGHT, add_member, assistant, bash, new_id, put, thought, user
from servers import ServerThread
from sqlalchemy import text
from test_query_count import counted

from foldline.errors import NotFound
from foldline.pagecache import PageCache
from foldline.service import CALL_MAX, Transcripts, canonical_uuid
from foldline.settings import Settings
from foldline.store import PageRead, Store, open_store


def fill(world: World, turns: int) -> None:
    for n in range(turns):
        put(world.alice, world.agent, user(f"turn {n}"))
        put(world.alice, world.agent, assistant([thought(LONG_THOUGHT), bash(BIG_OUTPUT[: 10_000 * (n % 3 + 1)])]))


def edit_behind_its_back(store: Store, old: str, new: str) -> None:
    """Change stored text without a write: what SQL typed by hand into the database does."""
    with store.engine.begin() as conn:
        conn.execute(text("UPDATE messages SET head = replace(head, :old, :new)"), {"old": old, "new": new})


def texts(page: dict) -> list[str]:
    return [p["text"] for m in page["messages"] for p in m["parts"] if p["type"] == "text"]


def test_a_page_read_again_is_one_small_statement(world: World, transcripts: Transcripts, store: Store) -> None:
    fill(world, 10)
    first = transcripts.page_json(world.alice_id, world.agent, cut=True, limit=20)
    with counted(store) as statements:
        again = transcripts.page_json(world.alice_id, world.agent, cut=True, limit=20)
    assert again == first
    sent = [s for s in statements if s not in ("BEGIN", "ROLLBACK")]
    assert len(sent) == 1  # whether the caller may read it, at which seq: no messages, no parts


def test_the_store_reads_no_message_of_a_conversation_at_the_known_seq(
    world: World, transcripts: Transcripts, store: Store
) -> None:
    fill(world, 3)
    seq = transcripts.messages(world.alice_id, world.agent, limit=1)["seq"]
    cut = transcripts.registry.text_tools

    def read(known: int | None) -> PageRead | None:
        return store.read_page(world.alice_id, world.agent, None, cut=cut, limit=4, before=None, known_seq=known)

    same, older, unknown = read(seq), read(seq - 1), read(None)
    assert same is not None and same.unchanged and (same.messages, same.parts, same.seq) == ([], [], seq)
    assert older is not None and not older.unchanged and len(older.messages) == 4 and older.parts
    assert unknown == older
    assert store.read_page(world.bob_id, world.agent, None, cut=cut, limit=4, before=None, known_seq=seq) is None


def test_the_kept_copy_is_what_is_sent_until_the_next_write(
    world: World, transcripts: Transcripts, store: Store
) -> None:
    """The documented limit, which shows the copy is used: a change made behind Foldline's back
    is sent only once the conversation is written again; without the cache, at once."""
    put(world.alice, world.agent, user("hello"))
    assert texts(world.alice.messages(world.agent, cut=True, limit=10)) == ["hello"]
    uncached = Transcripts(store, settings=dataclasses.replace(transcripts.settings, page_cache_mb=0))
    uncached.page_json(world.alice_id, world.agent, cut=True, limit=10)

    edit_behind_its_back(store, '"role":"user"', '"role":"user","metadata":{"edited":1}')
    assert "metadata" not in world.alice.messages(world.agent, cut=True, limit=10)["messages"][0]
    assert uncached.messages(world.alice_id, world.agent, cut=True, limit=10)["messages"][0]["metadata"] == {
        "edited": 1
    }

    put(world.alice, world.agent, user("a write"))
    page = world.alice.messages(world.agent, cut=True, limit=10)
    assert page["messages"][0]["metadata"] == {"edited": 1}
    assert texts(page) == ["hello", "a write"]


def test_every_write_is_seen(world: World) -> None:
    """A new message, a replaced one, a turn-end and a subagent's message each change the pages
    that show them, and no other page is confused with them."""
    u1, a1 = new_id(), new_id()
    put(world.alice, world.agent, user("first", message_id=u1))
    open_call = {"type": "tool-bash", "toolCallId": "c1", "state": "input-available", "input": {"command": "ls"}}
    put(world.alice, world.agent, assistant([open_call], message_id=a1))

    def read() -> tuple[dict, dict, dict]:
        return (world.alice.messages(world.agent, cut=True, limit=1), world.alice.messages(world.agent, cut=True),
                world.alice.messages(world.agent))  # fmt: skip

    limited, cut, whole = read()
    assert [m["id"] for m in limited["messages"]] == [a1] and len(cut["messages"]) == len(whole["messages"]) == 2

    put(world.alice, world.agent, user("replaced", message_id=u1))
    assert texts(read()[1]) == ["replaced"]
    world.alice.end_turn(world.agent)
    assert [p["state"] for p in read()[0]["messages"][0]["parts"]] == ["output-error"]
    assert read()[1]["seq"] > cut["seq"]

    with pytest.raises(NotFound):  # no such subagent yet
        world.alice.messages(world.agent, call="toolu_01")
    put(world.alice, world.agent, user("in a subagent"), call="toolu_01")
    assert texts(world.alice.messages(world.agent, call="toolu_01", cut=True)) == ["in a subagent"]
    assert texts(world.alice.messages(world.agent, cut=True)) == ["replaced"]


def from_another_process(world: World, db_url: str, subagent: str) -> None:
    """Another process writes to alice's agent: "from another process", then "in a subagent"
    under the call ``subagent``."""
    with Transcripts(open_store(db_url), settings=Settings(db=db_url)) as other:
        for message, call in ((user("from another process"), None), (user("in a subagent"), subagent)):
            other.put_message(world.alice_id, world.agent, message["id"], message, call=call)


def test_a_write_from_another_process_is_seen(world: World, transcripts: Transcripts, db_url: str) -> None:
    put(world.alice, world.agent, user("mine"))
    before = transcripts.messages(world.alice_id, world.agent, cut=True, limit=5)
    from_another_process(world, db_url, subagent="toolu_02")
    after = transcripts.messages(world.alice_id, world.agent, cut=True, limit=5)
    assert texts(after) == ["mine", "from another process"] and after["seq"] > before["seq"]


def test_access_is_asked_of_the_database_every_time(world: World, transcripts: Transcripts) -> None:
    put(world.alice, world.agent, user("team work"))
    carol = add_member(transcripts, world.workspace, "carol")
    assert texts(transcripts.messages(carol["id"], world.agent, cut=True, limit=5)) == ["team work"]
    transcripts.remove_member(world.workspace, carol["id"])
    with pytest.raises(NotFound):
        transcripts.page_json(carol["id"], world.agent, cut=True, limit=5)
    with pytest.raises(NotFound):  # and a stranger never reaches the kept copy
        transcripts.page_json(world.bob_id, world.agent, cut=True, limit=5)


def test_a_cut_page_and_a_whole_one_are_kept_apart(world: World, transcripts: Transcripts) -> None:
    put(world.alice, world.agent, assistant([bash(BIG_OUTPUT)]))
    cut = transcripts.messages(world.alice_id, world.agent, cut=True)
    whole = transcripts.messages(world.alice_id, world.agent)
    assert "cutParts" in cut["messages"][0] and "cutParts" not in whole["messages"][0]
    assert whole["messages"][0]["parts"][0]["output"] == BIG_OUTPUT  # 2 MB: over an eighth, not kept
    assert transcripts.messages(world.alice_id, world.agent, cut=True) == cut


def test_the_kept_pages_stay_within_their_memory() -> None:
    """FOLDLINE_PAGE_CACHE_MB bounds the memory the kept pages take, small pages too: a reader
    may ask for as many small pages as it likes (every ``before`` is a page of its own), and each
    costs its key and the cache's own entries besides its bytes."""
    most = 2 * 2**20
    cache, agent = PageCache(most), new_id()
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        for before in range(1, 20_000):
            for call in (None, f"toolu_{before:0{CALL_MAX - 6}d}"):  # an agent's page, a subagent's
                key = (canonical_uuid(agent.upper()), call, True, 50, before)  # as page_json makes it
                cache.put(key, 7, b'{"messages":[],"next":null,"seq":7}')
        taken = tracemalloc.get_traced_memory()[0] - start
    finally:
        tracemalloc.stop()
    assert len(cache) > 1000
    assert taken <= most * 1.1, f"{taken / 2**20:.1f} MB kept for {most / 2**20:.0f} MB"
    tiny = PageCache(1000)  # a page the bound lets in is never too large for the cache
    tiny.put((agent, f"toolu_{0:0{CALL_MAX - 6}d}", True, 1, None), 1, b"x" * 125)


def test_a_database_put_back_to_an_older_seq_is_read_then_kept_again(
    world: World, transcripts: Transcripts, store: Store
) -> None:
    """As after restoring a backup under a running server: the copy no longer holds, the page is
    read from the database once, and that read is what is kept from then on."""
    fill(world, 2)
    transcripts.page_json(world.alice_id, world.agent, cut=True, limit=3)
    with store.engine.begin() as conn:
        conn.execute(text("UPDATE conversations SET seq = seq - 1"))
    older = transcripts.messages(world.alice_id, world.agent, cut=True, limit=3)
    with counted(store) as statements:
        again = transcripts.messages(world.alice_id, world.agent, cut=True, limit=3)
    assert again == older
    assert len([s for s in statements if s not in ("BEGIN", "ROLLBACK")]) == 1


# -- over a real server: kept pages checked on its event loop (PostgreSQL) or read on it (SQLite) --


def served(world: World, token: str, path: str = "") -> httpx.Response:
    """A cut page as the panel asks for it, from the real server."""
    url = f"{world.url}/api/agents/{world.agent}{path}/messages?parts=cut&limit=10"
    return httpx.get(url, headers={"Authorization": f"Bearer {token}"}, timeout=20)


def test_a_served_page_follows_every_write_and_every_access_change(
    world: World, transcripts: Transcripts, db_url: str
) -> None:
    put(world.alice, world.agent, user("mine"))
    first = served(world, world.alice_token)
    assert served(world, world.alice_token).content == first.content
    assert texts(first.json()) == ["mine"]

    from_another_process(world, db_url, subagent="toolu_07")
    assert texts(served(world, world.alice_token).json()) == ["mine", "from another process"]
    assert texts(served(world, world.alice_token, "/subagents/toolu_07").json()) == ["in a subagent"]

    carol = add_member(transcripts, world.workspace, "carol")
    assert texts(served(world, carol["token"]).json()) == ["mine", "from another process"]
    transcripts.remove_member(world.workspace, carol["id"])
    gone = served(world, carol["token"])
    assert gone.status_code == 404 and gone.json()["error"]["code"] == "not_found"
    assert served(world, world.bob_token).status_code == 404
    assert served(world, world.bob_token, "/subagents/toolu_07").status_code == 404


def test_postgres_checks_kept_pages_on_connections_of_their_own(world: World, db_url: str) -> None:
    """What an operator sees in pg_stat_activity: the server's checks of kept pages go through
    connections named for them (up to FOLDLINE_DB_THREADS per process)."""
    if not db_url.startswith("postgresql"):
        pytest.skip("SQLite reads a kept page's seq on the event loop, from its file")
    put(world.alice, world.agent, user("checked"))
    for _ in range(3):
        assert texts(served(world, world.alice_token).json()) == ["checked"]
    with psycopg.connect(db_url) as conn:
        rows = conn.execute(
            "SELECT query FROM pg_stat_activity WHERE datname = current_database()"
            " AND application_name = 'foldline page checks'"
        ).fetchall()
    assert 1 <= len(rows) <= Settings(db=db_url).db_threads
    assert any(query.startswith("SELECT conversations.id") for (query,) in rows), rows


def test_a_foreign_kept_page_costs_what_a_missing_agent_costs(
    world: World, server: ServerThread, store: Store, db_url: str
) -> None:
    """Existence by timing: another account's agent whose page this process keeps is refused
    with the same database round trips as an agent that does not exist (one small statement,
    then the route's not-found), so no probe can tell them apart by the work done."""
    if not db_url.startswith("postgresql"):
        pytest.skip("SQLite checks a kept page's seq from its file, on the event loop: no round trip")
    put(world.alice, world.agent, user("kept"))
    assert served(world, world.alice_token).status_code == 200  # kept now
    assert httpx.get(f"{world.url}/api/me", headers={"Authorization": f"Bearer {world.bob_token}"}).is_success
    checks = server.app.state.seq_checks
    asked: list[str] = []
    seq = checks.seq

    async def counting(account: str, agent_id: str, call: str | None) -> int | None:
        asked.append(agent_id)
        return await seq(account, agent_id, call)

    def round_trips(agent: str) -> int:
        asked.clear()
        url = f"{world.url}/api/agents/{agent}/messages?parts=cut&limit=10"
        with counted(store) as statements:
            refused = httpx.get(url, headers={"Authorization": f"Bearer {world.bob_token}"}, timeout=20)
        assert refused.status_code == 404 and refused.json()["error"]["code"] == "not_found"
        return len(statements) + len(asked)

    checks.seq = counting
    try:
        foreign, missing = round_trips(world.agent), round_trips(new_id())
    finally:
        checks.seq = seq
    assert foreign == missing, (foreign, missing)
