"""The indexer (``foldline.indexer``) on both backends: it catches up in the background, several
on one PostgreSQL store index every chunk once, and a ``kill -9`` mid-batch loses nothing."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest
from conftest import BACKENDS, pg_database
from core_helpers import assistant, bash, caught_up, new_id, user

from foldline.indexer import Indexer
from foldline.service import Transcripts
from foldline.store import Store, open_store
from foldline.store.chunks import CHUNK

WAIT = 120  # seconds a test waits for a condition before it fails (never a measure of speed)


@pytest.fixture(params=BACKENDS)
def own_url(request: pytest.FixtureRequest, tmp_path: Path) -> object:
    """A store of the test's own: these tests count every chunk in it."""
    if request.param == "sqlite":
        yield str(tmp_path / "indexer.db")
        return
    with pg_database("foldline_indexer") as url:
        yield url


def until(condition: object, what: str) -> None:
    deadline = time.monotonic() + WAIT
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"gave up waiting: {what}"
        time.sleep(0.05)


def written(t: Transcripts, messages: int, word: str) -> tuple[str, str, list[str]]:
    """An account whose agent holds ``messages`` messages with ``word``, some over several chunks."""
    account = t.create_account("indexer")["id"]
    agent = t.create_agent(account, t.create_workspace("indexer", [account])["id"])["id"]
    ids = [new_id() for _ in range(messages)]
    for n, message_id in enumerate(ids):
        body = f"{n} {word}\n" + "more output\n" * (CHUNK // 4) if n % 5 == 0 else f"{n}: {word}"
        message = assistant([bash(body)], message_id) if n % 5 == 0 else user(body, message_id)
        t.put_message(account, agent, message_id, message)
    return account, agent, ids


def hits(t: Transcripts, account: str, word: str) -> list[str]:
    ids: list[str] = []
    cursor = None
    while True:
        page = t.search(account, word, cursor=cursor, limit=100, seconds=float("inf"))
        ids += [h["message_id"] for h in page["hits"]]
        if (cursor := page["next"]) is None:
            return ids


def indexed_once(store: Store) -> None:
    """Nothing pending, and the engine's index holds each chunk once (SQLite: FTS5's own check
    of its index against the chunks; PostgreSQL: one GIN entry per row, by construction)."""
    assert store.backlog().chunks == 0 and not store.has_pending()
    if store.engine.dialect.name == "sqlite":
        with store.write() as conn:
            conn.exec_driver_sql("INSERT INTO part_text_fts(part_text_fts, rank) VALUES ('integrity-check', 1)")


def test_the_indexer_catches_up_beside_the_writes(own_url: str) -> None:
    store = open_store(own_url)
    try:
        t = Transcripts(store)
        indexer = Indexer(t, idle=0.05)
        indexer.start()
        try:
            word = "caught" + uuid.uuid4().hex[:6]
            account, _, ids = written(t, 30, word)
            assert hits(t, account, word) == ids[::-1]  # whatever the indexer has reached
            until(lambda: not store.has_pending(), "the backlog to empty")
        finally:
            indexer.stop()
        assert hits(t, account, word) == ids[::-1]
        indexed_once(store)
    finally:
        store.close()


def test_an_imports_indexer_leaves_a_small_backlog_to_the_server(own_url: str) -> None:
    """An import's indexer (``keep``) indexes only while more than ``keep`` code points are
    pending, and then down to half of it: a backlog is left, searches find all of it, and a
    server's indexer (no ``keep``) takes the rest."""
    store = open_store(own_url)
    try:
        t = Transcripts(store)
        word = "kept" + uuid.uuid4().hex[:6]
        account, _, ids = written(t, 150, word)  # more chunks than a few batches take
        keep = store.backlog().chars * 2 // 3
        importer = Indexer(t, idle=0.05, keep=keep)
        importer.start()
        try:
            until(lambda: store.backlog().chars <= keep // 2, "the import's indexer to reach half its keep")
            time.sleep(3 * 0.5)  # a few of its looks at the backlog (indexer.LOOK_SECONDS)
            left = store.backlog().chars
        finally:
            importer.stop()
        assert 0 < left <= keep // 2  # it stopped there: what is left waits for another indexer
        assert hits(t, account, word) == ids[::-1]  # found, indexed or pending
        assert caught_up(store) > 0  # a server's indexer takes the rest
        assert hits(t, account, word) == ids[::-1]
        indexed_once(store)
    finally:
        store.close()



def test_a_servers_indexer_lets_another_processs_writes_go_first(own_url: str) -> None:
    """A server's indexer (``quiet``) does not index while another process writes (here another
    service on the store: its writes do not wake this one), as long as the backlog is small;
    once the writes stop for ``quiet`` seconds, it indexes them all, and its own process's after."""
    store, other = open_store(own_url), open_store(own_url)
    try:
        server, importer = Transcripts(store), Transcripts(other)
        indexer = Indexer(server, idle=0.05, quiet=3.0, quiet_keep=10**9)
        indexer.start()
        try:
            word = "yield" + uuid.uuid4().hex[:6]
            account, _, ids = written(importer, 20, word)  # the "import", from elsewhere
            pending = store.backlog().chunks
            time.sleep(1.0)  # many looks (idle 0.05 s), all inside the quiet time
            assert store.backlog().chunks == pending > 0  # the import's chunks wait for it
            assert hits(server, account, word) == ids[::-1]  # and are found meanwhile
            until(lambda: not store.has_pending(), "the indexer to take the import's chunks once it is quiet")
            own_word = "own" + uuid.uuid4().hex[:6]
            own_account, _, own_ids = written(server, 5, own_word)  # the server's own writes, later
            until(lambda: not store.has_pending(), "the indexer to take its own process's writes")
        finally:
            indexer.stop()
        assert hits(server, own_account, own_word) == own_ids[::-1]
        indexed_once(store)
    finally:
        other.close()
        store.close()


INDEX_IN_A_PROCESS = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from foldline.store import open_store
    store = open_store(sys.argv[1], migrate=False)
    store.has_pending()  # connected
    Path(sys.argv[3] + sys.argv[4]).write_text("ready")
    while not Path(sys.argv[3]).exists():
        time.sleep(0.01)
    done = 0
    while chunks := store.index_pending(int(sys.argv[2]))[0]:
        done += chunks
    print(done)
    """
)


def test_two_indexers_on_one_postgres_store_index_every_chunk_once(tmp_path: Path) -> None:
    with pg_database("foldline_two") as url:
        store = open_store(url)
        try:
            t = Transcripts(store)
            word = "twice" + uuid.uuid4().hex[:6]
            account, _, ids = written(t, 120, word)
            pending = store.backlog().chunks
            go = tmp_path / "go"
            command = [sys.executable, "-c", INDEX_IN_A_PROCESS, url, "1", str(go)]
            runs = [subprocess.Popen([*command, f".{n}"], stdout=subprocess.PIPE, text=True) for n in range(2)]
            until(lambda: all(Path(f"{go}.{n}").exists() for n in range(2)), "both indexers to be ready")
            go.write_text("go")  # both start together, one chunk a batch: they take turns on the backlog
            counts = [int(run.communicate(timeout=WAIT)[0]) for run in runs]
            assert all(run.returncode == 0 for run in runs)
            assert sum(counts) == pending  # each chunk marked by exactly one of them
            assert all(counts), counts  # and both took part
            indexed_once(store)
            assert hits(t, account, word) == ids[::-1]
        finally:
            store.close()


STUCK_IN_A_BATCH = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from foldline.store import open_store
    store = open_store(sys.argv[1], migrate=False)
    real = store.index_batch
    def batch(conn, size, chars):
        done = real(conn, size, chars)
        Path(sys.argv[2]).write_text("in a batch")  # its work done, not committed
        time.sleep(600)
        return done
    store.index_batch = batch
    store.index_pending(int(sys.argv[3]))
    """
)


def test_kill_9_mid_batch_then_a_restart_leaves_every_chunk_indexed_once(own_url: str, tmp_path: Path) -> None:
    store = open_store(own_url)
    try:
        t = Transcripts(store)
        word = "killed" + uuid.uuid4().hex[:6]
        account, agent, ids = written(t, 40, word)
        caught_up(store)  # some chunks indexed before: the batch killed is not the first
        t.put_message(account, agent, ids[0], user(f"replaced: {word}", ids[0]))  # one to forget too
        more = [new_id() for _ in range(20)]
        for message_id in more:
            t.put_message(account, agent, message_id, user(f"after: {word}", message_id))
        pending = store.backlog().chunks
        mark = tmp_path / "in-batch"
        run = subprocess.Popen([sys.executable, "-c", STUCK_IN_A_BATCH, own_url, str(mark), "8"])
        try:
            until(lambda: mark.exists() or run.poll() is not None, "the indexer to be in the middle of a batch")
            assert run.poll() is None, "the indexer ended before it was killed"
            os.kill(run.pid, signal.SIGKILL)
            run.wait(timeout=WAIT)
        finally:
            if run.poll() is None:
                run.kill()
        assert store.backlog().chunks == pending  # the batch rolled back: nothing lost, nothing half done
        assert caught_up(store) == pending  # the next start resumes
        indexed_once(store)
        assert hits(t, account, word) == [*more[::-1], ids[0], *ids[1:][::-1]]  # the replaced one is new again
    finally:
        store.close()



def test_import_wait_index_returns_with_nothing_pending(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from foldline.cli import main

    db = str(tmp_path / "foldline.db")
    logs = Path(__file__).parent / "data" / "transcripts" / "claude-code"
    result = CliRunner().invoke(main, ["import", "--db", db, "--json", "--wait-index", str(logs)])
    assert result.exit_code == 0, result.output
    store = open_store(db)
    try:
        indexed_once(store)
        with store.read() as conn:
            assert conn.exec_driver_sql("SELECT count(*) FROM part_text").scalar_one() > 0
    finally:
        store.close()
