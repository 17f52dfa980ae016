"""SQLite: the embedded default. One file, WAL, one writer at a time (``BEGIN IMMEDIATE``).

``synchronous=FULL`` by default: in WAL mode every commit syncs the log, so a write the API
acknowledged survives a power loss. ``normal`` syncs only at checkpoints: faster, and still safe
against a crash of the process, but a power loss may drop the last acknowledged writes.
"""

from __future__ import annotations

import functools
import itertools
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import watchfiles
from sqlalchemy import (
    ColumnElement,
    Connection,
    FromClause,
    LargeBinary,
    bindparam,
    case,
    cast,
    column,
    create_engine,
    event,
    false,
    func,
    literal_column,
    or_,
    select,
    table,
    text,
    true,
)
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.exc import OperationalError

from .backend import T
from .core import RELAXED
from .errors import PartChanged
from .rows import SOMETHING, Chunks, Conversation, Matched, StoredBody
from .schema import part_text, parts
from .staging import STAGE_OVER
from .store import Store
from .terms import FOLDS_TO_ASCII, contains, contains_utf8, folded_to, fts_query, indexed

log = logging.getLogger("foldline")

# The chunks' FTS5 index: trigrams, case folded, over part_text.text (stored once: external
# content), keeping which rows hold a trigram but not where (``detail='none'``, since migration 6).
FTS = table("part_text_fts", column("rowid"), column("text"))
INDEX_RANGE = text(
    "INSERT INTO part_text_fts(rowid, text) SELECT id, foldline_fts_text(text) FROM part_text"
    " WHERE id > :after AND id <= :upto"
)
# The indexer's statements (``index_batch``): a batch is the oldest pending chunks, whose ids
# span [lo, hi] (every pending chunk in it, the write lock held); the rows a write replaced go
# first, each given to FTS5's 'delete' with the text it was indexed with.
PENDING_FIRST = text("SELECT id, owned FROM part_text WHERE pending = 1 ORDER BY id LIMIT :n")
INDEX_PENDING = text(
    "INSERT INTO part_text_fts(rowid, text) SELECT id, foldline_fts_text(text) FROM part_text"
    " WHERE pending = 1 AND id BETWEEN :lo AND :hi"
)
MARK_INDEXED = text("UPDATE part_text SET pending = 0 WHERE pending = 1 AND id BETWEEN :lo AND :hi")
FORGET = text(
    "INSERT INTO part_text_unindex(id, text) SELECT id, text FROM part_text"
    " WHERE conversation_id = :conv AND message_id = :message AND pending = 0"
)
FORGET_ALL = text(
    "INSERT INTO part_text_unindex(id, text) SELECT id, text FROM part_text"
    " WHERE conversation_id = :conv AND pending = 0"
)
FORGET_IDS = text(
    "INSERT INTO part_text_unindex(id, text) SELECT id, text FROM part_text WHERE id IN :ids AND pending = 0"
)
UNINDEX = text(
    "INSERT INTO part_text_fts(part_text_fts, rowid, text)"
    " SELECT 'delete', id, foldline_fts_text(text) FROM part_text_unindex WHERE id <= :upto"
)
GONE_FIRST = text("SELECT id, length(text) AS owned FROM part_text_unindex ORDER BY id LIMIT :n")
UNQUEUE = text("DELETE FROM part_text_unindex WHERE id <= :upto")
PROGRESS_STEPS = 10_000  # SQLite's virtual machine steps between two looks at a statement's time
BUSY_SECONDS = 30.0  # how long a connection waits on another one's lock, unless told (``wait``)
REINDEX_BATCH = 2_000  # chunk rows indexed per step of migration 6
# Another process's commits are told at most once per this many milliseconds: an import commits
# many times a second, and each notice makes the server look at every followed conversation.
LOOK_MS = 100


class SQLiteStore(Store):
    local = True
    stage_over = STAGE_OVER  # one write lock per file: a big write is staged (store/staging.py)

    def __init__(self, url: str, synchronous: str = "full", wait: float | None = None) -> None:
        self.url = url
        self.wait = BUSY_SECONDS if wait is None else wait
        self.engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": self.wait})
        self._writer = threading.Lock()
        self.mode = mode = "NORMAL" if synchronous.lower() == "normal" else "FULL"
        event.listen(self.engine, "connect", lambda conn, record: _on_connect(conn, mode, self.wait))
        event.listen(self.engine, "begin", _on_begin)

    @contextmanager
    def write(self) -> Iterator[Connection]:
        # One writer per process at a time; BEGIN IMMEDIATE between processes, asked again every
        # millisecond (``_begin_write``).
        if not self._writer.acquire(timeout=self.wait):
            raise sqlite3.OperationalError("database is locked (by this process's writer)")
        try:
            with self.engine.connect().execution_options(foldline_write=self.wait) as conn:
                relaxed = RELAXED.get() and self.mode == "FULL"
                if relaxed:  # in WAL mode NORMAL syncs at checkpoints alone (sync() does the rest)
                    _synchronous(conn, "NORMAL")
                try:
                    with conn.begin():
                        yield conn
                finally:
                    if relaxed:
                        _synchronous(conn, self.mode)
        finally:
            self._writer.release()

    def sync(self) -> None:
        # What a FULL commit does: the write-ahead log synced, with every commit in it.
        wal = Path(f"{self.engine.url.database}-wal")
        try:
            fd = os.open(wal, os.O_RDONLY)
        except FileNotFoundError:  # checkpointed away: in the database file, synced by the checkpoint
            return
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    def dialect_insert(self, table: Any) -> Any:
        return sqlite_insert(table)

    def insert_rows(self, conn: Connection, table: Any, rows: Sequence[dict[str, Any]]) -> None:
        # The driver's own executemany of one INSERT, each row a tuple: SQLAlchemy's executemany
        # processes every row's parameters in Python first (a fifth of an import's writes).
        if not rows:
            return
        names = list(rows[0])
        sql = f"INSERT INTO {table.name} ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})"
        driver: Any = conn.connection.driver_connection
        driver.executemany(sql, [tuple(row[name] for name in names) for row in rows])

    def compact(self) -> None:
        # The search index merged into fresh segments, the file rebuilt without its free pages,
        # and the write-ahead log checkpointed and cut to nothing: no old text stays in either.
        with self._writer:
            raw = self.engine.raw_connection()
            try:
                driver = raw.driver_connection
                assert driver is not None
                driver.isolation_level = None
                driver.execute("INSERT INTO part_text_fts(part_text_fts) VALUES ('optimize')")
                driver.execute("VACUUM")
                driver.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            finally:
                raw.close()

    def part_body(self, conv: Conversation, message_id: str, index: int) -> StoredBody | None:
        # The body is read from the file as it is sent (SQLite's incremental BLOB I/O), a chunk
        # per short read transaction of its own that finds the part again and checks it is
        # still the version being sent (its seq): between chunks nothing is held, so a client
        # that stops reading pins no snapshot (the write-ahead log is checkpointed and reused
        # meanwhile) and no pooled connection. A part written again ends the sending short.
        # A body stored in pieces (store/staging.py) is sent a piece per short read, likewise.
        query = self._part_query(conv, message_id, index, ROWID, parts.c.seq, parts.c.pieces)
        with self.read() as conn:
            found = conn.execute(query).first()
            if found is None:
                return None
            if found.pieces is not None:
                size = conn.execute(PIECES_SIZE, {"key": found.pieces}).scalar_one()
            else:
                size = _blob(conn, found.row, len)
        key = {"conv": conv.id, "message": message_id, "idx": index}
        reads = (
            self._short_reads(key, found.seq, size)
            if found.pieces is None
            else self._piece_reads(key, found.seq, found.pieces)
        )
        return StoredBody(found.tool, found.checked, int(size), Chunks(reads, _nothing))

    def _short_reads(self, key: dict[str, Any], seq: int, size: int) -> Iterator[bytes]:
        sent = 0
        while sent < size:
            with self.read() as conn:
                now = conn.execute(PART_NOW, key).first()
                if now is None or now.seq != seq:
                    raise PartChanged()
                chunk = _blob(conn, now.row, functools.partial(_read_at, at=sent, size=size))
            sent += len(chunk)
            yield chunk

    def _piece_reads(self, key: dict[str, Any], seq: int, pieces: str) -> Iterator[bytes]:
        n = 0
        while True:
            with self.read() as conn:
                now = conn.execute(PART_NOW, key).first()
                if now is None or now.seq != seq:
                    raise PartChanged()
                piece = conn.execute(PIECE_AT, {"key": pieces, "n": n}).scalar()
            if piece is None:
                return
            n += 1
            yield bytes(piece)

    def body_pieces(self, conn: Connection, conversation_id: str, message_id: str, idx: int) -> Iterator[bytes]:
        # Incremental BLOB I/O on the export's own connection, so in its snapshot; a body in
        # pieces a piece at a time.
        p = parts.c
        found: Any = conn.execute(
            select(literal_column("parts.rowid").label("row"), p.pieces).where(
                p.conversation_id == conversation_id, p.message_id == message_id, p.idx == idx
            )
        ).first()
        if found is None:
            return
        if found.pieces is not None:
            for n in itertools.count():
                piece = conn.execute(PIECE_AT, {"key": found.pieces, "n": n}).scalar()
                if piece is None:
                    return
                yield bytes(piece)
        driver: Any = conn.connection.driver_connection
        blob = driver.blobopen("parts", "body", found.row, readonly=True)
        try:
            yield from _read_blob(blob)
        finally:
            blob.close()

    def as_bytes(self, column: Any) -> Any:
        # A BLOB cast hands SQLite's UTF-8 over as it is stored: no str is made of it.
        return cast(column, LargeBinary).label(column.name)

    def byte_length(self, column: Any) -> Any:
        return func.length(cast(column, LargeBinary))

    def listen(self, callback: Callable[[str], None]) -> Callable[[], None]:
        """Say ``SOMETHING`` when another process writes to this file: SQLite has no notices, but
        every commit writes its write-ahead log, and the operating system tells who watches it."""
        database = self.engine.url.database
        if not database or database == ":memory:":
            return lambda: None
        stop = threading.Event()
        thread = threading.Thread(
            target=_watch_log, args=(Path(database), callback, stop), daemon=True, name="foldline-wal-watch"
        )
        thread.start()
        return stop.set

    def prepare_text_index(self, conn: Connection) -> None:
        conn.exec_driver_sql(
            "CREATE VIRTUAL TABLE part_text_fts USING fts5("
            "text, content='part_text', content_rowid='id', tokenize='trigram')"
        )

    def index_texts_after(self, conn: Connection, after_id: int) -> None:
        conn.execute(INDEX_RANGE, {"after": after_id, "upto": 2**63 - 1})

    def rebuild_text_index(self, conn: Connection) -> None:
        # Positions made the index 2.3 times the text and a write 6 to 8 times slower; a phrase
        # needs them in FTS5, but the whole term is checked on each row anyway (``text_match``).
        conn.exec_driver_sql("DROP TABLE part_text_fts")
        conn.exec_driver_sql(
            "CREATE VIRTUAL TABLE part_text_fts USING fts5("
            "text, content='part_text', content_rowid='id', tokenize='trigram', detail='none')"
        )
        last = conn.execute(text("SELECT coalesce(max(id), 0) FROM part_text")).scalar_one()
        for after in range(0, last, REINDEX_BATCH):
            conn.execute(INDEX_RANGE, {"after": after, "upto": after + REINDEX_BATCH})
            log.info("search index: %d of %d chunk rows", min(after + REINDEX_BATCH, last), last)

    def index_later(self, conn: Connection) -> None:
        conn.exec_driver_sql("CREATE INDEX part_text_pending ON part_text (id) WHERE pending = 1")
        conn.exec_driver_sql("CREATE TABLE part_text_unindex (id INTEGER PRIMARY KEY, text TEXT NOT NULL)")

    def forget_texts(self, conn: Connection, conversation_id: str, message_id: str | None) -> None:
        # An external-content table forgets a row only when told its old text: the indexed
        # rows' text is kept for the indexer (a copy, no trigram work). Until then the index's
        # hit on a row that is gone finds no chunk to join: ids never return (AUTOINCREMENT).
        if message_id is None:
            conn.execute(FORGET_ALL, {"conv": conversation_id})
        else:
            conn.execute(FORGET, {"conv": conversation_id, "message": message_id})

    def forget_chunks(self, conn: Connection, ids: Sequence[int]) -> None:
        conn.execute(FORGET_IDS.bindparams(bindparam("ids", expanding=True)), {"ids": list(ids)})

    def joined(self, n: Any, text: Any) -> Any:
        # group_concat's order is SQLite's to choose: the pieces are joined by their number.
        return func.foldline_joined(n, text)

    def has_pending(self) -> bool:
        # Rows to forget are work too (until then FTS5 keeps their trigrams, which no hit shows).
        if super().has_pending():
            return True
        with self.read() as conn:
            return conn.execute(text("SELECT 1 FROM part_text_unindex LIMIT 1")).first() is not None

    def index_batch(self, conn: Connection, size: int, chars: int) -> tuple[int, int]:
        # One indexer at a time per file: the write lock (BEGIN IMMEDIATE) is held from the
        # start, so every other writer waits for the batch: it is cut to about ``chars``.
        gone = _first(conn.execute(GONE_FIRST, {"n": size}).all(), chars)
        if gone:
            conn.execute(UNINDEX, {"upto": gone[-1].id})
            conn.execute(UNQUEUE, {"upto": gone[-1].id})
        batch = _first(conn.execute(PENDING_FIRST, {"n": size}).all(), chars)
        if not batch:  # rows forgotten are work done: an indexer goes on while any are left
            return len(gone), sum(int(row.owned) for row in gone)
        span = {"lo": batch[0].id, "hi": batch[-1].id}
        conn.execute(INDEX_PENDING, span)
        conn.execute(MARK_INDEXED, span)
        return len(batch), sum(int(row.owned) for row in batch)

    def holds(self, text: Any, term: str) -> ColumnElement[Any]:
        # An ASCII term is looked for by SQLite itself, as ``terms.contains_utf8`` first does
        # (ASCII case folding over the UTF-8: found there, a match), with no call into Python
        # for each row: a search walking thousands of chunks took the interpreter lock once per
        # row, from every other request (docs/security.md, issue 20). Not found, only a term with
        # a letter that FTS5 folds ſ or K to (s, k), in a chunk holding one of them, is asked of
        # Python, as is a term past ASCII; the chunk goes as its UTF-8 bytes, undecoded. Each
        # folds as FTS5 does (store/fold.py): a pending chunk matches as it will once indexed.
        in_python = func.foldline_contains(cast(text, LargeBinary), term) == 1
        if not term.isascii():
            return in_python
        found = func.instr(func.lower(text), term.lower()) > 0
        if not folded_to(term):
            return found
        folds = or_(*(func.instr(text, c) > 0 for c in FOLDS_TO_ASCII))
        return case((found, true()), (folds, in_python), else_=false())

    def text_match(self, terms: Sequence[str]) -> tuple[FromClause, ColumnElement[Any], list[ColumnElement[Any]]]:
        # The index finds the rows holding every trigram of the terms of 3 code points or more;
        # each row it lets through is checked by the same Python test the hits use.
        conditions = [self.holds(part_text.c.text, t) for t in terms]
        long = [t for t in terms if indexed(t)]
        if not long:  # nothing to look up: ``matching_ids`` walks the chunks
            return part_text, part_text.c.id, conditions
        source = FTS.join(part_text, part_text.c.id == FTS.c.rowid)
        # The table's name, not a column, on the left: detail='none' takes no column filter.
        matched = literal_column("part_text_fts").op("MATCH")(fts_query(long))
        return source, FTS.c.rowid, [matched, *conditions]

    def until(self, conn: Connection, cutoff: float, work: Callable[[], T]) -> T | None:
        # The statement is stopped between two of its steps (SQLite's progress handler) once
        # the time is up: FTS5 finds the rows that hold the trigrams newest first, but the words
        # may be in most of them (``'a' * 256`` is one trigram) and every one is checked.
        driver: Any = conn.connection.driver_connection
        driver.set_progress_handler(lambda: time.monotonic() >= cutoff, PROGRESS_STEPS)
        try:
            return work()
        except OperationalError as exc:
            if "interrupt" not in str(exc.orig):
                raise
            return None
        finally:
            driver.set_progress_handler(None, PROGRESS_STEPS)

    def matching_ids(
        self, conn: Connection, terms: Sequence[str], visible: Any, upto: int | None, limit: int, deadline: float | None
    ) -> Matched | None:
        # FTS5 walks its index newest first and stops at the page: the one query is best. Terms
        # all too short for a trigram have nothing to look up: the chunks are walked, in time.
        if any(indexed(t) for t in terms):
            return None
        return self.walk(conn, terms, visible, upto, limit, deadline)


BLOB_CHUNK = 1 << 20


def _first(rows: Sequence[Any], chars: int) -> Sequence[Any]:
    """The first ``rows`` (by id) whose ``owned`` code points add up to ``chars``, at least one."""
    total = 0
    for n, row in enumerate(rows):
        total += int(row.owned or 0)
        if total >= chars:
            return rows[: n + 1]
    return rows


ROWID: Any = literal_column("parts.rowid").label("row")
PIECES_SIZE = text("SELECT coalesce(sum(bytes), 0) FROM part_pieces WHERE key = :key")
PIECE_AT = text("SELECT CAST(text AS BLOB) FROM part_pieces WHERE key = :key AND n = :n")
PART_NOW = text(
    "SELECT rowid AS row, seq FROM parts WHERE conversation_id = :conv AND message_id = :message AND idx = :idx"
)


def _blob(conn: Connection, row: int, use: Callable[[Any], T]) -> T:
    """``use(blob)`` of the part's body at ``row``, opened in ``conn``'s read transaction."""
    driver: Any = conn.connection.driver_connection
    with driver.blobopen("parts", "body", row, readonly=True) as blob:
        return use(blob)


def _read_at(blob: Any, *, at: int, size: int) -> bytes:
    """The chunk at byte ``at`` of a body known to be ``size`` bytes long (else it changed)."""
    if len(blob) != size:
        raise PartChanged()
    blob.seek(at)
    chunk: bytes = blob.read(BLOB_CHUNK)
    return chunk


def _read_blob(blob: Any) -> Iterator[bytes]:
    while chunk := blob.read(BLOB_CHUNK):
        yield chunk


def _nothing() -> None:
    """Nothing to let go of: each short read let go of its own."""


def _watch_log(database: Path, callback: Callable[[str], None], stop: threading.Event) -> None:
    names = {database.name, database.name + "-wal"}

    def ours(change: watchfiles.Change, path: str) -> bool:
        return Path(path).name in names

    try:
        watching = watchfiles.watch(
            database.parent, watch_filter=ours, stop_event=stop, debounce=LOOK_MS, step=LOOK_MS, recursive=False
        )
        for _ in watching:
            callback(SOMETHING)
    except Exception:  # without it, live follow still finds other processes' writes by polling
        log.warning("cannot watch %s for other processes' writes; polling instead", database, exc_info=True)


def _synchronous(conn: Connection, mode: str) -> None:
    driver = conn.connection.driver_connection
    assert driver is not None
    driver.execute(f"PRAGMA synchronous={mode}")  # outside a transaction: the driver autocommits


def _on_connect(dbapi_conn: Any, synchronous: str, wait: float) -> None:
    # Let SQLAlchemy's "begin" event issue BEGIN itself, so writes can say IMMEDIATE.
    dbapi_conn.isolation_level = None
    cursor = dbapi_conn.cursor()
    cursor.execute(f"PRAGMA busy_timeout={int(wait * 1000)}")
    _use_wal(cursor)
    cursor.execute(f"PRAGMA synchronous={synchronous}")
    cursor.close()
    dbapi_conn.create_function("foldline_contains", 2, _contains, deterministic=True)
    dbapi_conn.create_function("foldline_fts_text", 1, _fts_text, deterministic=True)
    dbapi_conn.create_aggregate("foldline_joined", 2, _Joined)


def _use_wal(cursor: Any) -> None:
    """Switch the file to WAL. While another connection switches the same new file, SQLite
    answers "database is locked" at once, without waiting its busy timeout (seen with six stores
    starting at once on one new file: one run in ten): so ask again until that timeout."""
    deadline = time.monotonic() + BUSY_SECONDS
    while True:
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)


def _fts_text(text: Any) -> Any:
    """A chunk's text as the FTS5 index is given it: FTS5 stops reading a text at a NUL, so each
    NUL is indexed as U+FFFD (the chunk itself keeps it; no query can hold a NUL)."""
    return text.replace("\x00", "\ufffd") if isinstance(text, str) else text


class _Joined:
    """``foldline_joined(n, text)``: the texts joined in the order of ``n`` (a body's pieces)."""

    def __init__(self) -> None:
        self.pieces: list[tuple[int, str]] = []

    def step(self, n: int, text: str) -> None:
        self.pieces.append((n, text))

    def finalize(self) -> str | None:
        return "".join(text for _, text in sorted(self.pieces)) if self.pieces else None


def _contains(haystack: Any, term: Any) -> int:
    if not isinstance(term, str):
        return 0
    if isinstance(haystack, bytes):
        return int(contains_utf8(haystack, term))
    return int(isinstance(haystack, str) and contains(haystack, term))


def _on_begin(conn: Connection) -> None:
    wait = conn.get_execution_options().get("foldline_write")
    if wait is None:
        conn.exec_driver_sql("BEGIN")
    else:
        _begin_write(conn.connection.driver_connection, wait)


def _begin_write(driver: Any, wait: float) -> None:
    """``BEGIN IMMEDIATE``, asked again every millisecond while another process writes, up to
    ``wait`` seconds. SQLite's own busy handler sleeps longer each time (1, 2, 5, 10 … 100 ms):
    a writer of another process that writes in short transactions back to back (a big write
    staged, an import) would find it asleep at every gap between them, and keep it waiting far
    longer than any one of its transactions (store/staging.py)."""
    deadline = time.monotonic() + wait
    driver.execute("PRAGMA busy_timeout=0")
    try:
        while True:
            try:
                driver.execute("BEGIN IMMEDIATE")
                return
            except sqlite3.OperationalError as exc:
                if ("locked" not in str(exc) and "busy" not in str(exc)) or time.monotonic() >= deadline:
                    raise
                time.sleep(0.001)
    finally:
        driver.execute(f"PRAGMA busy_timeout={int(wait * 1000)}")
