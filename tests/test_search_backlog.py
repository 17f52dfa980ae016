"""A committed write is searchable at once: chunks are written pending and indexed after the
commit (``store/index.py``), and every search reads the pending ones too, on both backends."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner
from conftest import BACKENDS, World, pg_database
from core_helpers import assistant, bash, caught_up, new_id, user

from foldline.cli import main
from foldline.service import Transcripts
from foldline.store import Store, open_store
from foldline.store.chunks import CHUNK


@pytest.fixture
def me(transcripts: Transcripts) -> tuple[str, str]:
    account = transcripts.create_account("backlog")["id"]
    workspace = transcripts.create_workspace("backlog", [account])["id"]
    return account, transcripts.create_agent(account, workspace)["id"]


def found(transcripts: Transcripts, account: str, q: str, **options: Any) -> list[str]:
    """Every hit's message id, following ``next`` to the end (no time limit)."""
    ids: list[str] = []
    cursor = None
    while True:
        page = transcripts.search(account, q, cursor=cursor, seconds=float("inf"), **options)
        assert not page["partial"]
        ids += [h["message_id"] for h in page["hits"]]
        if (cursor := page["next"]) is None:
            return ids


def fts_is_consistent(store: Store) -> None:
    """SQLite: FTS5's own check of its index against the chunk rows it was given."""
    if store.engine.dialect.name == "sqlite":
        with store.write() as conn:
            conn.exec_driver_sql("INSERT INTO part_text_fts(part_text_fts, rank) VALUES ('integrity-check', 1)")


def test_a_write_is_found_before_the_indexer_has_run(
    transcripts: Transcripts, store: Store, me: tuple[str, str]
) -> None:
    account, agent = me
    word = "fresh" + uuid.uuid4().hex[:8]
    message_id = new_id()
    transcripts.put_message(account, agent, message_id, user(f"just written: {word}", message_id))
    assert store.backlog().chunks >= 1  # no indexer runs in the tests: it is pending
    assert found(transcripts, account, word) == [message_id]
    assert found(transcripts, account, word[:2], agent=agent) == [message_id]  # too short for a trigram
    caught_up(store)
    assert store.backlog().chunks == 0
    assert found(transcripts, account, word) == [message_id]  # now by the engine's index


@pytest.mark.parametrize("indexed_first", [True, False], ids=["indexed", "pending"])
def test_a_replaced_message_leaves_no_stale_hit_in_either_path(
    transcripts: Transcripts, store: Store, me: tuple[str, str], indexed_first: bool
) -> None:
    account, agent = me
    old, new = "oldword" + uuid.uuid4().hex[:6], "newword" + uuid.uuid4().hex[:6]
    message_id = new_id()
    big = "filler line\n" * (CHUNK // 6)  # several chunks, so some hold neither word
    transcripts.put_message(account, agent, message_id, assistant([bash(f"{big}{old}\n{big}")], message_id))
    if indexed_first:
        caught_up(store)
    transcripts.put_message(account, agent, message_id, user(f"now {new}", message_id))
    assert found(transcripts, account, old) == []
    assert found(transcripts, account, new) == [message_id]
    caught_up(store)
    assert found(transcripts, account, old) == []
    assert found(transcripts, account, new) == [message_id]
    fts_is_consistent(store)


def test_a_pending_chunk_matches_as_an_indexed_one_does(
    transcripts: Transcripts, store: Store, me: tuple[str, str]
) -> None:
    # The walk of the backlog has quick paths of its own (SQLite: ASCII folding of the bytes
    # first; PostgreSQL: the chunk kept folded): case, accents and the characters that fold to
    # ASCII come out as the engine's index path has them. On SQLite both fold as FTS5 does: K
    # and ſ to ASCII, İ and ı to nothing else (so "istanbul" does not find "İstanbul").
    account, agent = me
    tag = uuid.uuid4().hex[:6]
    text = f"{tag} Ünïcode ÉCOLE Straße KELVIN İstanbul ſtop ılık 100%_done a\\b MiXeD"
    message_id = new_id()
    transcripts.put_message(account, agent, message_id, user(text, message_id))
    words = ["école", "ÉCOLE", "ecole", "straße", "STRASSE", "kelvin", "Kelvin", "İstanbul", "istanbul",
             "ISTANBUL", "İSTANBUL", "i̇stanbul", "stop", "ſtop", "ılık", "ilik", "ILIK", "ı", "İ", "i",
             "100%_d", "100%x", "a\\b", "mixed", "unïcode", "ünïcode", "xyzzy"]  # fmt: skip
    pending = {w: found(transcripts, account, f'"{tag}" "{w}"') for w in words}
    assert pending["école"] == pending["mixed"] == pending["İstanbul"] == pending["ılık"] == [message_id]
    if store.engine.dialect.name == "sqlite":
        hits = {w for w, ids in pending.items() if ids}
        assert {"kelvin", "stop", "İSTANBUL", "ı", "İ", "i"} <= hits
        assert not {"istanbul", "ISTANBUL", "i̇stanbul", "ilik", "ILIK"} & hits
    caught_up(store)
    assert {w: found(transcripts, account, f'"{tag}" "{w}"') for w in words} == pending


def test_postgres_keeps_a_pending_chunk_folded_until_it_is_indexed(
    transcripts: Transcripts, store: Store, me: tuple[str, str]
) -> None:
    # Migration 11: a pending chunk's text as lower() folds it, for the walk; none once indexed.
    if store.engine.dialect.name != "postgresql":
        pytest.skip("PostgreSQL keeps the pending chunks folded")
    account, agent = me
    message_id = new_id()

    def folded() -> list[tuple[bool, bool | None]]:
        with store.engine.connect() as conn:
            rows = conn.exec_driver_sql(
                "SELECT pending, folded = lower(text) FROM part_text WHERE message_id = %(m)s", {"m": message_id}
            )
            return [tuple(row) for row in rows]

    transcripts.put_message(account, agent, message_id, user("Folded ÉCOLE", message_id))
    assert folded() == [(True, True)]
    caught_up(store)
    assert folded() == [(False, None)]
    transcripts.put_message(account, agent, message_id, user("Written AGAIN", message_id))  # a new chunk, pending
    assert folded() == [(True, True)]


def test_hits_page_newest_first_across_the_index_and_the_backlog(
    transcripts: Transcripts, store: Store, me: tuple[str, str]
) -> None:
    # Every third message indexed before the next ones are written: the pages interleave hits
    # of both paths, each once, newest first, whatever page size.
    account, agent = me
    word = "mixed" + uuid.uuid4().hex[:6]
    ids = [new_id() for _ in range(45)]
    for n, message_id in enumerate(ids):
        transcripts.put_message(account, agent, message_id, user(f"{n}: {word if n % 2 else 'other'}", message_id))
        if n % 3 == 0:
            caught_up(store)
    expected = [ids[n] for n in range(44, -1, -1) if n % 2]
    for limit in (1, 4, 20, 100):
        assert found(transcripts, account, word, limit=limit) == expected
        assert found(transcripts, account, f'"{word}"', agent=agent, limit=limit) == expected


def test_the_backlog_an_account_sees_is_its_own(transcripts: Transcripts, store: Store, me: tuple[str, str]) -> None:
    account, agent = me
    other = transcripts.create_account("elsewhere")["id"]
    message_id = new_id()
    transcripts.put_message(account, agent, message_id, assistant([bash("x" * (CHUNK + 10))], message_id))
    mine, theirs = store.backlog(account), store.backlog(other)
    assert mine.chunks >= 2 and mine.chars >= CHUNK + 10  # the output's two chunks, and its command
    assert theirs.chunks == 0 and theirs.oldest_seconds is None
    assert mine.oldest_seconds is not None and mine.oldest_seconds >= 0
    caught_up(store)
    assert store.backlog(account).chunks == 0 and store.backlog().chunks == 0


def test_api_status_shows_the_callers_backlog_only(world: World, store: Store) -> None:
    message_id = new_id()
    world.alice.put_message(world.agent, user("x" * (CHUNK + 1), message_id))
    mine = world.http.get("/api/status", headers={"Authorization": f"Bearer {world.alice_token}"})
    theirs = world.http.get("/api/status", headers={"Authorization": f"Bearer {world.bob_token}"})
    assert mine.status_code == theirs.status_code == 200
    assert mine.json()["search_index"]["pending_chunks"] >= 2  # the message's two chunks
    assert mine.json()["search_index"]["oldest_pending_seconds"] >= 0
    assert theirs.json() == {"search_index": {"pending_chunks": 0, "pending_code_points": 0,
                                              "oldest_pending_seconds": None}}  # fmt: skip
    assert world.http.get("/api/status").status_code == 401
    caught_up(store)
    after = world.http.get("/api/status", headers={"Authorization": f"Bearer {world.alice_token}"}).json()
    assert after["search_index"]["pending_chunks"] == 0


def test_foldline_status_says_what_is_pending(tmp_path: Path) -> None:
    db = str(tmp_path / "status.db")
    t = Transcripts(open_store(db))
    try:
        account = t.create_account("status")["id"]
        agent = t.create_agent(account, t.create_workspace("status", [account])["id"])["id"]
        message_id = new_id()
        t.put_message(account, agent, message_id, user("to be indexed", message_id))
        pending = orjson.loads(CliRunner().invoke(main, ["status", "--db", db, "--json"]).stdout)
        assert pending["search_index"]["pending_chunks"] == 1
        assert pending["search_index"]["pending_code_points"] == len("to be indexed")
        assert "search index: 1 chunks pending" in CliRunner().invoke(main, ["status", "--db", db]).stdout
        t.index_pending()
        assert "search index: up to date" in CliRunner().invoke(main, ["status", "--db", db]).stdout
    finally:
        t.close()


@pytest.fixture(params=BACKENDS)
def own_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A store of the test's own, whose backlog is the test's alone."""
    if request.param == "sqlite":
        yield str(tmp_path / "backlog.db")
        return
    with pg_database("foldline_backlog") as url:
        yield url


@pytest.mark.slow
def test_a_search_at_the_acknowledgement_finds_the_write_with_100_mb_pending(own_url: str) -> None:
    t = Transcripts(open_store(own_url))
    try:
        account = t.create_account("busy")["id"]
        agent = t.create_agent(account, t.create_workspace("busy", [account])["id"])["id"]
        line = "npm test: 412 passing, 3 pending, building the bundle again\n"
        body = (line * (2_000_000 // len(line) + 1))[:2_000_000]
        for n in range(50):  # 100 M code points, none of them indexed: no indexer runs here
            message_id = new_id()
            t.put_message(account, agent, message_id, user(f"{n} {body}", message_id))
        assert t.backlog()["pending_code_points"] >= 100_000_000
        word, message_id = "acked" + uuid.uuid4().hex[:8], new_id()
        t.put_message(account, agent, message_id, user(f"the newest: {word}", message_id))
        page = t.search(account, word)  # the default search time; issued the moment the write returned
        assert [h["message_id"] for h in page["hits"]] == [message_id]
    finally:
        t.close()


@pytest.mark.parametrize("indexed", [True, False], ids=["indexed", "pending"])
def test_two_words_in_one_field_are_one_result_in_either_path(
    transcripts: Transcripts, store: Store, me: tuple[str, str], indexed: bool
) -> None:
    account, agent = me
    a, b = "first" + uuid.uuid4().hex[:6], "second" + uuid.uuid4().hex[:6]
    message_id = new_id()
    log = "".join(f"step {n}: {'.' * 300} {a if n % 7 else b} ok\n" for n in range(200))  # two chunks
    transcripts.put_message(account, agent, message_id, assistant([bash(log)], message_id))
    if indexed:
        caught_up(store)
    results: list[dict[str, Any]] = []
    cursor: str | None = None
    while True:  # one output: one place, whatever its chunks and the path that found them
        page = transcripts.search(account, f"{a} {b}", cursor=cursor, seconds=float("inf"))
        results += page["hits"]
        if (cursor := page["next"]) is None:
            break
    assert {(r["message_id"], r["part"], r["field"]) for r in results} == {(message_id, 0, "output")}
    assert [r["more"] for r in results] == [True] * (len(results) - 1) + [False]  # a result per MATCHES_MOST
    assert all([m["start"] for m in r["matches"]] == sorted(m["start"] for m in r["matches"]) for r in results)
    starts = [m["start"] for r in results for m in r["matches"]]  # pages read the newest chunk first
    assert len(log) > CHUNK and len(starts) == len(set(starts))  # none repeated or skipped
    assert sum(r["count"] for r in results) == len(starts) == log.count(a) + log.count(b)
    assert min(starts) == log.index(b) in [r["start"] for r in results]  # n = 0 holds the second word
