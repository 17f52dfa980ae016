"""Search and slices below HTTP, on both backends: offsets exact for any Unicode (property test),
a slice reads only its chunks, and migration 2 indexes the parts a store already held."""

from __future__ import annotations

import logging
import math
import re
import sqlite3
import sys
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest
from conftest import PG_ADMIN
from core_helpers import assistant, bash, caught_up, new_id, thought, tool, user
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import column, literal, select, table
from sqlalchemy.dialects import postgresql

from foldline import NotFound
from foldline.service import Transcripts
from foldline.store import Store, StoreError, open_store, terms
from foldline.store import core as store_core
from foldline.store import sqlite as sqlite_store_module
from foldline.store.chunks import CHUNK
from foldline.store.fold import FOLD
from foldline.store.terms import PROBES, contains, fts_query, probes, share, trigrams

# Code points a word may hold: letters of every script, emoji, combining marks, CJK; no spaces
# (they split words) and no quotes (they make phrases).
WORD_CHARS = st.characters(blacklist_categories=["Cs", "Cc", "Zs", "Zl", "Zp", "Cn", "Co"], blacklist_characters='"')
FILLER = ["é🙂", "e\u0301x", "日本語", "ﬁß", "👩‍👩‍👧", "\u05d0\u05b8", "a\n", "İı"]
AROUND = st.lists(WORD_CHARS | st.sampled_from(FILLER), max_size=30).map("".join)


@pytest.fixture(scope="module")
def me(transcripts: Transcripts) -> tuple[str, str]:
    account = transcripts.create_account("prop")
    workspace = transcripts.create_workspace("prop", [account["id"]])
    return account["id"], transcripts.create_agent(account["id"], workspace["id"])["id"]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    before=AROUND,
    repeat=st.integers(min_value=0, max_value=20_000),
    filler=st.sampled_from(FILLER),
    needle=st.text(WORD_CHARS, min_size=1, max_size=24),
    after=AROUND,
    as_thought=st.booleans(),
)
def test_a_hit_slices_the_stored_field_to_the_needle(
    transcripts: Transcripts,
    me: tuple[str, str],
    before: str,
    repeat: int,
    filler: str,
    needle: str,
    after: str,
    as_thought: bool,
) -> None:
    account, agent = me
    marker = "Zq" + uuid.uuid4().hex[:8]  # makes the needle unique in the store
    term = marker + needle
    field = before + filler * repeat + " " + term + " " + after
    part = thought(field) if as_thought else bash(field)
    message_id = new_id()
    transcripts.put_message(account, agent, message_id, assistant([part], message_id))
    query = marker.swapcase() + needle
    hits = transcripts.search(account, query, agent=agent, limit=100)["hits"]
    assert len(hits) == 1 and hits[0]["message_id"] == message_id
    hit, key = hits[0], "text" if as_thought else "output"
    at = len(before) + len(filler) * repeat + 1
    assert (hit["field"], hit["start"], hit["end"]) == (key, at, at + len(term))
    assert field[hit["start"] : hit["end"]] == term
    got = transcripts.part_slice(account, agent, message_id, 0, key, hit["start"], hit["end"])
    assert got["text"] == term and got["length"] == len(field)
    snippet = hit["snippet"]
    assert snippet["text"][snippet["start"] : snippet["end"]] == term


def test_a_slice_reads_only_the_chunks_it_covers(transcripts: Transcripts, store: Store, me: tuple[str, str]) -> None:
    account, agent = me
    body = "".join(chr(0x4E00 + n % 20_000) for n in range(5 * CHUNK))
    message_id = new_id()
    transcripts.put_message(account, agent, message_id, assistant([bash(body)], message_id))
    conv = transcripts.conversation(account, agent)
    found = store.text_slice(conv.id, conv.owner_id, message_id, 0, "output", 2 * CHUNK + 10, 2 * CHUNK + 20)
    assert found is not None and found.start == 2 * CHUNK and len(found.text) == CHUNK
    found = store.text_slice(conv.id, conv.owner_id, message_id, 0, "output", 3 * CHUNK - 1, 3 * CHUNK + 1)
    assert found is not None and found.start == 2 * CHUNK and len(found.text) == 2 * CHUNK


# -- migration 2 on a store that migration 1 made and filled -------------------------------


def test_migration_2_indexes_the_parts_already_stored(
    fresh_url: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # a store made before search: every migration but the ones that bring and remake its index
    # (and 8, 9 and 12, which change how the chunks it brings are stored, indexed and walked)
    monkeypatch.setattr(store_core, "MIGRATIONS", [m for m in store_core.MIGRATIONS if m[0] not in (2, 6, 8, 9, 12)])
    store = open_store(fresh_url)
    try:
        t = Transcripts(store)
        account = t.create_account("old")
        workspace = t.create_workspace("old", [account["id"]])
        agent = t.create_agent(account["id"], workspace["id"], "before search")["id"]
        monkeypatch.setattr(store, "replace_texts", lambda *args: None)  # as the store wrote before migration 2
        big = "x" * 50_000 + "OLDNEEDLE" + "y" * 50_000
        ids = [new_id() for _ in range(450)]
        for n, message_id in enumerate(ids):
            message = assistant([bash(big)], message_id) if n == 7 else user(f"old message {n} oldneedle", message_id)
            t.put_message(account["id"], agent, message_id, message)
        monkeypatch.undo()
        caplog.set_level(logging.INFO, logger="foldline")
        assert store.migrate() == [2, 6, 8, 9, 12]
        assert "search index: 450 of 450 parts" in caplog.text
        assert "search index: 200 of 450 parts" in caplog.text
        if fresh_url.startswith("sqlite"):  # migration 6 indexed every chunk row again
            assert re.search(r"search index: (\d+) of \1 chunk rows", caplog.text)
        hits: list[dict[str, Any]] = []
        cursor = None
        while True:
            page = t.search(account["id"], "oldNeedle", limit=100, cursor=cursor)
            hits += page["hits"]
            if (cursor := page["next"]) is None:
                break
        assert len(hits) == 450
        [deep] = [h for h in hits if h["message_id"] == ids[7]]
        assert (deep["field"], deep["start"], deep["hidden"], deep["title"]) == (
            "output",
            50_000,
            True,
            "before search",
        )
        t.put_message(account["id"], agent, ids[7], user("replaced", ids[7]))  # the index is kept from now on
        assert [h for h in t.search(account["id"], "oldneedle", limit=100)["hits"] if h["message_id"] == ids[7]] == []
    finally:
        store.close()


def test_a_postgres_role_that_may_not_create_pg_trgm_is_told_what_to_run() -> None:
    suffix = uuid.uuid4().hex[:10]
    role, name = f"foldline_role_{suffix}", f"foldline_noext_{suffix}"
    with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
        admin.execute(f'CREATE ROLE "{role}" LOGIN')
        admin.execute(f'CREATE DATABASE "{name}"')
        try:
            with psycopg.connect(f"{PG_ADMIN.rsplit('/', 1)[0]}/{name}", autocommit=True) as db:
                db.execute(f'GRANT CREATE ON SCHEMA public TO "{role}"')  # tables yes, extensions no
            url = f"{PG_ADMIN.rsplit('/', 1)[0]}/{name}".replace("://postgres@", f"://{role}@", 1)
            with pytest.raises(StoreError, match=r"run `CREATE EXTENSION pg_trgm;`"):
                open_store(url)
        finally:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            admin.execute(f'DROP ROLE IF EXISTS "{role}"')


def test_the_registry_decides_at_read_time(transcripts: Transcripts, store: Store, me: tuple[str, str]) -> None:
    """A retired tool's parts are never hits nor slices; a tool marked as text later hides its middles."""
    from test_stored_rows import registry_with

    account, agent = me
    word = "Rg" + uuid.uuid4().hex[:8]
    message_id = new_id()
    parts = [
        bash("x" * 10_000 + word),
        tool("Task", "y" * 10_000 + word + "y" * 10_000, input={}),
        user(word)["parts"][0],
    ]
    transcripts.put_message(account, agent, message_id, assistant(parts, message_id))
    hidden = {h["part"]: h["hidden"] for h in transcripts.search(account, word, agent=agent)["hits"]}
    assert hidden == {0: False, 1: False, 2: False}  # bash's match is in its tail; Task is not drawn as text
    marked = Transcripts(store, registry=registry_with(Task={"text": True}), settings=transcripts.settings)
    assert {h["part"]: h["hidden"] for h in marked.search(account, word, agent=agent)["hits"]} == {
        0: False,
        1: True,
        2: False,
    }
    retired = Transcripts(store, registry=registry_with(bash={"retired": True}), settings=transcripts.settings)
    assert {h["part"] for h in retired.search(account, word, agent=agent)["hits"]} == {1, 2}
    with pytest.raises(NotFound):
        retired.part_slice(account, agent, message_id, 0, "output", 0, 10)
    assert len(transcripts.part_slice(account, agent, message_id, 2, "text")["text"]) == len(word)


def test_a_text_part_is_hidden_only_in_the_middle_past_the_text_bound(
    transcripts: Transcripts, me: tuple[str, str]
) -> None:
    account, agent = me
    word = "Lt" + uuid.uuid4().hex[:8]
    long_id, short_id = new_id(), new_id()
    transcripts.put_message(account, agent, long_id, user("z" * 100_000 + word + "z" * 100_000, long_id))
    transcripts.put_message(account, agent, short_id, user("z" * 30_000 + word + "z" * 30_000, short_id))
    hits = {h["message_id"]: h for h in transcripts.search(account, word, agent=agent)["hits"]}
    assert (hits[long_id]["field"], hits[long_id]["start"], hits[long_id]["hidden"]) == ("text", 100_000, True)
    assert (hits[short_id]["start"], hits[short_id]["hidden"]) == (30_000, False)  # under 64 KiB: sent whole


def test_a_nul_in_a_field_is_stored_and_found(transcripts: Transcripts, store: Store, me: tuple[str, str]) -> None:
    account, shared = me  # an agent of its own, deleted at the end (the module's is shared)
    agent = transcripts.create_agent(account, transcripts.agent(account, shared)["workspace_id"])["id"]
    word = "Nu" + uuid.uuid4().hex[:8]
    message_id = new_id()
    transcripts.put_message(account, agent, message_id, user(f"a\x00b {word}", message_id))
    [hit] = transcripts.search(account, word, agent=agent)["hits"]
    assert hit["start"] == 4
    sliced = transcripts.part_slice(account, agent, message_id, 0, "text")["text"]
    # PostgreSQL text cannot hold NUL: its chunks keep U+FFFD in its place (the part itself keeps NUL).
    kept = "\ufffd" if store.engine.dialect.name == "postgresql" else "\x00"
    assert sliced == "a" + kept + "b " + word
    assert transcripts.part(account, agent, message_id, "0")["text"] == f"a\x00b {word}"
    transcripts.put_message(account, agent, message_id, user("\x00 replaced", message_id))
    assert transcripts.search(account, word, agent=agent)["hits"] == []
    assert [h["start"] for h in transcripts.search(account, "replaced", agent=agent)["hits"]] == [2]
    # FTS5's integrity check compares its index with the chunk rows as stored, and this row's
    # NUL was indexed as U+FFFD: a row it would call corrupt is not left in the shared store.
    transcripts.delete_agent(account, agent)
    caught_up(store)


def test_a_phrase_matches_as_written_not_as_its_trigrams(transcripts: Transcripts, me: tuple[str, str]) -> None:
    # The index keeps which rows hold a trigram, not where: a row holding every trigram of the
    # phrase in another order is let through by it and must still not be a hit.
    account, agent = me
    word = uuid.uuid4().hex[:6]
    scattered, written = new_id(), new_id()
    transcripts.put_message(account, agent, scattered, user(f"{word[:4]} {word[2:]} {word[1:5]}", scattered))
    transcripts.put_message(account, agent, written, user(f"{word}", written))
    assert [h["message_id"] for h in transcripts.search(account, word, agent=agent)["hits"]] == [written]


def test_migration_6_remakes_the_index_and_keeps_every_hit(fresh_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store_core, "MIGRATIONS", [m for m in store_core.MIGRATIONS if m[0] != 6])
    store = open_store(fresh_url)
    try:
        t = Transcripts(store)
        account = t.create_account("before 6")
        workspace = t.create_workspace("before 6", [account["id"]])
        agent = t.create_agent(account["id"], workspace["id"])["id"]
        ids = [new_id() for _ in range(30)]
        for n, message_id in enumerate(ids):
            t.put_message(account["id"], agent, message_id, user(f"say {n}: Needle-Six and more", message_id))
        t.put_message(account["id"], agent, ids[3], user("replaced before the migration", ids[3]))
        caught_up(store)  # as a store before 6 was: every chunk indexed in its write (9 came later)
        monkeypatch.undo()
        assert store.migrate() == [6]
        found = {h["message_id"] for h in t.search(account["id"], "needle-six", limit=100)["hits"]}
        assert found == set(ids) - {ids[3]}
        assert [h["message_id"] for h in t.search(account["id"], '"before the migration"')["hits"]] == [ids[3]]
        t.put_message(account["id"], agent, ids[4], user("gone", ids[4]))  # kept in each write from now on
        assert ids[4] not in {h["message_id"] for h in t.search(account["id"], "needle-six", limit=100)["hits"]}
        if store.engine.dialect.name == "sqlite":
            with store.engine.connect() as conn:
                made = conn.exec_driver_sql("SELECT sql FROM sqlite_master WHERE name = 'part_text_fts'").scalar_one()
            assert "detail='none'" in made
    finally:
        store.close()


FOLDING = "aAiIsSkKx \u0130\u0131\u017f\u212a\u00e9\u00c9\u00df\u1e9e\U0001f600"
# Characters that some folding takes as one (FTS5's or Python's), among them where the two part:
# İ ı, Greek symbols, Cherokee, Georgian, U+FFFD..U+FFFF, the Kelvin and Ångström signs.
ALIKE = ["aA", "iI\u0130\u0131", "sS\u017f", "kK\u212a", "\u00e9\u00c9", "\u00df\u1e9e", "σςΣ", "βϐ",
         "\u00b5μ", "\u00c5\u00e5\u212b", "ǅǆǄ", "Ꭰꭰ", "Აა", "\ufffd\ufffe\uffff", "x", " ", "\U0001f600"]  # fmt: skip
FTS5_FOLDING = "".join(ALIKE)


@st.composite
def text_and_term(draw: st.DrawFn) -> tuple[str, str]:
    """A term, and a text that often holds it with each character maybe swapped for one alike."""
    term = draw(st.text(alphabet=st.sampled_from(FTS5_FOLDING), min_size=1, max_size=4))
    around = st.text(alphabet=st.sampled_from(FTS5_FOLDING) | WORD_CHARS, max_size=6)
    alike = "".join(draw(st.sampled_from(next(a for a in ALIKE if c in a))) for c in term)
    return draw(around) + (alike if draw(st.booleans()) else "") + draw(around), term


@pytest.fixture(scope="module")
def fts5() -> Iterator[sqlite3.Connection]:
    """A real FTS5 trigram table, as the store's (case folded), with its trigrams readable."""
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(text, tokenize='trigram')")
    db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
    yield db
    db.close()


def fts5_folded(db: sqlite3.Connection, text: str) -> str:
    """``text`` as FTS5 folds it, read back from its index: the first character of the trigram
    at each offset (two more characters after it, so that even the last one starts a trigram)."""
    db.execute("DELETE FROM t")
    db.execute("INSERT INTO t(rowid, text) VALUES (1, ?)", (text + "\x01\x01",))
    grams = dict(db.execute("SELECT offset, term FROM v"))
    return "".join(grams[i][0] for i in range(len(text)))


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=text_and_term())
def test_the_match_test_agrees_with_fts5s_case_folding(fts5: sqlite3.Connection, case: tuple[str, str]) -> None:
    # A pending chunk is matched as FTS5 will once it is indexed: its quick path for ASCII words
    # too, beside the two characters outside ASCII that FTS5 folds to ASCII letters (ſ and the
    # Kelvin sign), and not İ nor ı, which it folds to nothing else. A word of 3 characters or
    # more is asked of the index itself, as a phrase (consecutive trigrams: a substring).
    text, term = case
    folded = fts5_folded(fts5, term) in fts5_folded(fts5, text)
    assert contains(text, term) == folded
    if len(term) >= 3:
        fts5.execute("DELETE FROM t")
        fts5.execute("INSERT INTO t(rowid, text) VALUES (1, ?)", (text,))
        phrase = '"' + term.replace('"', '""') + '"'
        assert bool(fts5.execute("SELECT count(*) FROM t WHERE t MATCH ?", (phrase,)).fetchone()[0]) == folded


def test_the_folding_is_fts5s_own_for_every_code_point(fts5: sqlite3.Connection) -> None:
    # store/fold.py's table, against what FTS5 folds each code point of every plane to.
    fts5.execute("DELETE FROM t")
    every = [c for c in range(1, sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF]
    fts5.executemany("INSERT INTO t(rowid, text) VALUES (?, ?)", ((c, "\x01\x01" + chr(c)) for c in every))
    folds = {c: ord(term[2]) for term, c in fts5.execute("SELECT term, doc FROM v") if ord(term[2]) != c}
    assert folds == FOLD


LIKE_EDGES = FOLDING + "%_\\\x00"


@pytest.fixture(scope="module")
def sqlite_store(tmp_path_factory: pytest.TempPathFactory) -> Any:
    store = open_store(f"sqlite:///{tmp_path_factory.mktemp('holds') / 'holds.db'}")
    yield store
    store.close()


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    text=st.text(alphabet=st.sampled_from(LIKE_EDGES), max_size=16),
    term=st.text(alphabet=st.sampled_from("aAiIsSkKx %_\\\u00e9"), min_size=1, max_size=4),
)
def test_sqlite_matches_in_c_as_the_python_test_does(sqlite_store: Store, text: str, term: str) -> None:
    # SQLite checks an ASCII word itself (``lower`` and ``instr``: no row handed to Python),
    # unless the text holds a character that folds to ASCII: either way, ``contains``'s answer.
    with sqlite_store.engine.connect() as conn:
        held = conn.execute(select(sqlite_store.holds(literal(text), term))).scalar_one()
    assert bool(held) == contains(text, term)


@pytest.fixture(scope="module")
def postgres_store(pg_url: str) -> Any:
    store = open_store(pg_url)
    yield store
    store.close()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    text=st.text(alphabet=st.sampled_from(LIKE_EDGES.replace("\x00", "")), max_size=16),
    term=st.text(alphabet=st.sampled_from("aAiIsSkKx %_\\\u00e9\u00c9\u0130\u212a"), min_size=1, max_size=4),
)
def test_postgres_walks_the_folded_text_as_ilike_matches(postgres_store: Store, text: str, term: str) -> None:
    # A walk tests a substring of the text folded by lower(), kept folded while pending (or
    # folded as it is read): the answer of ILIKE, which the trigram index's path gives.
    chunk = table("t", column("text"), column("folded"))
    walked = _sql(postgres_store.walk_holds(chunk.c, term))
    ilike = _sql(postgres_store.holds(chunk.c.text, term))
    with postgres_store.engine.connect() as conn:
        for folded in ("NULL::text", "lower(%(text)s::text)"):
            row = f"SELECT %(text)s::text AS text, {folded} AS folded"
            found = conn.exec_driver_sql(f"SELECT {walked}, {ilike} FROM ({row}) AS t", {"text": text}).one()
            assert found[0] == found[1]


def _sql(clause: Any) -> str:
    """``clause`` as PostgreSQL SQL for the driver, its values inline."""
    return str(clause.compile(dialect=postgresql.dialect(), compile_kwargs={"literal_binds": True}))


def python_matches(work: Callable[[], Any]) -> tuple[Any, int]:
    """``work()``'s answer, and how many times the engine asked Python's match test of a chunk
    meanwhile (each ask takes the interpreter lock from every other request), counted by a
    profile hook that only watches."""
    asked = 0

    def watch(frame: Any, event: str, arg: Any) -> None:
        nonlocal asked
        if event == "call" and frame.f_code is sqlite_store_module._contains.__code__:
            asked += 1

    sys.setprofile(watch)
    try:
        answer = work()
    finally:
        sys.setprofile(None)
    return answer, asked


def test_the_index_is_asked_a_terms_rarest_trigrams_only(monkeypatch: pytest.MonkeyPatch) -> None:
    # An index entry costs the engine what it holds: "fla" is in 30% of a big store's chunks,
    # "la3" in 0.2%. A hex token's commonest trigrams are not asked; its rare ones until they
    # narrow the chunks enough. A term of common trigrams only asks them all, up to PROBES.
    token = "fla3565967a817d62a"
    asked = probes([token])
    assert 2 <= len(asked) <= 6 and "fla" not in asked and set(asked) <= set(trigrams(token))
    assert math.prod(share(g) for g in asked) <= terms.NARROW_TO < math.prod(share(g) for g in asked[:-1])
    # the token has room for three trigrams apart, and those are asked first
    assert not any(set(range(token.index(a), token.index(a) + 3)) & set(range(token.index(b), token.index(b) + 3))
                   for a in asked[:3] for b in asked[:3] if a < b)  # fmt: skip
    assert sorted(probes(["error"])) == ["err", "ror", "rro"]
    long = uuid.uuid4().hex * 2
    monkeypatch.setattr(terms, "NARROW_TO", 0.0)  # as if no trigram narrowed much: up to PROBES
    assert len(trigrams(long)) > PROBES and len(probes([long])) == PROBES
    monkeypatch.undo()
    assert probes(["ab", "x"]) == [] and probes([token], usable=lambda gram: False) == []
    assert fts_query([token]) == " AND ".join(f'"{g}"' for g in asked)


def test_a_chunk_holding_the_asked_trigrams_apart_is_no_hit(transcripts: Transcripts, me: tuple[str, str]) -> None:
    # The index lets through what holds the trigrams asked; the whole term decides, indexed or not.
    account, agent = me
    token = "fl" + uuid.uuid4().hex[:16]
    apart, written, upper = new_id(), new_id(), new_id()
    transcripts.put_message(account, agent, apart, user(" ".join(probes([token])) + " " + token[:-1], apart))
    transcripts.put_message(account, agent, written, user(f"at {token}.", written))
    transcripts.put_message(account, agent, upper, user(f"AT {token.upper()}", upper))
    later = [new_id() for _ in range(40)]  # newer than the walk of the newest chunks reads first (PostgreSQL)
    transcripts.put_messages(account, agent, [(m, user("later", m)) for m in later])
    caught_up(transcripts._store)
    found = [h["message_id"] for h in transcripts.search(account, token, agent=agent)["hits"]]
    assert found == [upper, written]


def test_a_search_of_an_ascii_word_asks_python_of_no_chunk(transcripts: Transcripts, me: tuple[str, str]) -> None:
    # A pathological search ('a' * 256 over every chunk, issue 20) walked thousands of rows, each
    # one handed to Python while the search held a thread: the engine answers an ASCII word
    # itself, and only a chunk holding a character that folds to ASCII (here the Kelvin sign)
    # goes to Python, on either backend.
    account, agent = me
    word = "Gil" + uuid.uuid4().hex[:8]
    plain, kelvin, others = new_id(), new_id(), [new_id() for _ in range(40)]
    for message_id in others:
        transcripts.put_message(account, agent, message_id, user(f"{word[:6]} {word[4:]}", message_id))  # every trigram
    transcripts.put_message(account, agent, plain, user(f"says {word.upper()} here", plain))
    transcripts.put_message(account, agent, kelvin, user(f"\u212a {word}", kelvin))
    caught_up(transcripts._store)
    found, asked = python_matches(lambda: transcripts.search(account, word.lower(), agent=agent, limit=100))
    assert {h["message_id"] for h in found["hits"]} == {plain, kelvin}
    assert asked <= 1  # the Kelvin sign's chunk, on SQLite; none on PostgreSQL


def test_a_phrase_in_every_tenth_message_pages_newest_first_without_gaps(
    transcripts: Transcripts, me: tuple[str, str]
) -> None:
    # Sparse enough that the newest chunks hold some but not a page of it (PostgreSQL then reads
    # further back before it asks its index): every hit still comes, newest first, once.
    account, agent = me
    phrase = f"let me check {uuid.uuid4().hex[:6]}"
    ids = [new_id() for _ in range(300)]
    for n, message_id in enumerate(ids):
        text = f"step {n}: {phrase} again" if n % 10 == 0 else f"step {n}: let me look, check it"
        transcripts.put_message(account, agent, message_id, user(text, message_id))
    found: list[str] = []
    cursor = None
    while True:
        page = transcripts.search(account, f'"{phrase}"', agent=agent, limit=20, cursor=cursor)
        found += [h["message_id"] for h in page["hits"]]
        if (cursor := page["next"]) is None:
            break
    assert found == [ids[n] for n in range(290, -1, -10)]


def all_pages(transcripts: Transcripts, account: str, q: str, **options: Any) -> tuple[list[str], list[dict[str, Any]]]:
    """Every hit's message, following ``next`` to the end, and every page (without its hits)."""
    found: list[str] = []
    pages: list[dict[str, Any]] = []
    cursor = None
    while True:
        page = transcripts.search(account, q, cursor=cursor, **options)
        found += [h["message_id"] for h in page["hits"]]
        pages.append({k: v for k, v in page.items() if k != "hits"} | {"hits": len(page["hits"])})
        if (cursor := page["next"]) is None:
            return found, pages


@pytest.mark.parametrize("word", ["q7", "needle-q7x"])
def test_a_search_out_of_time_answers_with_what_it_has_and_goes_on_from_there(
    transcripts: Transcripts, store: Store, me: tuple[str, str], word: str
) -> None:
    # The word is only in the oldest messages: the newest chunks, read first, hold none of it.
    account = me[0]
    agent = transcripts.create_agent(account, transcripts.create_workspace("alone", [account])["id"])["id"]
    ids = [new_id() for _ in range(300)]
    for n, message_id in enumerate(ids):
        text = f"step {n}: {word} here" if n < 5 else f"step {n}: nothing to see"
        transcripts.put_message(account, agent, message_id, user(text, message_id))
    expected = [ids[n] for n in range(4, -1, -1)]
    assert all_pages(transcripts, account, word, agent=agent, limit=20) == (
        expected,
        [{"next": None, "partial": False, "hits": 5}],
    )
    found, pages = all_pages(transcripts, account, word, agent=agent, limit=20, seconds=0)
    assert found == expected  # every hit, newest first, once
    indexed_whole = store.url.startswith("sqlite") and len(word) >= 3  # FTS5's one query is not cut short
    if not indexed_whole:
        assert pages[0] == {"next": pages[0]["next"], "partial": True, "hits": 0}
        assert pages[0]["next"] and all(p["partial"] for p in pages[:-1])


def test_postgres_walks_when_its_index_runs_out_of_time(
    transcripts: Transcripts, store: Store, me: tuple[str, str], monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # Every trigram of the phrase is in each chunk of the newer outputs, so the index would read
    # and check all of them; given a millisecond, it stops, and the walk finds the hits in order.
    if not store.url.startswith("postgresql"):
        pytest.skip("the trigram index's time share is PostgreSQL's")
    from foldline.store import postgres

    account, agent = me
    phrase = f"let me check {uuid.uuid4().hex[:6]}"
    old = [new_id() for _ in range(3)]
    for message_id in old:
        transcripts.put_message(account, agent, message_id, user(f"then {phrase}", message_id))
    decoy = ("let me look, check it; " * 1500)[:CHUNK - 8] + "\n"
    for _ in range(6):
        message_id = new_id()
        transcripts.put_message(account, agent, message_id, assistant([bash(decoy * 40)], message_id))
    caught_up(store)
    monkeypatch.setattr(postgres, "INDEX_SHARE", 0.001)
    caplog.set_level(logging.DEBUG, logger="foldline")
    found, pages = all_pages(transcripts, account, f'"{phrase}"', agent=agent, limit=20, seconds=math.inf)
    assert found == old[::-1] and pages == [{"next": None, "partial": False, "hits": 3}]
    assert "the trigram index ran out of its time" in caplog.text


def test_postgres_gives_its_index_a_time_limit_for_that_statement_only(
    transcripts: Transcripts, store: Store, me: tuple[str, str]
) -> None:
    # The rest of the search (its joins) and anything after it in the transaction run unlimited.
    if not store.url.startswith("postgresql"):
        pytest.skip("the trigram index's time share is PostgreSQL's")
    from sqlalchemy import select

    from foldline.store.schema import conversations

    account, agent = me
    word = "limit" + uuid.uuid4().hex[:8]
    for n in range(200):
        message_id = new_id()
        transcripts.put_message(account, agent, message_id, user(f"{n}: {word if n == 0 else 'no'}", message_id))
    caught_up(store)
    with store.read() as conn:
        before = conn.exec_driver_sql("SHOW statement_timeout").scalar_one()
        found = store.matching_ids(conn, [word], select(conversations.c.id), None, 20, None)
        assert found is not None and len(found.ids) == 1 and found.stopped is None  # the index answered
        assert conn.exec_driver_sql("SHOW statement_timeout").scalar_one() == before


def test_migration_8_compresses_new_chunks_with_lz4_and_keeps_the_old_ones_found(
    fresh_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PostgreSQL: chunks written before it keep pglz, chunks written after are lz4; both are
    read, sliced and found as before, and a message replaced after it leaves no stale hit."""
    monkeypatch.setattr(store_core, "MIGRATIONS", [m for m in store_core.MIGRATIONS if m[0] != 8])
    store = open_store(fresh_url)
    try:
        t = Transcripts(store)
        account = t.create_account("before 8")["id"]
        agent = t.create_agent(account, t.create_workspace("before 8", [account])["id"])["id"]
        body = "compressible line of output\n" * 2_000  # past TOAST's threshold, so compressed
        old, new, replaced = new_id(), new_id(), new_id()
        t.put_message(account, agent, old, assistant([bash(body + "needle-eight old" + body)], old))
        t.put_message(account, agent, replaced, user("needle-eight replaced", replaced))
        monkeypatch.undo()
        assert store.migrate() == [8]
        t.put_message(account, agent, new, assistant([bash(body + "needle-eight new" + body)], new))
        t.put_message(account, agent, replaced, user("gone", replaced))
        hits = t.search(account, "needle-eight", limit=100)["hits"]
        assert [h["message_id"] for h in hits] == [new, old]
        for h in hits:
            assert h["start"] == len(body) and h["field"] == "output"
            part = t.part_slice(account, agent, h["message_id"], 0, "output", len(body), len(body) + 16)
            assert part["text"].startswith("needle-eight")
        if store.engine.dialect.name == "postgresql":
            with store.engine.connect() as conn:
                methods = dict(
                    conn.exec_driver_sql(
                        "SELECT message_id, pg_column_compression(text) FROM part_text"
                        " WHERE message_id IN (%s, %s) AND start = 0",
                        (old, new),
                    ).all()
                )
            assert methods == {old: "pglz", new: "lz4"}
    finally:
        store.close()
