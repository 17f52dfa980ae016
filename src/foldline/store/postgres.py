"""PostgreSQL, for teams: any number of ``foldline serve`` processes share one database."""

from __future__ import annotations

import logging
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import IO, Any

import psycopg
from psycopg.abc import Buffer
from psycopg.adapt import Loader
from psycopg_pool import AsyncConnectionPool
from sqlalchemy import (
    ARRAY,
    BigInteger,
    ColumnElement,
    Connection,
    Engine,
    FromClause,
    Text,
    all_,
    any_,
    bindparam,
    cast,
    column,
    create_engine,
    event,
    func,
    literal,
    null,
    select,
    text,
    union_all,
)
from sqlalchemy.dialects.postgresql import aggregate_order_by
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.exc import DBAPIError, DisconnectionError

from ..registry import TextTools
from .core import RELAXED, Prepared, slot
from .errors import StoreError
from .pgbounds import CONNECTING, SmallChecks, bound_options, bound_waits, small, unbounded
from .rows import Chunks, Conversation, Matched, PageRead, StoredBody
from .schema import messages, metadata, part_text, parts
from .search import merged
from .store import Store
from .terms import like_pattern
from .url import shown

PING_IDLE = 2.0  # seconds a pooled connection may rest before it is checked on its way out
CHECK_WAIT = 1.0  # seconds a check waits for a connection; then the read goes the long way


def ping_when_idle(engine: Engine) -> None:
    """Check a pooled connection before use only when it rested over ``PING_IDLE`` seconds (a
    server restart or a dropped link shows there); SQLAlchemy's ``pool_pre_ping`` would ask on
    every checkout, a round trip as dear as a page read's one statement. One found dead is
    replaced by a fresh connection."""

    @event.listens_for(engine, "checkin")
    def rested(dbapi_conn: Any, record: Any) -> None:
        record.info["rested_at"] = time.monotonic()

    @event.listens_for(engine, "checkout")
    def check(dbapi_conn: Any, record: Any, proxy: Any) -> None:
        since = record.info.get("rested_at")
        if since is not None and time.monotonic() - since > PING_IDLE:
            try:
                with small(dbapi_conn):
                    engine.dialect.do_ping(dbapi_conn)
            except Exception as exc:
                raise DisconnectionError("a pooled connection was found closed") from exc


class Utf8Bytes(Loader):
    """PostgreSQL's text as the UTF-8 bytes it sent (psycopg would decode it to ``str``)."""

    def load(self, data: Buffer) -> bytes:
        return bytes(data)


CONVERSATION_SEQ = list(Conversation.__dataclass_fields__).index("seq")  # in a row of CONVERSATION


def _text(value: Any) -> Any:
    """A short text of a page read's row (ids, stamps, times), as ``str``."""
    return value.decode() if isinstance(value, bytes) else value


def need_pg_trgm(url: str) -> StoreError:
    return StoreError(
        f"search needs the PostgreSQL extension pg_trgm, and this role may not create it: {shown(url)}",
        "run `CREATE EXTENSION pg_trgm;` in this database as a superuser (or the database owner), then start again",
    )


CHANNEL = "foldline_changes"
# The indexer's batch: the oldest pending chunks no other indexer holds, marked indexed (which
# adds them to the partial GIN index), in the caller's short transaction.
INDEX_PENDING = text(
    "UPDATE part_text SET pending = false FROM"
    " (SELECT id FROM part_text WHERE pending ORDER BY id LIMIT :n FOR UPDATE SKIP LOCKED) AS batch"
    " WHERE part_text.id = batch.id RETURNING part_text.owned"
)
# Migration 11: a pending chunk's text folded as ILIKE folds it (``lower()``, the column's
# collation), kept by a trigger on the chunk rows: made with the row, remade with its text, and
# dropped (NULL) when the indexer marks it indexed. The writes and the indexer's batch are as before.
FOLD_PENDING = """
ALTER TABLE part_text ADD COLUMN folded text;
CREATE FUNCTION foldline_fold_pending() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.folded := CASE WHEN NEW.pending THEN lower(NEW.text) END;
  RETURN NEW;
END $$;
CREATE TRIGGER part_text_folded BEFORE INSERT OR UPDATE OF pending, text ON part_text
  FOR EACH ROW EXECUTE FUNCTION foldline_fold_pending();
UPDATE part_text SET folded = lower(text) WHERE pending;
"""
FOLDED = column("folded", Text)
# Chunks a search reads straight first (a common word fills its page there); more it reads
# straight when those held the words at all; seconds it then gives the trigram index at most.
NEWEST, WALK_COMMON, INDEX_SHARE = 32, 2048, 0.25
ASYNC_COMMITS = "foldline_async_commits"  # a connection's mark: its session commits without waiting for the log
log = logging.getLogger("foldline")


class PostgresStore(Store):
    def __init__(self, url: str, wait: float | None = None) -> None:
        self.url, self.wait = url, wait
        # ``wait``: the most a statement, a lock or a free connection is waited for (None: no bound)
        # (and a frozen server, that answers nothing, by the client's own bounds: pgbounds)
        options = {} if wait is None else {"options": f"-c statement_timeout={int(wait * 1000)}"
                                           f" -c lock_timeout={int(wait * 1000)}", **bound_options(wait)}  # fmt: skip
        self.engine = create_engine(
            url, pool_size=10, max_overflow=20, pool_timeout=30 if wait is None else wait, connect_args=options
        )
        if wait is not None:
            bound_waits(self.engine, wait)
        ping_when_idle(self.engine)

    @contextmanager
    def write(self) -> Iterator[Connection]:
        # A relaxed write's commit does not wait for the log (synchronous_commit off). The setting
        # is the connection's, kept across its transactions (a bulk writer's hundreds of commits
        # cost no statement each), and set back by the first write on it that is not relaxed: that
        # write commits with the setting already back, and only its commit clears the mark (a
        # rolled-back reset leaves the mark, so the next write sets it back again).
        relaxed = RELAXED.get()
        with self.engine.begin() as conn:
            info = conn.info
            was = info.get(ASYNC_COMMITS, False)
            if relaxed and not was:
                conn.exec_driver_sql("SET synchronous_commit = off")
                info[ASYNC_COMMITS] = True  # marked at once: a rollback leaves it on, slower but never unsafe
            elif was and not relaxed:
                conn.exec_driver_sql("SET synchronous_commit TO DEFAULT")
            yield conn
        if was and not relaxed:
            info[ASYNC_COMMITS] = False

    def sync(self) -> None:
        # A commit that waits for the log (with an id, so it writes a commit record) flushes
        # every record before it: each relaxed commit too.
        with self.engine.begin() as conn:
            conn.exec_driver_sql("SET LOCAL synchronous_commit = on")  # the connection may be a relaxed one
            conn.exec_driver_sql("SELECT txid_current()")

    @contextmanager
    def read(self) -> Iterator[Connection]:
        # One snapshot per read, so a page's messages and parts come from the same moment.
        with self.engine.connect().execution_options(isolation_level="REPEATABLE READ") as conn, conn.begin():
            yield conn

    def announce(self, conn: Connection, conversation_id: str) -> None:
        conn.execute(text("SELECT pg_notify(:channel, :id)"), {"channel": CHANNEL, "id": conversation_id})

    def listen(self, callback: Callable[[str], None]) -> Callable[[], None]:
        stop = threading.Event()
        args = (self.libpq_url, callback, stop)
        thread = threading.Thread(target=_listen, args=args, daemon=True, name="foldline-listen")
        thread.start()
        return stop.set

    def seq_checks(self, size: int) -> LoopChecks:
        statements = {call: self._page_sql(None, call, False, False).conversation for call in (False, True)}
        return LoopChecks(self.libpq_url, statements, size, self.wait)

    @property
    def libpq_url(self) -> str:
        """The database's URL as psycopg itself takes it (no SQLAlchemy driver name)."""
        return self.engine.url.set(drivername="postgresql").render_as_string(hide_password=False)

    def read_page(
        self, account_id: str, agent_id: str, call_id: str | None, *, cut: TextTools | None, limit: int | None,
        before: int | None, known_seq: int | None = None, budget: int | None = None, most: int | None = None,
    ) -> PageRead | None:
        # One statement, so one round trip and one snapshot without BEGIN and COMMIT: the
        # conversation (with the caller's membership), its page of messages and their parts, as
        # rows of one shape told apart by `kind`. Each round trip here costs more than the rows.
        # With a kept copy, the conversation alone first: its small statement is the whole read
        # while the copy holds, and a copy stops holding only after a write.
        shape = (cut, call_id is not None, limit is not None, before is not None)
        params: dict[str, Any] = {"account": account_id, "agent": agent_id, "call": call_id, "before": before,
                                  "limit": None if limit is None else limit + 1,
                                  "budget": UNBOUNDED if budget is None else budget}  # fmt: skip
        if known_seq is not None:
            check = self._page_sql(*shape).conversation
            with self.driver_read() as cursor:
                row = cursor.execute(check.sql, check.bind(params)).fetchone()
            if row is None:
                return None
            if row[CONVERSATION_SEQ] == known_seq:
                conv = Conversation(*[_text(value) for value in row])
                return PageRead(conv, [], [], False, conv.seq, unchanged=True)
        statement = self._one_statement(*shape)
        with self.driver_read() as cursor:
            found = cursor.execute(statement.sql, statement.bind(params)).fetchall()
        if not found or found[0][0] != 0:
            return None
        _, *head, seq, candidates = found[0]
        fields = [_text(value) for value in head]
        ident, workspace, owner, parent, call, title, created, updated = fields
        conv = Conversation(ident, workspace, owner, parent, call, title, int(seq), created, updated)
        rows = sorted((r for r in found if r[0] == 1), key=lambda r: r[9], reverse=True)  # by position
        more = (limit is not None and len(rows) > limit) or int(candidates) > len(rows)  # past the budget
        if limit is not None:
            del rows[limit:]
        if not rows:
            return PageRead(conv, [], [], False, conv.seq)
        page = [(_text(r[1]), r[9], r[10], r[2], _text(r[3]), _text(r[4])) for r in reversed(rows)]
        part_rows = sorted(
            ((r[9], r[10], _text(r[1]), r[2], r[3]) for r in found if r[0] == 2),
            key=lambda r: (r[0], r[1]),  # position, index
        )
        return PageRead(conv, page, part_rows, more, conv.seq)

    @contextmanager
    def driver_cursor(self) -> Iterator[Any]:
        # In autocommit: each statement its own snapshot, no BEGIN and COMMIT.
        conn = self.engine.raw_connection()
        try:
            driver: Any = conn.driver_connection
            driver.autocommit = True
            try:
                yield driver.cursor()
            finally:
                driver.autocommit = False
        finally:
            conn.close()

    @contextmanager
    def driver_read(self) -> Iterator[Any]:
        # In autocommit: a page is one statement, its own snapshot. Text comes back as the UTF-8
        # bytes PostgreSQL sent (Utf8Bytes): the page sends its JSON as it is.
        with self.driver_cursor() as cursor:
            cursor.adapters.register_loader("text", Utf8Bytes)
            yield cursor

    def part_body(self, conv: Conversation, message_id: str, index: int) -> StoredBody | None:
        # psycopg hands a value over whole (as text, decoded to str and encoded again: 11 times
        # its size). So PostgreSQL itself cuts the part's UTF-8 into slices, read at once in the
        # snapshot that found the part into a spool (a slice in memory, the rest in a temporary
        # file), and the connection goes back to the pool before the first byte is sent: a
        # client that stops reading holds a file, never a session idle in its transaction.
        # (A slice per short statement instead: each one would unpack the whole value again.)
        size = func.octet_length(parts.c.body).label("size")
        with self.read() as conn:
            found = conn.execute(self._part_query(conv, message_id, index, size)).first()
            if found is None:
                return None
            key = {"conv": conv.id, "message": message_id, "idx": index, "slice": SLICE}
            spool = tempfile.SpooledTemporaryFile(max_size=SLICE)
            try:
                for piece in _sliced(conn, key, found.size):
                    spool.write(piece)
            except BaseException:
                spool.close()
                raise
        spool.seek(0)
        return StoredBody(found.tool, found.checked, found.size, Chunks(_spooled(spool), spool.close))

    def body_pieces(self, conn: Connection, conversation_id: str, message_id: str, idx: int) -> Iterator[bytes]:
        # Sliced by PostgreSQL, as part_body does, on the export's connection (its snapshot).
        key = {"conv": conversation_id, "message": message_id, "idx": idx, "slice": SLICE}
        return _sliced(conn, key, None)

    def tool_in(self, names: Sequence[str], among: bool = True) -> Any:
        # One array parameter, not one parameter per name: the statement stays short enough for
        # psycopg to cache its conversion.
        names_param = bindparam(None, list(names), type_=ARRAY(Text))
        return parts.c.tool == any_(names_param) if among else parts.c.tool != all_(names_param)

    def _one_statement(self, cut: TextTools | None, call: bool, limited: bool, before: bool) -> Any:
        key = ("one", cut, call, limited, before)
        built: dict[Any, Any] = self.__dict__.setdefault("_page_statements", {})
        if key not in built:
            sql = self._build_page_sql_queries(cut, call, limited, before)
            conv, page, part_query = sql
            c = conv.cte("c")
            # The page's messages, each with its parts' bytes as sent (octet_length reads a
            # value's header, not the value), kept while the bytes of the newer ones are under
            # the budget: the newest message always, and no part of a message past it is read.
            candidates = page.add_columns(self._sent_bytes(cut).label("size")).where(
                messages.c.conversation_id == select(c.c.id).scalar_subquery(),
                messages.c.owner_id == select(c.c.owner_id).scalar_subquery(),
            ).cte("m0")
            newer = func.sum(candidates.c.size).over(order_by=candidates.c.position.desc()) - candidates.c.size
            ranked = select(candidates, newer.label("newer")).cte("m1")
            m = select(*[col for col in ranked.c if col.name not in ("size", "newer")]).where(
                ranked.c.newer < slot("budget", BigInteger)
            ).cte("m")
            p = part_query.where(
                parts.c.conversation_id == select(c.c.id).scalar_subquery(),
                parts.c.position >= select(func.min(m.c.position)).scalar_subquery(),
                parts.c.position <= select(func.max(m.c.position)).scalar_subquery(),
            ).subquery("p")
            text_ = cast(null(), Text)
            one = union_all(
                select(literal(0), c.c.id, c.c.workspace_id, c.c.owner_id, c.c.parent_id, c.c.call_id, c.c.title,
                       c.c.created_at, c.c.updated_at, c.c.seq, select(func.count()).select_from(candidates)
                       .scalar_subquery()),
                select(literal(1), m.c.id, m.c.head, m.c.checked, m.c.created_at, text_, text_, text_, text_,
                       m.c.position, m.c.seq),
                select(literal(2), p.c.tool, p.c.body, p.c.ref, text_, text_, text_, text_, text_, p.c.position,
                       p.c.idx),
            )  # fmt: skip
            built[key] = self._prepare(one)
        return built[key]

    def _sent_bytes(self, cut: TextTools | None) -> Any:
        """The bytes a page sends of a message's parts (their JSON, and their cutParts entries)."""
        sent = self._parts_query(None, cut).selected_columns
        body, ref = sent[4].element, (sent[5].element if cut is not None else None)
        size = func.octet_length(body) if ref is None else func.octet_length(body) + func.coalesce(
            func.octet_length(ref), 0)  # fmt: skip
        return (
            select(func.coalesce(func.sum(size), 0))
            .where(parts.c.conversation_id == messages.c.conversation_id, parts.c.position == messages.c.position)
            .scalar_subquery()
        )

    def after_migrating(self) -> None:
        # Statistics from the start, so the planner keeps the writes' lookups on their indexes
        # even where autovacuum is off or has not come round yet.
        with self.write() as conn:
            unbounded(conn.connection.driver_connection)
            conn.exec_driver_sql("SET LOCAL statement_timeout = 0")
            here = set(conn.exec_driver_sql("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")
                       .scalars())  # fmt: skip
            ours = [t.name for t in metadata.sorted_tables if t.name in here]  # not the catalogs: a tenth of a second
            conn.exec_driver_sql(f"ANALYZE {', '.join(ours)}")

    def lock_migrations(self, conn: Connection) -> None:
        unbounded(conn.connection.driver_connection)
        conn.execute(text("SET LOCAL statement_timeout = 0"))  # a migration takes the time it takes
        conn.execute(text("SET LOCAL lock_timeout = 0"))
        conn.execute(text("SELECT pg_advisory_xact_lock(7438210)"))

    def dialect_insert(self, table: Any) -> Any:
        return pg_insert(table)

    def insert_rows(self, conn: Connection, table: Any, rows: Sequence[dict[str, Any]]) -> None:
        # COPY: the rows stream to the server in one statement, each formatted by psycopg's C
        # code; an executemany sends a statement per row (a third of an import's time went there).
        if not rows:
            return
        names = list(rows[0])
        driver: Any = conn.connection.driver_connection
        with driver.cursor() as cursor, cursor.copy(f"COPY {table.name} ({', '.join(names)}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row([row[name] for name in names])

    def joined(self, n: Any, text: Any) -> Any:
        return func.string_agg(text, aggregate_order_by(literal(""), n))

    def prepare_text_index(self, conn: Connection) -> None:
        try:
            with conn.begin_nested():
                conn.exec_driver_sql("CREATE EXTENSION IF NOT EXISTS pg_trgm")
        except DBAPIError as exc:
            if isinstance(exc.orig, psycopg.errors.InsufficientPrivilege):
                raise need_pg_trgm(self.url) from None
            raise

    def finish_text_index(self, conn: Connection) -> None:
        # Built once the existing parts are in (faster than growing it row by row); kept by
        # PostgreSQL itself from then on, in each write's transaction.
        conn.exec_driver_sql("CREATE INDEX part_text_trgm ON part_text USING gin (text gin_trgm_ops)")

    def index_later(self, conn: Connection) -> None:
        # The GIN index made anew over the indexed chunks only: a chunk written pending costs
        # no trigram work in its write; the indexer's update that marks it indexed adds it.
        log.info("search index: made partial (the chunks the indexer has reached); this reads every chunk")
        conn.exec_driver_sql("DROP INDEX IF EXISTS part_text_trgm")
        conn.exec_driver_sql("CREATE INDEX part_text_trgm ON part_text USING gin (text gin_trgm_ops) WHERE NOT pending")
        conn.exec_driver_sql("CREATE INDEX part_text_pending ON part_text (id) WHERE pending")

    def index_batch(self, conn: Connection, size: int, chars: int) -> tuple[int, int]:
        # SKIP LOCKED: each indexer takes the oldest pending chunks no other one holds. A batch
        # locks only its rows (a writer replacing one of their messages waits for it): ``size`` alone bounds it.
        rows = conn.execute(INDEX_PENDING, {"n": size}).all()
        return len(rows), sum(int(r.owned) for r in rows)

    def fold_pending(self, conn: Connection) -> None:
        # ILIKE in a UTF-8 database is lower() of the text, then of the pattern, then a match:
        # over a backlog, the folding is most of a walk's time (5 of its 6 tenths, 100 M code
        # points in docs/benchmarks.md) and the row's lz4 the rest. Kept folded, a pending
        # chunk costs its lz4 and a substring search. Its space is the text's again, until indexed.
        conn.exec_driver_sql(FOLD_PENDING)
        lz4 = "SELECT 1 FROM pg_attribute WHERE attrelid = 'part_text'::regclass AND attname = 'text'"
        if conn.execute(text(lz4 + " AND attcompression = 'l'")).first() is not None:
            conn.exec_driver_sql("ALTER TABLE part_text ALTER COLUMN folded SET COMPRESSION lz4")

    def walked(self, t: Any) -> list[ColumnElement[Any]]:
        return [t.text, FOLDED]

    def walk_holds(self, walked: Any, term: str) -> ColumnElement[Any]:
        # ``text ILIKE '%term%'`` is ``strpos(lower(text), lower(term)) > 0`` (the pattern taken
        # literally), the term folded by the server with the same collation as the text: a
        # pending chunk's folded text, an indexed one's folded as it is read (as ILIKE would).
        folded = func.coalesce(walked.folded, func.lower(walked.text))
        held: ColumnElement[Any] = func.strpos(folded, func.lower(literal(term, Text))) > 0
        return held

    def compress_text_chunks(self, conn: Connection) -> None:
        # The index's own cost (pg_trgm's trigrams of every chunk) cannot be cut here; the chunk
        # rows' can: pglz compressing 32 K code points a row is most of what they add to a write,
        # lz4 does it several times faster for about the same size, and is faster to read back
        # (a search walking the chunks reads each). Only new rows: PostgreSQL reads either.
        try:
            with conn.begin_nested():
                conn.exec_driver_sql("ALTER TABLE part_text ALTER COLUMN text SET COMPRESSION lz4")
        except DBAPIError as exc:  # before PostgreSQL 14, or a server built without lz4
            if not isinstance(exc.orig, psycopg.errors.FeatureNotSupported | psycopg.errors.SyntaxError):
                raise
            log.warning("this PostgreSQL cannot compress with lz4 (%s); the chunks keep pglz", exc.orig)
            return
        stored = conn.execute(text("SELECT count(*) FROM part_text")).scalar_one()
        log.info("search chunks: compressed with lz4 from now on (the %d stored keep pglz)", stored)

    def text_match(self, terms: Sequence[str]) -> tuple[FromClause, ColumnElement[Any], list[ColumnElement[Any]]]:
        return part_text, part_text.c.id, [self.holds(part_text.c.text, t) for t in terms]

    def holds(self, text: Any, term: str) -> ColumnElement[Any]:
        # ILIKE with %, _ and \ escaped; the GIN index serves terms of 3 code points or more.
        held: ColumnElement[Any] = text.ilike(like_pattern(term), escape="\\")
        return held

    def matching_ids(
        self, conn: Connection, terms: Sequence[str], visible: Any, upto: int | None, limit: int, deadline: float | None
    ) -> Matched:
        """Steps chosen here rather than by the planner, which cannot price the chunks' TOAST.
        First the newest 32 chunks of the visible conversations, read straight (a common word
        fills the page there); if the words were there at all, the next 2,048 (a phrase of
        common words, every trigram of which is in most chunks, fills it there). Then the trigram
        index alone, made to run first (a rare word: a bitmap of the few chunks that can hold
        it), its matches kept to the visible conversations and ordered, given a share of the
        time left. If it runs out of that time, the words are in too many chunks for the index
        to help (it would read and check each before ordering them), and the walk goes on newest
        first until the page is full or the time is up, saying where it stopped."""
        found = self.walk(conn, terms, visible, upto, limit, None, most=NEWEST)
        if found.ids and found.stopped is not None and len(found.ids) < limit:
            more = self.walk(conn, terms, visible, found.stopped, limit - len(found.ids), deadline, most=WALK_COMMON)
            found = _then(found, more)
        if len(found.ids) >= limit or found.stopped is None:
            return found
        share = INDEX_SHARE if deadline is None else min(INDEX_SHARE, (deadline - time.monotonic()) / 2)
        if share <= 0:  # out of time already: answer with what the newest chunks gave
            return found
        want = limit - len(found.ids)
        backlog = self.walk(conn, terms, visible, found.stopped, want, deadline, pending=True)
        if deadline is not None:
            share = min(share, (deadline - time.monotonic()) / 2)
        try:
            with conn.begin_nested():
                conn.exec_driver_sql(f"SET LOCAL statement_timeout = {max(1, int(share * 1000))}")
                indexed = self._indexed(conn, terms, visible, found.stopped, want, backlog.stopped)
                conn.exec_driver_sql("SET LOCAL statement_timeout TO DEFAULT")  # a savepoint released keeps it
                return _then(found, merged(indexed, backlog, want))
        except DBAPIError as exc:
            if not isinstance(exc.orig, psycopg.errors.QueryCanceled):
                raise
        log.debug("search: the trigram index ran out of its time; walking the chunks newest first")
        return _then(found, self.walk(conn, terms, visible, found.stopped, limit - len(found.ids), deadline))

    def _indexed(
        self, conn: Connection, terms: Sequence[str], visible: Any, upto: int, limit: int, above: int | None
    ) -> list[int]:
        """The newest ``limit`` matching chunk ids at most ``upto`` (and over ``above``), by the
        trigram index alone: the indexed chunks (the pending ones are walked)."""
        t = part_text.c
        conn.exec_driver_sql("SET LOCAL enable_seqscan = off")
        matched = [~t.pending, *(self.holds(t.text, term) for term in terms)]
        # The bound on ids stays outside: inside, it would offer the planner the primary key,
        # whose backward walk reading every chunk it then prefers to the trigram index.
        hits = select(t.id, t.conversation_id).where(*matched).cte("hits").prefix_with("MATERIALIZED")
        rest = select(hits.c.id).where(hits.c.id <= upto, hits.c.conversation_id.in_(visible.scalar_subquery()))
        if above is not None:
            rest = rest.where(hits.c.id > above)
        rest = rest.order_by(hits.c.id.desc()).limit(limit)
        return list(conn.execute(rest).scalars())

    def plan_search(self, conn: Connection) -> None:
        # The chunks live in TOAST, whose reading the planner does not cost: left alone it scans
        # the whole table for a rare word (seconds) instead of asking the GIN index (milliseconds).
        # Index scans stay open to it, so a common word still walks the ids backwards and stops early.
        conn.exec_driver_sql("SET LOCAL enable_seqscan = off")

    def storable_text(self, text: str) -> str:
        # PostgreSQL text cannot hold NUL: it is kept as U+FFFD (one code point for one, so offsets hold).
        return text.replace("\x00", "\ufffd")


class LoopChecks:
    """:class:`~.base.SeqChecks` on asynchronous connections of the loop that opens them: a
    page this process kept is checked with one small statement, and no thread hop (a hop to a
    thread and back costs more than the statement)."""

    def __init__(self, url: str, statements: dict[bool, Prepared], size: int, wait: float | None = None) -> None:
        self.statements = statements
        kwargs: dict[str, Any] = {"autocommit": True, "application_name": "foldline page checks"}
        bounded: dict[str, Any] = {}
        if wait is not None:  # a check that gets no answer in time sends the page to the route
            kwargs.update(bound_options(wait))
            bounded["connection_class"] = SmallChecks
        self.pool = AsyncConnectionPool(
            url, min_size=1, max_size=size, open=False, timeout=CHECK_WAIT, name="foldline-checks", kwargs=kwargs,
            **bounded,
        )  # fmt: skip

    async def open(self) -> None:
        await self.pool.open()

    async def close(self) -> None:
        await self.pool.close()

    async def seq(self, account_id: str, agent_id: str, call_id: str | None) -> int | None:
        check = self.statements[call_id is not None]
        params = check.bind({"account": account_id, "agent": agent_id, "call": call_id})
        async with self.pool.connection() as conn:
            row = await (await conn.execute(check.sql, params, prepare=True)).fetchone()
        return None if row is None else int(row[CONVERSATION_SEQ])


def _then(first: Matched, more: Matched) -> Matched:
    """What a step found, then what the next step found below it."""
    return Matched(first.ids + more.ids, more.stopped)


def _listen(url: str, callback: Callable[[str], None], stop: threading.Event) -> None:
    """LISTEN for other processes' writes until ``stop``; reconnect after a lost connection."""
    while not stop.is_set():
        try:
            with psycopg.connect(url, autocommit=True, connect_timeout=CONNECTING) as conn:
                conn.execute(f"LISTEN {CHANNEL}")
                while not stop.is_set():
                    for notice in conn.notifies(timeout=1.0):
                        callback(notice.payload)
        except psycopg.Error as exc:
            log.warning("lost the PostgreSQL notice connection (%s); polling until it is back", exc)
            stop.wait(2.0)


SLICE = 1 << 20
UNBOUNDED = 1 << 62  # a page's budget when it has none


# The part's UTF-8 made once (MATERIALIZED: not once per slice), then cut in order (LATERAL).
SLICES = """
WITH p AS MATERIALIZED (
  SELECT convert_to(body, 'UTF8') AS b FROM parts
  WHERE conversation_id = %(conv)s AND message_id = %(message)s AND idx = %(idx)s
)
SELECT substring(p.b FROM s FOR %(slice)s)
FROM p CROSS JOIN LATERAL generate_series(1, octet_length(p.b), %(slice)s) AS s
"""


def _spooled(spool: IO[bytes]) -> Iterator[bytes]:
    while piece := spool.read(SLICE):
        yield piece


def _sliced(conn: Connection, key: dict[str, Any], size: int | None) -> Iterator[bytes]:
    """A part's bytes, one slice a round trip, through a cursor on the server (this process
    holds one slice, PostgreSQL the part), in ``conn``'s snapshot that found the part."""
    driver: Any = conn.connection.driver_connection
    sent = 0
    with driver.cursor(name="foldline_part", binary=True) as cursor:
        cursor.execute(SLICES, key)
        while (row := cursor.fetchone()) is not None:
            sent += len(row[0])
            yield row[0]
    if size is not None and sent != size:  # cannot be, in one snapshot; but never a short answer sent as whole
        raise RuntimeError(f"a part read whole gave {sent} of its {size} bytes")
