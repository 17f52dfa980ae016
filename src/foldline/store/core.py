"""What every part of the store stands on: the backend hooks' defaults, statements built once,
and the schema's migration.

:class:`Hooks` is the base of each of the store's mixins (:mod:`.accounts`, :mod:`.agents`,
:mod:`.writes`, :mod:`.reads`, :mod:`.search`); :class:`~.backend.Backend` says what each hook does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, Connection, bindparam, func, insert, select

from .backend import Backend, T
from .rows import Conversation, Matched, SeqChecks, now
from .schema import MIGRATIONS, conversations, messages, metadata, migrations_table, parts

CONVERSATION = [conversations.c[name] for name in Conversation.__dataclass_fields__]
# Set while this thread's commits need not wait for the disk (:meth:`Hooks.batched`).
RELAXED: ContextVar[bool] = ContextVar("foldline_relaxed", default=False)


def m_conv_is() -> Any:
    return messages.c.conversation_id == slot("conv")


def slot(name: str, type_: Any = None) -> Any:
    """A parameter of a statement built once (:meth:`Store._prepare`), given at each run."""
    return bindparam(name, value=None, type_=type_, required=False)


@dataclass(frozen=True, slots=True)
class Prepared:
    """A statement compiled once for the store's driver: its SQL, its constant parameters, and
    (for a positional paramstyle) the order its parameters go in."""

    sql: str
    constants: dict[str, Any]
    order: Sequence[str] | None

    def bind(self, params: dict[str, Any]) -> Any:
        values = {**self.constants, **{k: v for k, v in params.items() if k in self.constants}}
        return values if self.order is None else tuple(values[name] for name in self.order)


class Hooks(Backend):
    """The defaults of the backend hooks (their contract: :class:`~.backend.Backend`), and the
    few helpers every mixin of the store uses. A backend subclasses :class:`~foldline.store.Store`
    and overrides what its engine does otherwise."""

    local = False

    # -- connections ---------------------------------------------------------------------

    @contextmanager
    def write(self) -> Iterator[Connection]:
        with self.engine.begin() as conn:
            if RELAXED.get():
                self.relax(conn)
            yield conn

    def relax(self, conn: Connection) -> None:
        """Let this transaction's commit return before it is on disk (a hook; by default, no)."""

    def sync(self) -> None:
        """Put every commit made so far on disk (a hook; by default each commit already is)."""

    @contextmanager
    def batched(self) -> Iterator[None]:
        """Commits made inside, by this thread, return without waiting for the disk, and are put
        on disk together when it ends: a bulk writer (an import) that can write again what a power
        loss would drop. Other threads' writes, and every write the API acknowledges, still wait."""
        token = RELAXED.set(True)
        try:
            yield
        finally:
            RELAXED.reset(token)
            self.sync()

    @contextmanager
    def read(self) -> Iterator[Connection]:
        with self.engine.begin() as conn:
            yield conn

    @contextmanager
    def driver_cursor(self) -> Iterator[Any]:
        """A cursor of the driver's own, each statement its own transaction (autocommit): a
        read of one statement needs no BEGIN and COMMIT around it."""
        conn = self.engine.raw_connection()
        try:
            yield conn.cursor()
        finally:
            conn.close()

    def prepared(self, key: str, build: Callable[[], Any]) -> Prepared:
        """The statement ``build`` makes, compiled for this store once and kept by ``key``."""
        kept: dict[str, Prepared] = self.__dict__.setdefault("_prepared", {})
        found = kept.get(key)
        if found is None:
            found = kept[key] = self._prepare(build())
        return found

    def run_prepared(self, conn: Connection, key: str, build: Callable[[], Any], params: dict[str, Any]) -> Any:
        """Run the statement ``build`` makes (compiled once, :meth:`prepared`) on ``conn``'s own
        driver connection, in its open transaction; the driver's cursor. A write's few fixed
        statements then cost the driver's call alone, not SQLAlchemy's compile-cache lookup and
        parameter processing (half of a small batch's write)."""
        statement = self.prepared(key, build)
        cursor = conn.connection.driver_connection.cursor()  # type: ignore[union-attr]
        cursor.execute(statement.sql, statement.bind(params))
        return cursor

    def run_prepared_many(
        self, conn: Connection, key: str, build: Callable[[], Any], rows: Sequence[dict[str, Any]]
    ) -> None:
        """:meth:`run_prepared` for many rows of parameters, one ``executemany``."""
        statement = self.prepared(key, build)
        cursor = conn.connection.driver_connection.cursor()  # type: ignore[union-attr]
        cursor.executemany(statement.sql, [statement.bind(row) for row in rows])

    def first_row(self, statement: Prepared, params: dict[str, Any]) -> Any:
        """The first row of a read of one statement (None: none), run as it is on the driver's
        cursor: the read most often asked (is this account a member, what is this conversation)
        costs a round trip, not the five of a SQLAlchemy transaction."""
        with self.driver_cursor() as cursor:
            return cursor.execute(statement.sql, statement.bind(params)).fetchone()

    @contextmanager
    def driver_read(self) -> Iterator[Any]:
        conn = self.engine.raw_connection()
        try:
            cursor = conn.cursor()
            cursor.execute("BEGIN")
            try:
                yield cursor
            finally:
                cursor.execute("ROLLBACK")  # it only read
        finally:
            conn.close()

    def close(self) -> None:
        self.engine.dispose()

    # -- writes --------------------------------------------------------------------------

    def upsert(self, table: Any, values: dict[str, Any], keys: Sequence[str], update_cols: Sequence[str]) -> Any:
        """Insert, or on a clash of ``keys`` update ``update_cols`` (none: leave the row)."""
        stmt = self.dialect_insert(table).values(**values)
        if not update_cols:
            return stmt.on_conflict_do_nothing(index_elements=list(keys))
        return stmt.on_conflict_do_update(index_elements=list(keys), set_={c: stmt.excluded[c] for c in update_cols})

    def upsert_in(
        self, conn: Connection, table: Any, values: dict[str, Any], keys: Sequence[str], update_cols: Sequence[str]
    ) -> None:
        """Run :meth:`upsert` on an open connection."""
        conn.execute(self.upsert(table, values, keys, update_cols))

    def insert_rows(self, conn: Connection, table: Any, rows: Sequence[dict[str, Any]]) -> None:
        """Insert many new rows of one shape (a batch's parts and chunks), in the open transaction."""
        conn.execute(insert(table), list(rows))

    def announce(self, conn: Connection, conversation_id: str) -> None:
        pass

    def listen(self, callback: Callable[[str], None]) -> Callable[[], None]:
        return lambda: None

    def seq_checks(self, size: int) -> SeqChecks | None:
        return None

    # -- reads ---------------------------------------------------------------------------

    def as_bytes(self, column: Any) -> Any:
        return column

    def tool_in(self, names: Sequence[str], among: bool = True) -> Any:
        return parts.c.tool.in_(names) if among else parts.c.tool.not_in(names)

    def byte_length(self, column: Any) -> Any:
        return func.octet_length(column)

    def body_pieces(self, conn: Connection, conversation_id: str, message_id: str, idx: int) -> Iterator[bytes]:
        p = parts.c
        found = conn.execute(
            select(p.body).where(p.conversation_id == conversation_id, p.message_id == message_id, p.idx == idx)
        ).first()
        if found is not None:
            yield found.body if isinstance(found.body, bytes) else found.body.encode()

    def _prepare(self, statement: Any) -> Prepared:
        compiled = statement.compile(dialect=self.engine.dialect, compile_kwargs={"render_postcompile": True})
        return Prepared(str(compiled), dict(compiled.params), compiled.positiontup)

    @staticmethod
    def _conversation_query() -> Any:
        return select(*CONVERSATION)

    # -- schema --------------------------------------------------------------------------

    def migrate(self) -> list[int]:
        """Apply the migrations this database has not had yet; return their numbers."""
        applied: list[int] = []
        with self.write() as conn:
            self.lock_migrations(conn)
            metadata.create_all(conn, tables=[migrations_table])
            done = set(conn.execute(select(migrations_table.c.version)).scalars())
            for version, name, apply in MIGRATIONS:
                if version in done:
                    continue
                apply(conn, self)
                conn.execute(insert(migrations_table).values(version=version, name=name, applied_at=now()))
                applied.append(version)
        if applied:
            self.after_migrating()
        return applied

    def lock_migrations(self, conn: Connection) -> None:
        pass

    def after_migrating(self) -> None:
        pass

    # -- the text index and search -------------------------------------------------------

    def finish_text_index(self, conn: Connection) -> None:
        pass

    def index_texts_after(self, conn: Connection, after_id: int) -> None:
        pass

    def rebuild_text_index(self, conn: Connection) -> None:
        pass

    def compress_text_chunks(self, conn: Connection) -> None:
        pass

    def forget_texts(self, conn: Connection, conversation_id: str, message_id: str | None) -> None:
        pass

    def forget_chunks(self, conn: Connection, ids: Sequence[int]) -> None:
        pass

    def fold_pending(self, conn: Connection) -> None:
        pass

    def storable_text(self, text: str) -> str:
        return text

    def walked(self, t: Any) -> list[ColumnElement[Any]]:
        return [t.text]

    def walk_holds(self, walked: Any, term: str) -> ColumnElement[Any]:
        return self.holds(walked.text, term)

    def plan_search(self, conn: Connection) -> None:
        pass

    def until(self, conn: Connection, cutoff: float, work: Callable[[], T]) -> T | None:
        return work()

    def matching_ids(
        self, conn: Connection, terms: Sequence[str], visible: Any, upto: int | None, limit: int, deadline: float | None
    ) -> Matched | None:
        return None
