"""The Store contract (``foldline.store.base.Store``), held on every backend against a real database.

Each test makes its own accounts, workspaces and conversations with fresh ids, so the tests
share one database per backend (the ``store`` fixture, over ``db_url``) without seeing each other.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

import orjson
import pytest

from foldline.registry import TextTools
from foldline.store import Conversation, StaleWrite, Store, StoredPart


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
    assert store.account_by_token(token) == first and store.account_by_token(extra) == first  # both work
    assert store.account_by_token(new_id()) is None
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
    assert store.conversation(setup.agent.id) == setup.agent
    assert store.conversation(new_id()) is None


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
    assert [a.id for a in store.agents(setup.workspace)] == [setup.agent.id]


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
    assert [a.id for a in store.agents(setup.workspace)] == [other.id, setup.agent.id]
    put(store, setup.agent, new_id(), "now the first is active")
    assert [a.id for a in store.agents(setup.workspace)] == [setup.agent.id, other.id]
    sub = store.create_conversation(new_id(), setup.workspace, setup.owner, None, other.id, "c")
    store.set_times(setup.agent.id, "2000-01-01T00:00:00.000Z", "2000-01-03T00:00:00.000Z")
    put(store, sub, new_id(), "a subagent's write is its parent's activity")
    assert [a.id for a in store.agents(setup.workspace)] == [other.id, setup.agent.id]


def test_titles_and_times_are_set(store: Store, setup: Setup) -> None:
    store.set_title(setup.agent.id, "renamed")
    store.set_times(setup.agent.id, "2025-01-01T00:00:00.000Z", "2025-01-02T00:00:00.000Z")
    conv = store.conversation(setup.agent.id)
    assert conv is not None and conv.title == "renamed"
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
    assert store.counts([setup.agent.id]) == {"messages": 1, "parts": 1}
    assert store.message(setup.agent, new_id()) is None


def test_each_write_takes_the_conversations_next_seq(store: Store, setup: Setup) -> None:
    sub = store.create_conversation(new_id(), setup.workspace, setup.owner, None, setup.agent.id, "c")
    seqs = [put(store, setup.agent, new_id(), str(n))[0] for n in range(3)]
    assert seqs == [1, 2, 3]
    assert put(store, sub, new_id(), "own count")[0] == 1  # a subagent counts its own writes
    conv = store.conversation(setup.agent.id)
    assert conv is not None and conv.seq == 3


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
    conv = store.conversation(setup.agent.id)
    assert conv is not None and conv.seq == 2, "a refused write takes no seq"
    assert put(store, setup.agent, mid, "third", expect_seq=2) == (3, False)


def test_pages_run_newest_first_each_oldest_first_with_a_cursor(store: Store, setup: Setup) -> None:
    ids = [new_id() for _ in range(5)]
    for n, mid in enumerate(ids):
        put(store, setup.agent, mid, f"m{n}")
    put(store, setup.agent, ids[1], "m1 again")  # a rewrite keeps the message's place
    conv = store.conversation(setup.agent.id)
    assert conv is not None
    rows, more, seq = store.page(conv, cut=None, limit=2, before=None)
    assert [r.id for r in rows] == ids[3:] and more and seq == 6
    rows, more, _ = store.page(conv, cut=None, limit=2, before=rows[0].position)
    assert [r.id for r in rows] == ids[1:3] and more
    assert texts(rows[0].parts) == ["m1 again"]
    rows, more, _ = store.page(conv, cut=None, limit=2, before=rows[0].position)
    assert [r.id for r in rows] == ids[:1] and not more
    rows, more, _ = store.page(conv, cut=None, limit=None, before=None)
    assert [r.id for r in rows] == ids and not more
    assert store.page(conv, cut=None, limit=2, before=rows[0].position) == ([], False, conv.seq)


def test_a_cut_page_sends_a_cut_only_for_the_tools_named(store: Store, setup: Setup) -> None:
    whole = orjson.dumps({"type": "tool-bash", "output": "x" * 1000}).decode()
    cut_body = orjson.dumps({"type": "tool-bash"}).decode()
    ref = orjson.dumps({"index": 0, "field": "output"}).decode()
    other_whole = orjson.dumps({"type": "tool-image", "output": "y" * 1000}).decode()
    parts = [StoredPart(0, "bash", whole, cut_body, ref), StoredPart(1, "image", other_whole, cut_body, ref)]
    mid = new_id()
    store.put_message(setup.agent, mid, "assistant", head("assistant"), parts)
    conv = store.conversation(setup.agent.id)
    assert conv is not None
    [row], _, _ = store.page(conv, cut=TextTools(frozenset({"bash"})), limit=1, before=None)
    assert row.parts == [(0, cut_body, ref), (1, other_whole, None)]
    [row], _, _ = store.page(conv, cut=TextTools(frozenset(), prefixes=("ba",)), limit=1, before=None)
    assert row.parts[0] == (0, cut_body, ref)
    [row], _, _ = store.page(conv, cut=TextTools(frozenset(), ("ba",), frozenset({"bash"})), limit=1, before=None)
    assert row.parts[0] == (0, whole, None), "a tool registered as not text is sent whole"
    [row], _, _ = store.page(conv, cut=None, limit=1, before=None)
    assert [body for _, body, _ in row.parts] == [whole, other_whole]
    assert store.part(conv, mid, 0) == (whole, "bash") and store.part(conv, mid, 2) is None


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


def test_counts_cover_the_conversations_named(store: Store, setup: Setup) -> None:
    other = store.create_conversation(new_id(), setup.workspace, setup.owner, "other")
    put(store, setup.agent, new_id(), "a", "b")
    put(store, other, new_id(), "c")
    assert store.counts([setup.agent.id]) == {"messages": 1, "parts": 2}
    assert store.counts([setup.agent.id, other.id]) == {"messages": 2, "parts": 3}
    assert store.counts([]) == {"messages": 0, "parts": 0}


# -- import bookkeeping and schema ----------------------------------------------------------------


def test_import_state_is_recorded_and_replaced(store: Store) -> None:
    source = f"/sessions/{new_id()}.jsonl"
    assert store.import_state(source) is None
    store.set_import_state(source, "one")
    store.set_import_state(source, "two")
    assert store.import_state(source) == "two"


def test_migrating_a_migrated_database_applies_nothing(store: Store) -> None:
    assert store.migrate() == []
