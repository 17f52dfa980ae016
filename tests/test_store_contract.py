"""The Store contract (``foldline.store.Store``), held on every backend against a real database.

Each test makes its own accounts, workspaces and conversations with fresh ids, so the tests
share one database per backend (the ``store`` fixture, over ``db_url``) without seeing each other.
"""

from __future__ import annotations

import threading
import uuid
from dataclasses import dataclass, replace
from typing import Any

import orjson
import pytest
from sqlalchemy import event

from foldline.registry import TextTools
from foldline.store import Conversation, PageRead, StaleWrite, Store, StoredPart, open_store


def new_id() -> str:
    return str(uuid.uuid4())


def head(role: str = "user", **extra: object) -> str:
    return orjson.dumps({"id": "ignored", "role": role, **extra}).decode()


def text_part(idx: int, value: str) -> StoredPart:
    return StoredPart(idx, None, orjson.dumps({"type": "text", "text": value}).decode())


def texts(row_parts: list[tuple[int, str, str | None]]) -> list[str]:
    return [orjson.loads(body)["text"] for _, body, _ in row_parts]


@dataclass
class Setup:
    owner: str
    stranger: str
    workspace: str
    agent: Conversation


@pytest.fixture
def setup(store: Store) -> Setup:
    owner, stranger, workspace = new_id(), new_id(), new_id()
    store.create_account(owner, "owner", new_id())
    store.create_account(stranger, "stranger", new_id())
    store.create_workspace(workspace, "space", [owner])
    agent = store.create_conversation(new_id(), workspace, owner, "an agent")
    return Setup(owner, stranger, workspace, agent)


def text_of(value: str | bytes) -> str:
    """A JSON text as a page read returns it: bytes where the driver hands them over undecoded."""
    return value.decode() if isinstance(value, bytes) else value


def conversation(store: Store, setup: Setup, agent_id: str | None = None) -> Conversation:
    """The agent as its owner sees it now (its seq and times as stored)."""
    found = store.visible_conversation(setup.owner, agent_id or setup.agent.id, None)
    assert found is not None
    return found


def agent_ids(store: Store, workspace: str) -> list[str]:
    return [row.conv.id for row in store.agent_list(workspace, limit=None)[0]]


def page(store: Store, setup: Setup, *, limit: int | None, before: int | None = None,
         cut: TextTools | None = None, call: str | None = None) -> PageRead:
    found = store.read_page(setup.owner, setup.agent.id, call, cut=cut, limit=limit, before=before)
    assert found is not None
    return found


def page_ids(read: PageRead) -> list[str]:
    return [m[0] for m in read.messages]


def page_parts(read: PageRead, message_id: str) -> list[tuple[int, str, str | None]]:
    """One message's parts in a page read: (index, body, cutParts entry or None), as JSON texts."""
    position = next(m[1] for m in read.messages if m[0] == message_id)
    return [(idx, text_of(body), None if ref is None else text_of(ref))
            for at, idx, _, body, ref in read.parts if at == position]  # fmt: skip


def body_of(store: Store, conv: Conversation, message_id: str, index: int) -> tuple[str | None, int, bytes] | None:
    """A whole part as :meth:`Store.part_body` streams it: its tool, its size and its bytes."""
    found = store.part_body(conv, message_id, index)
    if found is None:
        return None
    try:
        return found.tool, found.size, b"".join(found.chunks)
    finally:
        found.close()


def put(store: Store, conv: Conversation, message_id: str, *values: str, role: str = "user",
        expect_seq: int | None = None) -> tuple[int, bool]:
    parts = [text_part(i, v) for i, v in enumerate(values)]
    return store.put_message(conv, message_id, role, head(role), parts, expect_seq=expect_seq)


# -- accounts and workspaces ----------------------------------------------------------------------


def test_accounts_are_found_by_id_by_token_hash_and_by_name(store: Store) -> None:
    first, second, token, extra = new_id(), new_id(), new_id(), new_id()
    name = f"name-{new_id()}"
    assert store.create_account(first, name, token) == {"id": first, "name": name}
    store.create_account(second, name, new_id())
    store.add_token(first, extra, "cli")
    assert store.account(first) == {"id": first, "name": name}
    assert store.account(new_id()) is None
    found, more = store.token(token), store.token(extra)
    assert found is not None and more is not None and found["account_id"] == more["account_id"] == first  # both work
    assert store.token(new_id()) is None
    assert sorted(store.accounts_named(name)) == sorted([first, second])  # made in the same millisecond, maybe
    listed = [a for a in store.all_accounts() if a["id"] in (first, second)]
    assert sorted(a["id"] for a in listed) == sorted([first, second]) and all(a["created_at"] for a in listed)


def test_workspace_membership(store: Store, setup: Setup) -> None:
    assert store.workspace_exists(setup.workspace) and not store.workspace_exists(new_id())
    assert store.is_member(setup.workspace, setup.owner)
    assert not store.is_member(setup.workspace, setup.stranger)
    store.add_member(setup.workspace, setup.stranger)
    store.add_member(setup.workspace, setup.stranger)  # already one: nothing changes
    assert store.is_member(setup.workspace, setup.stranger)
    assert store.workspaces_of(setup.stranger) == [{"id": setup.workspace, "name": "space"}]
    [space] = [w for w in store.all_workspaces() if w["id"] == setup.workspace]
    assert space == {"id": setup.workspace, "name": "space", "members": sorted([setup.owner, setup.stranger])}


def test_a_workspace_made_with_a_member_named_twice_has_it_once(store: Store) -> None:
    owner, workspace = new_id(), new_id()
    store.create_account(owner, "twice", new_id())
    store.create_workspace(workspace, "w", [owner, owner])
    [space] = [w for w in store.all_workspaces() if w["id"] == workspace]
    assert space["members"] == [owner]


# -- conversations --------------------------------------------------------------------------------


def test_creating_an_agent_again_returns_it_unchanged(store: Store, setup: Setup) -> None:
    again = store.create_conversation(setup.agent.id, setup.workspace, setup.owner, "another title")
    assert again == setup.agent
    assert again.title == "an agent" and again.seq == 0 and again.parent_id is None
    assert conversation(store, setup) == setup.agent


def test_a_subagent_is_known_by_its_parent_and_call(store: Store, setup: Setup) -> None:
    first = store.create_conversation(new_id(), setup.workspace, setup.owner, None, setup.agent.id, "call-1")
    raced = store.create_conversation(new_id(), setup.workspace, setup.owner, None, setup.agent.id, "call-1")
    assert raced == first  # a second writer's id loses to the stored one
    store.create_conversation(new_id(), setup.workspace, setup.owner, None, setup.agent.id, "call-0")
    store.set_times(first.id, "2000-01-01T00:00:00.000Z", "2000-01-01T00:00:00.000Z")
    assert store.subagent_calls(setup.agent.id) == ["call-1", "call-0"]  # oldest first, not by name
    found = store.visible_conversation(setup.owner, setup.agent.id, "call-1")
    assert found is not None and (found.id, found.parent_id, found.call_id) == (first.id, setup.agent.id, "call-1")
    assert store.visible_conversation(setup.owner, setup.agent.id, "nope") is None
    assert store.visible_conversation(setup.owner, first.id, None) is None, "a subagent is not an agent"
    assert agent_ids(store, setup.workspace) == [setup.agent.id]


def test_visible_conversation_needs_membership(store: Store, setup: Setup) -> None:
    assert store.visible_conversation(setup.owner, setup.agent.id, None) == setup.agent
    assert store.visible_conversation(setup.stranger, setup.agent.id, None) is None
    assert store.visible_conversation(setup.owner, new_id(), None) is None
    store.add_member(setup.workspace, setup.stranger)
    assert store.visible_conversation(setup.stranger, setup.agent.id, None) == setup.agent


def test_agents_are_listed_by_latest_activity(store: Store, setup: Setup) -> None:
    other = store.create_conversation(new_id(), setup.workspace, setup.owner, "other")
    store.set_times(setup.agent.id, "2000-01-01T00:00:00.000Z", "2000-01-01T00:00:00.000Z")
    store.set_times(other.id, "2000-01-01T00:00:00.000Z", "2000-01-02T00:00:00.000Z")
    assert agent_ids(store, setup.workspace) == [other.id, setup.agent.id]
    put(store, setup.agent, new_id(), "now the first is active")
    assert agent_ids(store, setup.workspace) == [setup.agent.id, other.id]
    sub = store.create_conversation(new_id(), setup.workspace, setup.owner, None, other.id, "c")
    store.set_times(setup.agent.id, "2000-01-01T00:00:00.000Z", "2000-01-03T00:00:00.000Z")
    put(store, sub, new_id(), "a subagent's write is its parent's activity")
    assert agent_ids(store, setup.workspace) == [other.id, setup.agent.id]


def test_titles_and_times_are_set(store: Store, setup: Setup) -> None:
    store.set_title(setup.agent.id, "renamed")
    store.set_times(setup.agent.id, "2025-01-01T00:00:00.000Z", "2025-01-02T00:00:00.000Z")
    conv = conversation(store, setup)
    assert conv.title == "renamed"
    assert (conv.created_at, conv.updated_at) == ("2025-01-01T00:00:00.000Z", "2025-01-02T00:00:00.000Z")


# -- messages -------------------------------------------------------------------------------------


def test_a_write_creates_then_replaces_a_message_and_all_its_parts(store: Store, setup: Setup) -> None:
    mid = new_id()
    assert put(store, setup.agent, mid, "a", "b", "c") == (1, True)
    row = store.message(setup.agent, mid)
    assert row is not None and (row.id, row.position, row.seq) == (mid, 1, 1) and texts(row.parts) == ["a", "b", "c"]
    assert put(store, setup.agent, mid, "only one") == (2, False)
    row = store.message(setup.agent, mid)
    assert row is not None and (row.position, row.seq) == (1, 2)  # keeps its place, takes the new seq
    assert texts(row.parts) == ["only one"]  # the old parts are gone, not merged
    read = page(store, setup, limit=None)
    assert page_ids(read) == [mid] and [idx for idx, _, _ in page_parts(read, mid)] == [0]  # one message, one part
    assert store.message(setup.agent, new_id()) is None


def test_each_write_takes_the_conversations_next_seq(store: Store, setup: Setup) -> None:
    sub = store.create_conversation(new_id(), setup.workspace, setup.owner, None, setup.agent.id, "c")
    seqs = [put(store, setup.agent, new_id(), str(n))[0] for n in range(3)]
    assert seqs == [1, 2, 3]
    assert put(store, sub, new_id(), "own count")[0] == 1  # a subagent counts its own writes
    conv = conversation(store, setup)
    assert conv.seq == 3


def test_a_message_id_is_per_conversation(store: Store, setup: Setup) -> None:
    other = store.create_conversation(new_id(), setup.workspace, setup.owner, "other")
    mid = new_id()
    put(store, setup.agent, mid, "in the first")
    assert put(store, other, mid, "in the second") == (1, True)
    first, second = store.message(setup.agent, mid), store.message(other, mid)
    assert first is not None and second is not None
    assert texts(first.parts) == ["in the first"] and texts(second.parts) == ["in the second"]


def test_compare_and_set_writes_only_over_the_seq_it_read(store: Store, setup: Setup) -> None:
    mid = new_id()
    put(store, setup.agent, mid, "first")
    put(store, setup.agent, mid, "second")  # seq 2
    with pytest.raises(StaleWrite):
        put(store, setup.agent, mid, "stale", expect_seq=1)
    with pytest.raises(StaleWrite):
        put(store, setup.agent, new_id(), "never written", expect_seq=1)
    row = store.message(setup.agent, mid)
    assert row is not None and texts(row.parts) == ["second"] and row.seq == 2
    conv = conversation(store, setup)
    assert conv.seq == 2, "a refused write takes no seq"
    assert put(store, setup.agent, mid, "third", expect_seq=2) == (3, False)


def test_pages_run_newest_first_each_oldest_first_with_a_cursor(store: Store, setup: Setup) -> None:
    ids = [new_id() for _ in range(5)]
    for n, mid in enumerate(ids):
        put(store, setup.agent, mid, f"m{n}")
    put(store, setup.agent, ids[1], "m1 again")  # a rewrite keeps the message's place
    read = page(store, setup, limit=2)
    assert page_ids(read) == ids[3:] and read.more and read.seq == 6 and not read.unchanged
    assert read.conv == conversation(store, setup)
    read = page(store, setup, limit=2, before=read.messages[0][1])
    assert page_ids(read) == ids[1:3] and read.more
    assert [orjson.loads(body)["text"] for _, body, _ in page_parts(read, ids[1])] == ["m1 again"]
    assert read.messages[0][2] == 6, "a rewritten message takes its last write's seq"
    read = page(store, setup, limit=2, before=read.messages[0][1])
    assert page_ids(read) == ids[:1] and not read.more
    read = page(store, setup, limit=None)
    assert page_ids(read) == ids and not read.more
    assert [orjson.loads(text_of(m[3]))["role"] for m in read.messages] == ["user"] * 5  # each message's head
    empty = page(store, setup, limit=2, before=read.messages[0][1])
    assert (empty.messages, empty.parts, empty.more, empty.seq) == ([], [], False, 6)


def test_a_page_read_at_the_seq_known_reads_nothing_more(store: Store, setup: Setup) -> None:
    put(store, setup.agent, new_id(), "one")
    known = store.read_page(setup.owner, setup.agent.id, None, cut=None, limit=10, before=None, known_seq=1)
    assert known is not None and known.unchanged and known.seq == 1 and known.messages == []
    put(store, setup.agent, new_id(), "two")
    moved = store.read_page(setup.owner, setup.agent.id, None, cut=None, limit=10, before=None, known_seq=1)
    assert moved is not None and not moved.unchanged and len(moved.messages) == 2


def test_a_page_is_read_only_by_a_member_and_a_subagent_by_its_call(store: Store, setup: Setup) -> None:
    sub = store.create_conversation(new_id(), setup.workspace, setup.owner, None, setup.agent.id, "call-1")
    mine, theirs = new_id(), new_id()
    put(store, setup.agent, mine, "the agent's")
    put(store, sub, theirs, "the subagent's")
    assert page_ids(page(store, setup, limit=None)) == [mine]
    read = page(store, setup, limit=None, call="call-1")
    assert page_ids(read) == [theirs] and read.conv.id == sub.id
    assert store.read_page(setup.stranger, setup.agent.id, None, cut=None, limit=None, before=None) is None
    assert store.read_page(setup.owner, setup.agent.id, "nope", cut=None, limit=None, before=None) is None
    assert store.read_page(setup.owner, sub.id, None, cut=None, limit=None, before=None) is None, "not an agent"


def test_a_cut_page_sends_a_cut_only_for_the_tools_named(store: Store, setup: Setup) -> None:
    whole = orjson.dumps({"type": "tool-bash", "output": "x" * 1000}).decode()
    cut_body = orjson.dumps({"type": "tool-bash"}).decode()
    ref = orjson.dumps({"index": 0, "field": "output"}).decode()
    other_whole = orjson.dumps({"type": "tool-image", "output": "y" * 1000}).decode()
    parts = [StoredPart(0, "bash", whole, cut_body, ref), StoredPart(1, "image", other_whole, cut_body, ref)]
    mid = new_id()
    store.put_message(setup.agent, mid, "assistant", head("assistant"), parts)
    read = page(store, setup, limit=1, cut=TextTools(frozenset({"bash"})))
    assert page_parts(read, mid) == [(0, cut_body, ref), (1, other_whole, None)]
    assert [tool for _, _, tool, _, _ in read.parts] == ["bash", "image"]
    read = page(store, setup, limit=1, cut=TextTools(frozenset(), prefixes=("ba",)))
    assert page_parts(read, mid)[0] == (0, cut_body, ref)
    read = page(store, setup, limit=1, cut=TextTools(frozenset(), ("ba",), frozenset({"bash"})))
    assert page_parts(read, mid)[0] == (0, whole, None), "a tool registered as not text is sent whole"
    read = page(store, setup, limit=1)
    assert [body for _, body, _ in page_parts(read, mid)] == [whole, other_whole]
    assert store.part(setup.agent, mid, 0) == (whole, "bash") and store.part(setup.agent, mid, 2) is None


def test_a_whole_part_is_streamed_as_stored(store: Store, setup: Setup) -> None:
    big = orjson.dumps({"type": "tool-bash", "output": "é" * (3 << 20)}).decode()  # several chunks, 2-byte UTF-8
    small = orjson.dumps({"type": "text", "text": "ok"}).decode()
    mid = new_id()
    store.put_message(setup.agent, mid, "assistant", head("assistant"), [StoredPart(0, "bash", big),
                      StoredPart(1, None, small)], checked="stamp-1")  # fmt: skip
    assert body_of(store, setup.agent, mid, 0) == ("bash", len(big.encode()), big.encode())
    assert body_of(store, setup.agent, mid, 1) == (None, len(small), small.encode())
    found = store.part_body(setup.agent, mid, 0)
    assert found is not None and found.checked == "stamp-1"
    found.close()  # let go before the first chunk: the next read is not kept waiting
    assert body_of(store, setup.agent, mid, 2) is None
    assert body_of(store, setup.agent, new_id(), 0) is None
    other = store.create_conversation(new_id(), setup.workspace, setup.owner, "other")
    assert body_of(store, other, mid, 0) is None, "a part is read under its own conversation"
    stranger = replace(setup.agent, owner_id=setup.stranger)
    assert body_of(store, stranger, mid, 0) is None, "only the owner's messages are read"


def test_changes_since_a_seq_come_in_write_order(store: Store, setup: Setup) -> None:
    a, b, c = new_id(), new_id(), new_id()
    for mid in (a, b, c):
        put(store, setup.agent, mid, mid)
    put(store, setup.agent, a, "a again")  # seq 4
    tools = TextTools(frozenset())
    changed = store.changes(setup.agent, 1, tools)
    assert [(r.id, r.seq) for r in changed] == [(b, 2), (c, 3), (a, 4)]
    assert texts(changed[-1].parts) == ["a again"]
    assert store.changes(setup.agent, 4, tools) == []
    assert [r.id for r in store.changes(setup.agent, 0, tools)] == [b, c, a]  # a once, at its last write


def test_last_message_id_is_the_last_by_place_if_it_has_the_role(store: Store, setup: Setup) -> None:
    assert store.last_message_id(setup.agent, "assistant") is None
    first, reply = new_id(), new_id()
    put(store, setup.agent, first, "question")
    put(store, setup.agent, reply, "answer", role="assistant")
    assert store.last_message_id(setup.agent, "assistant") == reply
    put(store, setup.agent, first, "question edited")  # rewritten, but not moved to the end
    assert store.last_message_id(setup.agent, "assistant") == reply
    put(store, setup.agent, new_id(), "next question")
    assert store.last_message_id(setup.agent, "assistant") is None


# -- import bookkeeping and schema ----------------------------------------------------------------


def test_import_state_is_recorded_and_replaced(store: Store) -> None:
    source = f"/sessions/{new_id()}.jsonl"
    assert store.import_state(source) is None
    store.set_import_state(source, "one")
    store.set_import_state(source, "two")
    assert store.import_state(source) == "two"


def test_migrating_a_migrated_database_applies_nothing(store: Store) -> None:
    assert store.migrate() == []


def durability(store: Store) -> str:
    """What a write transaction's commit waits for, as the engine says inside it."""
    with store.write() as conn:
        if store.engine.dialect.name == "sqlite":
            level = conn.exec_driver_sql("PRAGMA synchronous").scalar_one()
            return {0: "off", 1: "normal", 2: "full", 3: "extra"}[level]
        return "full" if conn.exec_driver_sql("SHOW synchronous_commit").scalar_one() == "on" else "normal"


def test_a_batched_block_relaxes_its_own_commits_alone(store: Store, setup: Setup) -> None:
    # An import's commits do not each wait for the disk; a write the API acknowledges meanwhile
    # (another thread) does, and so does every write after the block (which syncs them all).
    assert durability(store) == "full"
    others: list[str] = []
    with store.batched():
        assert durability(store) == "normal"
        store.put_message(setup.agent, new_id(), "user", head(), [text_part(0, "batched")])
        beside = threading.Thread(target=lambda: others.append(durability(store)))
        beside.start()
        beside.join()
    assert others == ["full"]
    assert durability(store) == "full"
    assert store.index_pending() is not None  # an index batch is relaxed too, and leaves none behind
    assert durability(store) == "full"


def test_postgres_relaxes_a_connection_once_and_a_rolled_back_reset_is_not_trusted(pg_url: str) -> None:
    # synchronous_commit is the connection's: a bulk writer's commits set it once, not once each,
    # and the first write that is not relaxed sets it back before it commits. A reset that rolls
    # back leaves the connection relaxed: the next write sets it back again.
    postgres_store = open_store(pg_url)
    sets: list[str] = []
    synced: list[str] = []

    def seen(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        if statement.startswith("SET") and "synchronous_commit" in statement:
            sets.append(statement)
        if statement == "SELECT txid_current()":  # sync(): its commit must wait for the log
            synced.append(conn.exec_driver_sql("SHOW synchronous_commit").scalar_one())

    event.listen(postgres_store.engine, "before_cursor_execute", seen)
    try:
        with postgres_store.batched():
            for _ in range(5):
                assert durability(postgres_store) == "normal"
        assert len([s for s in sets if "LOCAL" not in s]) == 1  # once for the connection used
        assert synced == ["on"]  # the block's end, on that relaxed connection
        with pytest.raises(RuntimeError), postgres_store.write() as conn:
            assert conn.exec_driver_sql("SHOW synchronous_commit").scalar_one() == "on"
            raise RuntimeError("rolled back")
        assert durability(postgres_store) == "full"
        assert durability(postgres_store) == "full"
    finally:
        event.remove(postgres_store.engine, "before_cursor_execute", seen)
        postgres_store.close()
