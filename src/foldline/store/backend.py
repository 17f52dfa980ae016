"""What a backend provides: the one list of the hooks :class:`~foldline.store.Store` runs on.

The store's SQL is shared (:mod:`.accounts`, :mod:`.agents`, :mod:`.writes`, :mod:`.reads`,
:mod:`.search`, and the migrations); a backend (:mod:`.sqlite`, :mod:`.postgres`) says how to
connect, how to write, and how its engine indexes and matches text.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol, TypeVar

from sqlalchemy import ColumnElement, Connection, Engine, FromClause

from .rows import Matched, SeqChecks

T = TypeVar("T")


class Backend(Protocol):
    """The hooks a backend implements. :class:`~foldline.store.core.Hooks` gives each a default
    but seven, which every backend must provide: :meth:`dialect_insert`, :meth:`prepare_text_index`,
    :meth:`index_later`, :meth:`index_batch`, :meth:`joined`, :meth:`text_match` and :meth:`holds`. The rest a
    backend overrides where its engine differs.

    A backend may also replace a hot path of :class:`~foldline.store.Store` outright
    (``read_page``, ``part_body``: SQLite streams a part from its BLOB, PostgreSQL reads a page in
    one statement); ``tests/test_store_contract.py`` holds both to the same answers.
    """

    engine: Engine  # the SQLAlchemy engine, made by the backend's constructor
    url: str  # the SQLAlchemy URL it was opened at
    local: bool  # reads come from a file on this machine (no round trip to wait on)

    # -- connections ---------------------------------------------------------------------

    def write(self) -> AbstractContextManager[Connection]:
        """A write transaction, committed on leaving the block (rolled back on an error). SQLite
        takes its write lock at the start (``BEGIN IMMEDIATE``)."""
        ...

    def relax(self, conn: Connection) -> None:
        """Let the commit of ``conn``'s write transaction return before it is on disk (within
        :meth:`~.core.Hooks.batched` and for index batches). PostgreSQL: ``synchronous_commit``
        off for the transaction; SQLite: ``synchronous=NORMAL`` for it, in ``write`` itself."""
        ...

    def sync(self) -> None:
        """Put every commit made so far on disk, relaxed ones too (SQLite: the write-ahead log
        synced; PostgreSQL: one commit that waits for the log)."""
        ...

    def read(self) -> AbstractContextManager[Connection]:
        """A read transaction: every query in the block sees the same snapshot."""
        ...

    def driver_read(self) -> AbstractContextManager[Any]:
        """The driver's own cursor in one read snapshot, for the hottest read (a page): with
        SQLAlchemy's Connection around them, its statements cost twice as much. A backend that
        reads a page in one statement may drop the transaction (PostgreSQL does)."""
        ...

    def close(self) -> None:
        """Close the store's connections."""
        ...

    # -- writes --------------------------------------------------------------------------

    def dialect_insert(self, table: Any) -> Any:
        """The backend's INSERT, which knows ON CONFLICT (required)."""
        ...

    def announce(self, conn: Connection, conversation_id: str) -> None:
        """Tell other processes, when this write commits, that the conversation changed."""
        ...

    def listen(self, callback: Callable[[str], None]) -> Callable[[], None]:
        """Call ``callback(conversation_id)`` on other processes' writes; returns a stop function.

        A backend without cross-process notices returns at once: followers then rely on polling.
        """
        ...

    def seq_checks(self, size: int) -> SeqChecks | None:
        """Up to ``size`` connections of the calling event loop's own, for :class:`SeqChecks`;
        None where a read does not wait on a network (SQLite reads on the loop as it is)."""
        ...

    # -- reads ---------------------------------------------------------------------------

    def as_bytes(self, column: Any) -> Any:
        """A text column as the driver can return it without decoding it (the page sends it as is)."""
        ...

    def tool_in(self, names: Sequence[str], among: bool = True) -> Any:
        """Whether a part's tool is (``among``) or is not one of ``names``."""
        ...

    def byte_length(self, column: Any) -> Any:
        """A text column's size in UTF-8 bytes."""
        ...

    def body_pieces(self, conn: Connection, conversation_id: str, message_id: str, idx: int) -> Iterator[bytes]:
        """One part's stored JSON in UTF-8, in pieces of at most a MiB, read on ``conn`` (in its
        snapshot) as they are asked for: an export reads a 100 MB part without holding it."""
        ...

    # -- migrations ----------------------------------------------------------------------

    def lock_migrations(self, conn: Connection) -> None:
        """Keep two processes from migrating at once (the SQLite write lock already does)."""
        ...

    def after_migrating(self) -> None:
        """Run once migrations changed the schema (PostgreSQL gathers its planner's statistics)."""
        ...

    # -- the text index ------------------------------------------------------------------

    def prepare_text_index(self, conn: Connection) -> None:
        """Make the engine's text index (migration 2), before existing parts are indexed (required)."""
        ...

    def finish_text_index(self, conn: Connection) -> None:
        """Finish the engine's text index (migration 2), after existing parts are indexed."""
        ...

    def index_texts_after(self, conn: Connection, after_id: int) -> None:
        """Add the chunk rows with an id over ``after_id`` to an index that is not kept by itself."""
        ...

    def rebuild_text_index(self, conn: Connection) -> None:
        """Make the engine's text index anew over every chunk row (migration 6)."""
        ...

    def compress_text_chunks(self, conn: Connection) -> None:
        """Compress the chunk rows written from now on as the engine does it best (migration 8)."""
        ...

    def index_later(self, conn: Connection) -> None:
        """Let the engine's index be built after each write's commit (migration 9): a partial
        index over the pending chunks' ids, and what the engine needs besides (required)."""
        ...

    def forget_texts(self, conn: Connection, conversation_id: str, message_id: str | None) -> None:
        """Before a message's chunk rows (``message_id`` None: every message's of the
        conversation) are deleted in a write, keep what the engine's index needs to forget the
        indexed ones later (SQLite: their text; no trigram work)."""
        ...

    def forget_chunks(self, conn: Connection, ids: Sequence[int]) -> None:
        """:meth:`forget_texts` for the chunk rows of these ids, about to be deleted."""
        ...

    def joined(self, n: Any, text: Any) -> Any:
        """The aggregate of ``text`` joined in the order of ``n`` (a body's pieces) (required)."""
        ...

    def index_batch(self, conn: Connection, size: int, chars: int) -> tuple[int, int]:
        """Add at most ``size`` pending chunks to the engine's index, oldest first, and mark them
        indexed, in ``conn``'s write transaction (first forgetting what :meth:`forget_texts` kept);
        where the batch holds every writer back (SQLite), about ``chars`` code points at most;
        returns the chunks indexed (and forgotten) and their code points. Safe with several indexers on one store
        (required)."""
        ...

    def fold_pending(self, conn: Connection) -> None:
        """Keep what makes the walk of the pending chunks cheaper than the engine's own test
        of each (migration 12; PostgreSQL: each one's text folded by ``lower()``)."""
        ...

    def storable_text(self, text: str) -> str:
        """``text`` as the backend can hold it (PostgreSQL text cannot hold NUL)."""
        ...

    # -- search --------------------------------------------------------------------------

    def text_match(self, terms: Sequence[str]) -> tuple[FromClause, ColumnElement[Any], list[ColumnElement[Any]]]:
        """What to select from, the chunk id column to order by, and the conditions under which a
        chunk holds every term (case-insensitive, each term taken literally) (required)."""
        ...

    def holds(self, text: Any, term: str) -> ColumnElement[Any]:
        """Whether the text column ``text`` holds ``term`` (case-insensitive, taken literally) (required)."""
        ...

    def walked(self, t: Any) -> list[ColumnElement[Any]]:
        """The columns a walk reads of each chunk (of the chunk columns ``t``) to test it with
        :meth:`walk_holds`: the text, and any form of it the engine keeps quicker to test."""
        ...

    def walk_holds(self, walked: Any, term: str) -> ColumnElement[Any]:
        """Whether a chunk holds ``term``, by the columns ``walked`` of :meth:`walked`: the same
        answer as :meth:`holds` (case-insensitive, taken literally)."""
        ...

    def plan_search(self, conn: Connection) -> None:
        """Steer the planner of the search that ``conn``'s transaction is about to run."""
        ...

    def until(self, conn: Connection, cutoff: float, work: Callable[[], T]) -> T | None:
        """``work()``, run on ``conn``, or None if the engine stopped its statement at ``cutoff``
        (``time.monotonic()``); an engine that cannot stop one runs it to its end."""
        ...

    def matching_ids(
        self, conn: Connection, terms: Sequence[str], visible: Any, upto: int | None, limit: int, deadline: float | None
    ) -> Matched | None:
        """The newest ``limit`` chunk ids (at most ``upto``) holding every term, among the chunks
        of the conversations ``visible`` selects, found by the engine's best path by
        ``deadline`` (``time.monotonic()``; ``None``: no limit); ``None`` when the engine's one
        query is best (SQLite's FTS5 walks its index newest first by itself)."""
        ...
