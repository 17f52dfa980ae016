"""The store: every SQL statement Foldline runs, on SQLAlchemy Core.

One class serves both backends; :mod:`.sqlite` and :mod:`.postgres` only say how to connect,
how to open a write, and how to insert-or-update. Nothing here knows HTTP.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from sqlalchemy import (
    Connection,
    Engine,
    Integer,
    and_,
    bindparam,
    case,
    delete,
    false,
    func,
    insert,
    null,
    or_,
    select,
    tuple_,
    update,
)

from ..registry import TextTools
from ..usage import MessageUsage
from .chunks import FieldText
from .schema import (
    MIGRATIONS,
    accounts,
    conversations,
    imports,
    members,
    messages,
    metadata,
    migrations_table,
    parts,
    tokens,
    usage_totals,
    workspaces,
)
from .text import TextStore

EVERYONE = "*"  # announced instead of a conversation id when access changed: every follower checks again
TOKEN_ID = 12  # a token's public id: the first hex digits of its SHA-256 hash
SOMETHING = "?"  # said when some write happened, it is not known where: live follow looks at once


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(frozen=True, slots=True)
class Conversation:
    """An agent's conversation (``parent_id`` None) or a subagent's (``parent_id`` is the agent,
    ``call_id`` the tool call that started it). ``seq`` counts its writes; times are ISO 8601 UTC."""

    id: str
    workspace_id: str
    owner_id: str
    parent_id: str | None
    call_id: str | None
    title: str | None
    seq: int
    created_at: str
    updated_at: str


@dataclass(frozen=True, slots=True)
class StoredPart:
    """A part as the store keeps it: JSON texts, with its cut computed."""

    idx: int
    tool: str | None
    body: str
    cut_body: str | None = None
    cut_ref: str | None = None
    texts: tuple[FieldText, ...] = ()  # its searchable fields, stored in chunks beside it


CONVERSATION = [conversations.c[name] for name in Conversation.__dataclass_fields__]
TOTALS = ("messages", "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "cost", "unpriced")
AGENT_SORTS = ("activity", "messages", "tokens", "cost", "title")


@dataclass(frozen=True, slots=True)
class AgentFacts:
    """Where an agent ran, as one of its own messages says (None: that message does not say)."""

    source: str | None = None
    project: str | None = None
    branch: str | None = None
    model: str | None = None


@dataclass(frozen=True, slots=True)
class AgentRow:
    """An agent as the agents list shows it: its conversation, where it ran, and its totals (its
    subagents' messages included; ``cost`` in picodollars over the ``unpriced`` messages' rest)."""

    conv: Conversation
    source: str | None
    project: str | None
    branch: str | None
    model: str | None
    messages: int
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    cost: int
    unpriced: int


USAGE_COLUMNS = ("model", "day", "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "cost")


def usage_columns(usage: MessageUsage | None) -> dict[str, Any]:
    """A message's usage columns (all NULL when it reports none)."""
    if usage is None:
        return dict.fromkeys(USAGE_COLUMNS)
    u = usage.usage
    return {"model": usage.model, "day": usage.day, "input_tokens": u.input, "output_tokens": u.output,
            "cache_read_tokens": u.cache_read, "cache_write_tokens": u.cache_write, "cost": usage.cost}  # fmt: skip


def agent_sort_key(sort: str) -> Any:
    """The column (or expression) an agents list is ordered by."""
    c = conversations.c
    if sort == "activity":
        return c.updated_at
    if sort == "messages":
        return c.messages
    if sort == "tokens":
        return c.input_tokens + c.output_tokens
    if sort == "cost":
        return c.cost
    return func.lower(func.coalesce(c.title, ""))


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


@dataclass(slots=True)
class StoredBody:
    """A whole part as stored (:meth:`Store.part_body`): ``size`` bytes of JSON in ``chunks``.
    ``close()`` lets go of what reading it holds, if it is not read to its end."""

    tool: str | None
    checked: str | None
    size: int
    chunks: Iterator[bytes]

    def close(self) -> None:
        close = getattr(self.chunks, "close", None)
        if close is not None:
            close()


class Chunks(Iterator[bytes]):
    """A part's bytes as they are read, and ``release()`` once they are done with: at their
    end, on an error, or on ``close()``, even one before the first chunk was asked for (a
    generator's own ``close()`` runs nothing until it has started, so a reader gone before the
    second chunk left its connection to the garbage collector)."""

    def __init__(self, read: Iterator[bytes], release: Callable[[], None]) -> None:
        self._read, self._release = read, release
        self._done = False

    def __next__(self) -> bytes:
        try:
            return next(self._read)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        if self._done:
            return
        self._done = True
        close = getattr(self._read, "close", None)
        try:
            if close is not None:
                close()
        finally:
            self._release()


@dataclass(frozen=True, slots=True)
class PageSQL:
    conversation: Prepared
    messages: Prepared
    parts: Prepared


class SeqChecks(Protocol):
    """Asks, without leaving the event loop, whether a kept page still holds: the seq of a
    conversation the account may read. Opened and closed by the loop that uses it
    (:meth:`Store.seq_checks`)."""

    async def open(self) -> None: ...

    async def close(self) -> None: ...

    async def seq(self, account_id: str, agent_id: str, call_id: str | None) -> int | None:
        """The conversation's seq; None when there is none the account may read."""
        ...


class StaleWrite(Exception):
    """A compare-and-set write found the message changed since it was read."""


@dataclass(frozen=True, slots=True)
class MessageRow:
    """A stored message as read: its ``head`` (the message's JSON without ``parts``), its
    ``position`` (fixed at creation: page order and cursor) and ``seq`` (its last write)."""

    id: str
    position: int
    seq: int
    head: str | bytes  # bytes (UTF-8) where the backend returns them undecoded (read_page)
    parts: list[tuple[int, str | bytes, str | bytes | None]]  # (idx, part JSON, cutParts entry JSON or None)
    checked: str | None = None  # the read stamp it was written under (``Transcripts`` says what it means)
    tools: list[str | None] = field(default_factory=list)  # each part's stored tool column, as ``parts``
    created_at: str | None = None  # when the message was first stored (pages and changes read it)


# A page read's rows as the driver returns them (:meth:`Store.read_page`): a message is
# (id, position, seq, head, checked, created_at) and a part (position, idx, tool, body, ref), the
# JSON texts (head, body, ref) as UTF-8 bytes where the driver can hand them over undecoded.
PageMessage = tuple[str, int, int, str | bytes, str | None, str | None]
PagePart = tuple[int, int, str | None, str | bytes, str | bytes | None]


@dataclass(frozen=True, slots=True)
class PageRead:
    """What :meth:`Store.read_page` found in one snapshot: the conversation, a page of its
    messages (oldest first) and their parts (by position, then index), whether older messages
    exist, and the conversation's seq. ``unchanged``: the conversation is still at the seq the
    caller knew, and nothing else was read."""

    conv: Conversation
    messages: list[PageMessage]
    parts: list[PagePart]
    more: bool
    seq: int
    unchanged: bool = False


class Store(TextStore):
    """All of Foldline's SQL: the contract a backend implements. Subclasses open connections for
    one backend (:class:`~.sqlite.SQLiteStore`, :class:`~.postgres.PostgresStore`).

    The store checks nothing about who asks: access rules live in
    :class:`~foldline.transcripts.Transcripts`, which is its only caller on the request path.
    Ids are canonical UUID strings chosen by the caller. Each method is one transaction.
    ``tests/test_store_contract.py`` holds every backend to this contract.

    What a backend must keep:

    - a conversation's ``seq`` grows by one per write to it; a message keeps the ``position``
      of its first write (its place in the transcript) and takes the ``seq`` of its last;
    - a message and its parts are replaced together: no read sees one without the other
      (:meth:`read` gives one snapshot);
    - :meth:`page` and :meth:`changes` read only messages of the conversation's owner;
    - :meth:`migrate` is safe to run from several processes at once (:meth:`lock_migrations`).
    """

    engine: Engine
    url: str
    local = False  # reads come from a file on this machine (no round trip to wait on)

    # -- connections ---------------------------------------------------------------------

    @contextmanager
    def write(self) -> Iterator[Connection]:
        """A write transaction, committed on leaving the block (rolled back on an error)."""
        with self.engine.begin() as conn:
            yield conn

    @contextmanager
    def read(self) -> Iterator[Connection]:
        """A read transaction: every query in the block sees the same snapshot."""
        with self.engine.begin() as conn:
            yield conn

    def dialect_insert(self, table: Any) -> Any:
        """The backend's INSERT, which knows ON CONFLICT."""
        raise NotImplementedError

    def upsert(self, table: Any, values: dict[str, Any], keys: Sequence[str], update_cols: Sequence[str]) -> Any:
        """Insert, or on a clash of ``keys`` update ``update_cols`` (none: leave the row)."""
        stmt = self.dialect_insert(table).values(**values)
        if not update_cols:
            return stmt.on_conflict_do_nothing(index_elements=list(keys))
        return stmt.on_conflict_do_update(index_elements=list(keys), set_={c: stmt.excluded[c] for c in update_cols})

    def announce(self, conn: Connection, conversation_id: str) -> None:
        """Tell other processes, when this write commits, that the conversation changed."""

    def listen(self, callback: Callable[[str], None]) -> Callable[[], None]:
        """Call ``callback(conversation_id)`` on other processes' writes; returns a stop function.

        A backend without cross-process notices returns at once: followers then rely on polling.
        """
        return lambda: None

    def seq_checks(self, size: int) -> SeqChecks | None:
        """Up to ``size`` connections of the calling event loop's own, for :class:`SeqChecks`;
        None where a read does not wait on a network (SQLite reads on the loop as it is)."""
        return None

    def close(self) -> None:
        """Close the store's connections."""
        self.engine.dispose()

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

    def after_migrating(self) -> None:
        """Run once migrations changed the schema (PostgreSQL gathers its planner's statistics)."""

    def lock_migrations(self, conn: Connection) -> None:
        """Keep two processes from migrating at once (the SQLite write lock already does)."""

    # -- accounts and workspaces ---------------------------------------------------------

    def create_account(self, account_id: str, name: str, token_hash: str) -> dict[str, Any]:
        """A new account with its first token (stored by hash only); returns ``{"id", "name"}``."""
        with self.write() as conn:
            conn.execute(insert(accounts).values(id=account_id, name=name, created_at=now()))
            conn.execute(
                insert(tokens).values(hash=token_hash, account_id=account_id, label="created", created_at=now())
            )
        return {"id": account_id, "name": name}

    def add_token(self, account_id: str, token_hash: str, label: str, expires_at: str | None = None) -> None:
        """Another token (by hash) for an account; its older tokens keep working (its expired
        ones are dropped on the way)."""
        stamp = now()
        with self.write() as conn:
            conn.execute(delete(tokens).where(tokens.c.account_id == account_id, tokens.c.expires_at <= stamp))
            conn.execute(
                insert(tokens).values(
                    hash=token_hash, account_id=account_id, label=label, created_at=stamp, expires_at=expires_at
                )
            )

    def token(self, token_hash: str) -> dict[str, Any] | None:
        """``{"account_id", "expires_at", "last_used_at"}`` of a token (by hash), or None."""
        query = select(tokens.c.account_id, tokens.c.expires_at, tokens.c.last_used_at).where(
            tokens.c.hash == token_hash
        )
        with self.read() as conn:
            row = conn.execute(query).first()
        return row._asdict() if row else None

    def touch_token(self, token_hash: str, stamp: str) -> None:
        """Note that a token was used at ``stamp``."""
        with self.write() as conn:
            conn.execute(update(tokens).where(tokens.c.hash == token_hash).values(last_used_at=stamp))

    def tokens_of(self, account_id: str) -> list[dict[str, Any]]:
        """An account's tokens, oldest first: their public ids (the hash's first 12 hex digits)
        and dates, never the hash itself."""
        query = (
            select(tokens.c.hash, tokens.c.label, tokens.c.created_at, tokens.c.last_used_at, tokens.c.expires_at)
            .where(tokens.c.account_id == account_id)
            .order_by(tokens.c.created_at, tokens.c.hash)
        )
        with self.read() as conn:
            rows = conn.execute(query).all()
        return [{"id": r.hash[:TOKEN_ID], **{k: v for k, v in r._asdict().items() if k != "hash"}} for r in rows]

    def revoke_token(self, token_id: str) -> bool:
        """Delete the token whose public id (or whole hash) this is; whether one was."""
        with self.write() as conn:
            found = conn.execute(
                select(tokens.c.hash).where(func.substr(tokens.c.hash, 1, len(token_id)) == token_id)
            ).scalars().all()
            if len(token_id) < TOKEN_ID or len(found) != 1:
                return False
            conn.execute(delete(tokens).where(tokens.c.hash == found[0]))
            self.announce(conn, EVERYONE)
        return True

    def account(self, account_id: str) -> dict[str, Any] | None:
        """``{"id", "name"}`` of an account, or None."""
        with self.read() as conn:
            row = conn.execute(select(accounts.c.id, accounts.c.name).where(accounts.c.id == account_id)).first()
        return {"id": row.id, "name": row.name} if row else None

    def account_by_token(self, token_hash: str) -> str | None:
        """The id of the account a token (by hash) belongs to, or None."""
        with self.read() as conn:
            return conn.execute(select(tokens.c.account_id).where(tokens.c.hash == token_hash)).scalar()

    def accounts_named(self, name: str) -> list[str]:
        """The ids of the accounts with this name, oldest first (names need not be unique)."""
        with self.read() as conn:
            return list(
                conn.execute(
                    select(accounts.c.id).where(accounts.c.name == name).order_by(accounts.c.created_at)
                ).scalars()
            )

    def all_accounts(self) -> list[dict[str, Any]]:
        """Every account, ``{"id", "name", "created_at"}``, oldest first."""
        query = select(accounts.c.id, accounts.c.name, accounts.c.created_at).order_by(accounts.c.created_at)
        with self.read() as conn:
            return [{"id": r.id, "name": r.name, "created_at": r.created_at} for r in conn.execute(query)]

    def all_workspaces(self) -> list[dict[str, Any]]:
        """Every workspace with its members' ids."""
        query = (
            select(workspaces.c.id, workspaces.c.name, members.c.account_id)
            .outerjoin(members, members.c.workspace_id == workspaces.c.id)
            .order_by(workspaces.c.created_at, workspaces.c.id, members.c.account_id)
        )
        found: dict[str, dict[str, Any]] = {}
        with self.read() as conn:
            for r in conn.execute(query):
                space = found.setdefault(r.id, {"id": r.id, "name": r.name, "members": []})
                if r.account_id is not None:
                    space["members"].append(r.account_id)
        return list(found.values())

    def create_workspace(self, workspace_id: str, name: str, member_ids: Sequence[str]) -> dict[str, Any]:
        """A new workspace with these members (repeats ignored); returns ``{"id", "name"}``."""
        with self.write() as conn:
            conn.execute(insert(workspaces).values(id=workspace_id, name=name, created_at=now()))
            for account_id in dict.fromkeys(member_ids):
                conn.execute(insert(members).values(workspace_id=workspace_id, account_id=account_id))
        return {"id": workspace_id, "name": name}

    def add_member(self, workspace_id: str, account_id: str) -> None:
        """Make an account a member of a workspace (already one: nothing changes)."""
        with self.write() as conn:
            self.upsert_in(
                conn,
                members,
                {"workspace_id": workspace_id, "account_id": account_id},
                ["workspace_id", "account_id"],
                [],
            )

    def remove_member(self, workspace_id: str, account_id: str) -> bool:
        """Take an account out of a workspace; whether it was in it."""
        with self.write() as conn:
            gone = conn.execute(
                delete(members).where(members.c.workspace_id == workspace_id, members.c.account_id == account_id)
            ).rowcount
            self.announce(conn, EVERYONE)
        return bool(gone)

    def workspace_exists(self, workspace_id: str) -> bool:
        """Whether a workspace with this id exists."""
        with self.read() as conn:
            return conn.execute(select(workspaces.c.id).where(workspaces.c.id == workspace_id)).first() is not None

    def workspaces_of(self, account_id: str) -> list[dict[str, Any]]:
        """The workspaces an account is a member of, ``{"id", "name"}``, oldest first."""
        query = (
            select(workspaces.c.id, workspaces.c.name)
            .join(members, members.c.workspace_id == workspaces.c.id)
            .where(members.c.account_id == account_id)
            .order_by(workspaces.c.created_at)
        )
        with self.read() as conn:
            return [{"id": r.id, "name": r.name} for r in conn.execute(query)]

    def is_member(self, workspace_id: str, account_id: str) -> bool:
        """Whether the account is a member of the workspace."""
        query = select(members.c.account_id).where(
            members.c.workspace_id == workspace_id, members.c.account_id == account_id
        )
        with self.read() as conn:
            return conn.execute(query).first() is not None

    # -- conversations -------------------------------------------------------------------

    def create_conversation(
        self,
        conversation_id: str,
        workspace_id: str,
        owner_id: str,
        title: str | None,
        parent_id: str | None = None,
        call_id: str | None = None,
    ) -> Conversation:
        """Create a conversation, or return the one already there.

        An agent (no ``parent_id``) is known by its id; a subagent by ``(parent_id, call_id)``:
        two writers making the same subagent at once, under different ids, both get the one
        that was stored first. An existing conversation is returned unchanged.
        """
        stamp = now()
        values = {
            "id": conversation_id,
            "workspace_id": workspace_id,
            "owner_id": owner_id,
            "parent_id": parent_id,
            "call_id": call_id,
            "title": title,
            "seq": 0,
            "created_at": stamp,
            "updated_at": stamp,
        }
        with self.write() as conn:
            if parent_id is None:
                self.upsert_in(conn, conversations, values, ["id"], [])
            else:
                self.upsert_in(conn, conversations, values, ["parent_id", "call_id"], [])
            row = conn.execute(self._conversation_query().where(conversations.c.id == conversation_id)).first()
            if row is None:  # a subagent made by a concurrent writer under another id
                row = conn.execute(
                    self._conversation_query().where(
                        conversations.c.parent_id == parent_id, conversations.c.call_id == call_id
                    )
                ).one()
        return Conversation(**row._asdict())

    def set_times(self, conversation_id: str, created_at: str, updated_at: str) -> None:
        """Date a conversation by its source (an imported session's first and last line)."""
        with self.write() as conn:
            conn.execute(
                update(conversations)
                .where(conversations.c.id == conversation_id)
                .values(created_at=created_at, updated_at=updated_at)
            )

    def set_title(self, conversation_id: str, title: str) -> None:
        """Rename a conversation."""
        with self.write() as conn:
            conn.execute(update(conversations).where(conversations.c.id == conversation_id).values(title=title))

    @staticmethod
    def _conversation_query() -> Any:
        return select(*CONVERSATION)

    def conversation(self, conversation_id: str) -> Conversation | None:
        """A conversation by id (agent or subagent), with no access check, or None."""
        with self.read() as conn:
            row = conn.execute(self._conversation_query().where(conversations.c.id == conversation_id)).first()
        return Conversation(**row._asdict()) if row else None

    def visible_conversation(self, account_id: str, agent_id: str, call_id: str | None) -> Conversation | None:
        """The agent (or its subagent for ``call_id``) if ``account_id`` is a member of its workspace.

        None when there is no such conversation and when the account may not see it: the caller
        cannot tell the two apart. A subagent's id is never accepted as an agent's.
        """
        query = self._conversation_query().join(
            members,
            and_(members.c.workspace_id == conversations.c.workspace_id, members.c.account_id == account_id),
        )
        if call_id is None:
            query = query.where(conversations.c.id == agent_id, conversations.c.parent_id.is_(None))
        else:
            query = query.where(conversations.c.parent_id == agent_id, conversations.c.call_id == call_id)
        with self.read() as conn:
            row = conn.execute(query).first()
        return Conversation(**row._asdict()) if row else None

    def agents(self, workspace_id: str) -> list[Conversation]:
        """The workspace's agents (not subagents), the most recently active first."""
        return [row.conv for row in self.agent_list(workspace_id, limit=None)[0]]

    @staticmethod
    def _agent_row_query() -> Any:
        return select(*CONVERSATION, *(conversations.c[n] for n in ("source", "project", "branch", "model", *TOTALS)))

    @staticmethod
    def _agent_row(row: Any) -> AgentRow:
        n = len(CONVERSATION)
        return AgentRow(Conversation(*row[:n]), *row[n:])

    def agent_list(
        self,
        workspace_id: str,
        *,
        sort: str = "activity",
        descending: bool = True,
        source: str | None = None,
        project: str | None = None,
        after: tuple[Any, str] | None = None,
        limit: int | None = 50,
    ) -> tuple[list[AgentRow], Any]:
        """One page of a workspace's agents (not subagents) ordered by ``sort`` (one of
        :data:`AGENT_SORTS`), then by id; only those of ``source`` and ``project`` when given;
        those after ``after`` (the last row's sort value and id, from the page before). Returns
        the rows and, when more follow, the last row's sort value as the database computed it
        (what the next page's cursor carries; None on the last page). The totals are read as
        kept, never summed here."""
        c = conversations.c
        key = agent_sort_key(sort)
        query = select(*self._agent_row_query().selected_columns, key.label("sort_value")).where(
            c.workspace_id == workspace_id, c.parent_id.is_(None)
        )
        if source is not None:
            query = query.where(c.source == source)
        if project is not None:
            query = query.where(c.project == project)
        if after is not None:
            value, last_id = after
            beyond = key < value if descending else key > value
            query = query.where(or_(beyond, and_(key == value, c.id > last_id)))
        query = query.order_by(key.desc() if descending else key.asc(), c.id)
        if limit is not None:
            query = query.limit(limit + 1)
        with self.read() as conn:
            found = conn.execute(query).all()
        more = limit is not None and len(found) > limit
        found = found[:limit] if limit is not None else found
        rows = [self._agent_row(r[:-1]) for r in found]
        return rows, (found[-1][-1] if more and found else None)

    def agent_facets(self, workspace_id: str, most: int = 200) -> dict[str, list[tuple[str | None, int]]]:
        """The sources and the projects (at most ``most``, the commonest first) of a workspace's
        agents, each with how many agents have it: what the list can be filtered by."""
        c = conversations.c
        out: dict[str, list[tuple[str | None, int]]] = {}
        with self.read() as conn:
            for name in ("source", "project"):
                column = c[name]
                query = (
                    select(column, func.count())
                    .where(c.workspace_id == workspace_id, c.parent_id.is_(None))
                    .group_by(column)
                    .order_by(func.count().desc(), column)
                    .limit(most)
                )
                out[name] = [(r[0], int(r[1])) for r in conn.execute(query)]
        return out

    def agent_row(self, agent_id: str) -> AgentRow | None:
        """One agent (not a subagent) with its facts and totals, with no access check."""
        query = self._agent_row_query().where(conversations.c.id == agent_id, conversations.c.parent_id.is_(None))
        with self.read() as conn:
            row = conn.execute(query).first()
        return self._agent_row(row) if row is not None else None

    def usage_rows(
        self, account_id: str, by: str, workspace_id: str | None = None, agent_id: str | None = None
    ) -> list[dict[str, Any]]:
        """Usage summed by ``by`` (``day``, ``model`` or ``agent``) over the agents of the
        workspaces ``account_id`` is a member of (or one workspace, or one agent), from the
        totals kept as messages are written. Each row: its key (and, by agent, the title and
        workspace), messages, the four token counts, cost (picodollars) and unpriced."""
        u, c = usage_totals.c, conversations.c
        sums = [func.sum(u[name]).label(name) for name in TOTALS]
        keys: list[Any]
        if by == "day":
            keys = [u.day.label("key")]
        elif by == "model":
            keys = [u.model.label("key")]
        else:
            keys = [u.agent_id.label("key"), c.title, c.workspace_id]
        query = (
            select(*keys, *sums)
            .select_from(usage_totals)
            .join(conversations, c.id == u.agent_id)
            .join(members, and_(members.c.workspace_id == c.workspace_id, members.c.account_id == account_id))
            .group_by(*keys)
            .having(func.sum(u.messages) > 0)  # every message counted there was rewritten without usage
            .order_by(keys[0])
        )
        if workspace_id is not None:
            query = query.where(c.workspace_id == workspace_id)
        if agent_id is not None:
            query = query.where(u.agent_id == agent_id)
        with self.read() as conn:
            return [
                {k: (int(v) if k in TOTALS and v is not None else v) for k, v in r._asdict().items()}
                for r in conn.execute(query)
            ]

    def subagent_calls(self, agent_id: str) -> list[str]:
        """The call ids of an agent's subagents, oldest first."""
        query = (
            select(conversations.c.call_id)
            .where(conversations.c.parent_id == agent_id)
            .order_by(conversations.c.created_at, conversations.c.call_id)
        )
        with self.read() as conn:
            return [str(c) for c in conn.execute(query).scalars()]

    # -- messages ------------------------------------------------------------------------

    def put_message(
        self,
        conv: Conversation,
        message_id: str,
        role: str,
        head: str,
        stored: Sequence[StoredPart],
        expect_seq: int | None = None,
        checked: str | None = None,
        usage: MessageUsage | None = None,
        facts: AgentFacts | None = None,
    ) -> tuple[int, bool]:
        """Create or replace one message and its parts in one transaction.

        Returns the write's seq and whether the message is new. A new message goes after every
        other (its position is the write's seq); a replaced one keeps its place, and its old
        parts are all dropped for ``stored``. With ``expect_seq`` the write happens only if the
        message is still the one written at that seq (else :class:`StaleWrite`, and nothing is
        written). The conversation (and a subagent's parent) is marked active; followers in
        other processes are told (:meth:`announce`). ``checked`` is the read stamp the caller
        vouches for (the checks the message passed); a row stored without one is checked on every read.

        In the same transaction the agent's totals (its row, and ``usage_totals``) take back what
        a replaced message counted and add what ``usage`` says; ``facts`` from a message of the
        agent itself (not a subagent's) say where it ran: each one given replaces the one kept,
        but the source, which the first message to say it decides.
        """
        stamp = now()
        m = messages.c
        with self.write() as conn:
            seq = self._next_seq(conn, conv, stamp)
            # The conversation's row is now locked (or the SQLite write lock held): no writer interleaves.
            found = conn.execute(
                select(
                    m.position, m.seq, m.model, m.day, m.input_tokens, m.output_tokens, m.cache_read_tokens,
                    m.cache_write_tokens, m.cost,
                ).where(m.conversation_id == conv.id, m.id == message_id)
            ).first()
            if expect_seq is not None and (found is None or found.seq != expect_seq):
                raise StaleWrite(message_id)
            position = seq if found is None else found.position
            values = {
                "conversation_id": conv.id, "id": message_id, "owner_id": conv.owner_id, "position": position,
                "seq": seq, "role": role, "head": head, "created_at": stamp, "updated_at": stamp, "checked": checked,
                **usage_columns(usage),
            }  # fmt: skip
            changed = ["seq", "role", "head", "updated_at", "checked", *USAGE_COLUMNS]
            self.upsert_in(conn, messages, values, ["conversation_id", "id"], changed)
            self._count(conn, conv, found, usage, facts)
            self._replace_parts(conn, conv.id, message_id, position, seq, stored)
            self.replace_texts(conn, conv.id, message_id, [(p.idx, f) for p in stored for f in p.texts])
            self.announce(conn, conv.id)
        return seq, found is None

    def _count(
        self, conn: Connection, conv: Conversation, old: Any, usage: MessageUsage | None, facts: AgentFacts | None
    ) -> None:
        """Keep the agent's totals: take back what the replaced message (``old``) counted, add
        ``usage``, and note ``facts``. Every change is relative (``x = x + d``), so concurrent
        writers to one agent's subagents never lose one another's counts."""
        agent = conv.parent_id or conv.id
        change: dict[str, int] = dict.fromkeys(TOTALS, 0)
        if old is None:
            change["messages"] = 1
        buckets: list[tuple[str, str, dict[str, int]]] = []
        if old is not None and old.input_tokens is not None:
            before = {"messages": -1, "input_tokens": -old.input_tokens, "output_tokens": -old.output_tokens,
                      "cache_read_tokens": -old.cache_read_tokens, "cache_write_tokens": -old.cache_write_tokens,
                      "cost": -(old.cost or 0), "unpriced": -int(old.cost is None)}  # fmt: skip
            buckets.append((old.day or "", old.model or "", before))
        if usage is not None:
            after = {"messages": 1, "input_tokens": usage.usage.input, "output_tokens": usage.usage.output,
                     "cache_read_tokens": usage.usage.cache_read, "cache_write_tokens": usage.usage.cache_write,
                     "cost": usage.cost or 0, "unpriced": int(usage.cost is None)}  # fmt: skip
            buckets.append((usage.day, usage.model, after))
        for _, _, delta in buckets:
            for name in TOTALS:
                if name != "messages":
                    change[name] += delta[name]
        c = conversations.c
        values: dict[str, Any] = {name: c[name] + change[name] for name in TOTALS if change[name]}
        if facts is not None and conv.parent_id is None:
            for name in ("project", "branch", "model"):
                if getattr(facts, name):
                    values[name] = getattr(facts, name)
            if facts.source:
                values["source"] = func.coalesce(c.source, facts.source)
        if values:
            conn.execute(update(conversations).where(c.id == agent).values(**values))
        for day, model, delta in buckets:
            self._add_usage(conn, agent, day, model, delta)

    def _add_usage(self, conn: Connection, agent: str, day: str, model: str, delta: dict[str, int]) -> None:
        row = {"agent_id": agent, "day": day, "model": model, **delta}
        stmt = self.dialect_insert(usage_totals).values(**row)
        stmt = stmt.on_conflict_do_update(
            index_elements=["agent_id", "day", "model"],
            set_={name: usage_totals.c[name] + stmt.excluded[name] for name in TOTALS},
        )
        conn.execute(stmt)

    @staticmethod
    def _next_seq(conn: Connection, conv: Conversation, stamp: str) -> int:
        """Take the conversation's next write number, and mark it (and its parent) active."""
        seq = conn.execute(
            update(conversations)
            .where(conversations.c.id == conv.id)
            .values(seq=conversations.c.seq + 1, updated_at=stamp)
            .returning(conversations.c.seq)
        ).scalar_one()
        if conv.parent_id is not None:  # a subagent's activity is its parent's activity too
            conn.execute(update(conversations).where(conversations.c.id == conv.parent_id).values(updated_at=stamp))
        return int(seq)

    @staticmethod
    def _replace_parts(
        conn: Connection, conv_id: str, message_id: str, position: int, seq: int, stored: Sequence[StoredPart]
    ) -> None:
        conn.execute(delete(parts).where(parts.c.conversation_id == conv_id, parts.c.message_id == message_id))
        if not stored:
            return
        rows = [
            {"conversation_id": conv_id, "message_id": message_id, "idx": p.idx, "position": position, "seq": seq,
             "tool": p.tool, "body": p.body, "cut_body": p.cut_body, "cut_ref": p.cut_ref}
            for p in stored
        ]  # fmt: skip
        conn.execute(insert(parts), rows)

    def page(
        self, conv: Conversation, *, cut: TextTools | None, limit: int | None, before: int | None
    ) -> tuple[list[MessageRow], bool, int]:
        """Newest ``limit`` messages before position ``before``, oldest first; whether older ones
        exist; and the conversation's seq in the same snapshot.

        The cursor for the next older page is ``rows[0].position`` (passed as ``before``). Two
        indexed queries whatever the page holds: the messages, then their parts. With ``cut`` a
        part with a stored cut whose tool ``cut`` names is read cut (its cut body, and its
        ``cutParts`` entry as the third item of the part tuple); every other part is read whole.
        """
        conv_seq = select(conversations.c.seq).where(conversations.c.id == conv.id).scalar_subquery()
        query = select(
            messages.c.id, messages.c.position, messages.c.seq, messages.c.head, messages.c.checked,
            messages.c.created_at,
            conv_seq.label("conv_seq"),
        ).where(messages.c.conversation_id == conv.id, messages.c.owner_id == conv.owner_id)
        if before is not None:
            query = query.where(messages.c.position < before)
        query = query.order_by(messages.c.position.desc())
        if limit is not None:
            query = query.limit(limit + 1)
        with self.read() as conn:
            found = conn.execute(query).all()
            more = limit is not None and len(found) > limit
            rows = list(found[:limit] if limit is not None else found)
            rows.reverse()
            if not rows:
                return [], False, conv.seq
            part_rows = conn.execute(
                self._parts_query(conv, cut)
                .where(parts.c.position >= rows[0].position, parts.c.position <= rows[-1].position)
                .order_by(parts.c.position, parts.c.idx)
            ).all()
        return self._assemble(rows, part_rows, key="position"), more, int(rows[0].conv_seq)

    def read_page(
        self, account_id: str, agent_id: str, call_id: str | None, *, cut: TextTools | None, limit: int | None,
        before: int | None, known_seq: int | None = None,
    ) -> PageRead | None:
        """:meth:`visible_conversation` and its :meth:`page`, in one read snapshot: what a
        transcript read asks of the database, in three statements built once (per backend and
        registry), run on the driver's own cursor and read by position. None when the account
        may not read the conversation; ``unchanged`` and no page when it is at ``known_seq``."""
        sql = self._page_sql(cut, call_id is not None, limit is not None, before is not None)
        params: dict[str, Any] = {"account": account_id, "agent": agent_id, "call": call_id, "before": before,
                                  "limit": None if limit is None else limit + 1}  # fmt: skip
        with self.driver_read() as cursor:
            found = cursor.execute(sql.conversation.sql, sql.conversation.bind(params)).fetchone()
            if found is None:
                return None
            conv = Conversation(*found)
            if conv.seq == known_seq:
                return PageRead(conv, [], [], False, conv.seq, unchanged=True)
            params.update(conv=conv.id, owner=conv.owner_id)
            rows = cursor.execute(sql.messages.sql, sql.messages.bind(params)).fetchall()
            more = limit is not None and len(rows) > limit
            if more:
                del rows[limit:]
            if not rows:
                return PageRead(conv, [], [], False, conv.seq)
            rows.reverse()
            params.update(first=rows[0][1], last=rows[-1][1])
            part_rows = cursor.execute(sql.parts.sql, sql.parts.bind(params)).fetchall()
        return PageRead(conv, rows, part_rows, more, conv.seq)

    @contextmanager
    def driver_read(self) -> Iterator[Any]:
        """The driver's own cursor in one read snapshot, for the hottest read (a page): with
        SQLAlchemy's Connection around them, its statements cost twice as much. A backend that
        reads a page in one statement may drop the transaction (PostgreSQL does)."""
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

    def _page_sql(self, cut: TextTools | None, call: bool, limited: bool, before: bool) -> PageSQL:
        key = (cut, call, limited, before)
        built: dict[Any, PageSQL] = self.__dict__.setdefault("_page_statements", {})
        found = built.get(key)
        if found is None:
            found = built[key] = self._build_page_sql(*key)
        return found

    def _build_page_sql(self, cut: TextTools | None, call: bool, limited: bool, before: bool) -> PageSQL:
        conv, page, part_query = self._build_page_sql_queries(cut, call, limited, before)
        page = page.where(m_conv_is(), messages.c.owner_id == slot("owner"))
        part_query = part_query.where(
            parts.c.conversation_id == slot("conv"),
            parts.c.position >= slot("first"),
            parts.c.position <= slot("last"),
        )
        return PageSQL(self._prepare(conv), self._prepare(page), self._prepare(part_query))

    def _build_page_sql_queries(self, cut: TextTools | None, call: bool, limited: bool, before: bool) -> Any:
        """The three queries of a page read, less what ties them together (the backend's choice)."""
        c = conversations.c
        conv = select(*CONVERSATION).join(
            members, and_(members.c.workspace_id == c.workspace_id, members.c.account_id == slot("account"))
        )
        if call:
            conv = conv.where(c.parent_id == slot("agent"), c.call_id == slot("call"))
        else:
            conv = conv.where(c.id == slot("agent"), c.parent_id.is_(None))
        m = messages.c
        page = select(m.id, m.position, m.seq, self.as_bytes(m.head), m.checked, m.created_at)
        if before:
            page = page.where(m.position < slot("before"))
        page = page.order_by(m.position.desc())
        if limited:
            page = page.limit(slot("limit", Integer))
        sent = [self.as_bytes(c) for c in self._parts_query(None, cut).selected_columns[4:]]  # body (and ref)
        if cut is None:
            sent = [*sent, null().label("ref")]
        part_query = select(parts.c.position, parts.c.idx, parts.c.tool, *sent).order_by(parts.c.position, parts.c.idx)
        return conv, page, part_query

    def as_bytes(self, column: Any) -> Any:
        """A text column as the driver can return it without decoding it (the page sends it as is)."""
        return column

    def _prepare(self, statement: Any) -> Prepared:
        compiled = statement.compile(dialect=self.engine.dialect, compile_kwargs={"render_postcompile": True})
        return Prepared(str(compiled), dict(compiled.params), compiled.positiontup)

    def changes(self, conv: Conversation, since: int, cut: TextTools, limit: int | None = None) -> list[MessageRow]:
        """The messages written after ``since`` (a seq), in cut form, in the order they were
        written; at most ``limit`` of them (the oldest first).

        A message written twice after ``since`` appears once, at its last write's seq.
        """
        query = (
            select(
                messages.c.id, messages.c.position, messages.c.seq, messages.c.head, messages.c.checked,
                messages.c.created_at,
            )
            .where(messages.c.conversation_id == conv.id, messages.c.owner_id == conv.owner_id, messages.c.seq > since)
            .order_by(messages.c.seq)
        )
        if limit is not None:
            query = query.limit(limit)
        with self.read() as conn:
            rows = conn.execute(query).all()
            if not rows:
                return []
            part_rows = conn.execute(
                self._parts_query(conv, cut)
                .where(parts.c.seq > since, parts.c.seq <= rows[-1].seq)
                .order_by(parts.c.seq, parts.c.idx)
            ).all()
        return self._assemble(rows, part_rows, key="seq")

    def seqs(self, conversation_ids: Sequence[str]) -> dict[str, int]:
        """Each conversation's write counter: what live follow compares to find other processes' writes."""
        if not conversation_ids:
            return {}
        query = select(conversations.c.id, conversations.c.seq).where(conversations.c.id.in_(conversation_ids))
        with self.read() as conn:
            return {row.id: int(row.seq) for row in conn.execute(query)}

    def tool_in(self, names: Sequence[str], among: bool = True) -> Any:
        """Whether a part's tool is (``among``) or is not one of ``names``."""
        return parts.c.tool.in_(names) if among else parts.c.tool.not_in(names)

    def _parts_query(self, conv: Conversation | None, cut: TextTools | None) -> Any:
        columns: list[Any] = [parts.c.position, parts.c.seq, parts.c.idx, parts.c.tool]
        if cut is None:
            columns.append(parts.c.body.label("body"))
        else:
            # Sent cut: a part with a stored cut whose tool is drawn as text (per today's registry).
            # substr, not LIKE: SQLite's LIKE ignores case, PostgreSQL's does not.
            by_prefix = or_(false(), *(func.substr(parts.c.tool, 1, len(p)) == p for p in cut.prefixes))
            drawn = or_(
                parts.c.tool.is_(None),
                self.tool_in(sorted(cut.names)),
                and_(self.tool_in(sorted(cut.others), among=False), by_prefix),
            )
            sent_cut = and_(parts.c.cut_ref.is_not(None), drawn)
            columns.append(case((sent_cut, parts.c.cut_body), else_=parts.c.body).label("body"))
            columns.append(case((sent_cut, parts.c.cut_ref), else_=None).label("ref"))
        query = select(*columns)
        return query if conv is None else query.where(parts.c.conversation_id == conv.id)

    @staticmethod
    def _assemble(rows: Sequence[Any], part_rows: Sequence[Any], key: str) -> list[MessageRow]:
        by_key: dict[int, MessageRow] = {}
        out = []
        for r in rows:
            row = MessageRow(
                r.id, r.position, r.seq, r.head, [], getattr(r, "checked", None), [], getattr(r, "created_at", None)
            )
            by_key[getattr(r, key)] = row
            out.append(row)
        for p in part_rows:
            owner = by_key.get(getattr(p, key))
            if owner is not None:
                owner.parts.append((p.idx, p.body, getattr(p, "ref", None)))
                owner.tools.append(p.tool)
        return out

    def message(self, conv: Conversation, message_id: str) -> MessageRow | None:
        """One whole message, read by id under the conversation's owner."""
        with self.read() as conn:
            row = conn.execute(
                select(messages.c.id, messages.c.position, messages.c.seq, messages.c.head).where(
                    messages.c.conversation_id == conv.id,
                    messages.c.owner_id == conv.owner_id,
                    messages.c.id == message_id,
                )
            ).first()
            if row is None:
                return None
            part_rows = conn.execute(
                self._parts_query(conv, None).where(parts.c.message_id == message_id).order_by(parts.c.idx)
            ).all()
        return self._assemble([row], part_rows, key="position")[0]

    def unstamped(self, stamp: str, after: tuple[str, str] | None, limit: int) -> list[tuple[Conversation, str]]:
        """Up to ``limit`` messages not stamped ``stamp``, in key order after ``after`` (a
        conversation id and a message id): each with its conversation."""
        m = messages.c
        query = (
            self._conversation_query()
            .add_columns(m.id.label("message_id"))
            .join(messages, conversations.c.id == m.conversation_id)
            .where(or_(m.checked.is_(None), m.checked != stamp))
            .order_by(m.conversation_id, m.id)
            .limit(limit)
        )
        if after is not None:
            query = query.where(tuple_(m.conversation_id, m.id) > tuple_(*after))
        with self.read() as conn:
            rows = conn.execute(query).all()
        out = []
        for row in rows:
            fields = row._asdict()
            message_id = fields.pop("message_id")
            out.append((Conversation(**fields), message_id))
        return out

    def stamp(self, conv: Conversation, message_id: str, seq: int, stamp: str) -> bool:
        """Stamp one message as it stands, if the write ``seq`` made it (a rewrite since keeps
        the stamp its own write gave it); the message is not written, so no one is told."""
        with self.write() as conn:
            done = conn.execute(
                update(messages)
                .where(messages.c.conversation_id == conv.id, messages.c.id == message_id, messages.c.seq == seq)
                .values(checked=stamp)
            )
        return bool(done.rowcount)

    def last_message_id(self, conv: Conversation, role: str) -> str | None:
        """The id of the conversation's last message (by position) if it has this role, else None."""
        query = (
            select(messages.c.id)
            .where(messages.c.conversation_id == conv.id, messages.c.owner_id == conv.owner_id)
            .order_by(messages.c.position.desc())
            .limit(1)
        )
        with self.read() as conn:
            row = conn.execute(query.add_columns(messages.c.role)).first()
        return row.id if row is not None and row.role == role else None

    def part_body(self, conv: Conversation, message_id: str, index: int) -> StoredBody | None:
        """One whole part as stored, to be sent as it is: its tool, its message's read stamp, and
        its JSON in UTF-8, in chunks (a backend that can reads them as they are sent)."""
        query = self._part_query(conv, message_id, index, self.as_bytes(parts.c.body))
        with self.read() as conn:
            row = conn.execute(query).first()
        if row is None:
            return None
        body = row.body if isinstance(row.body, bytes) else row.body.encode()
        return StoredBody(row.tool, row.checked, len(body), iter((body,)))

    @staticmethod
    def _part_query(conv: Conversation, message_id: str, index: int, *columns: Any) -> Any:
        return (
            select(parts.c.tool, messages.c.checked, *columns)
            .join(
                messages,
                and_(messages.c.conversation_id == parts.c.conversation_id, messages.c.id == parts.c.message_id),
            )
            .where(
                parts.c.conversation_id == conv.id,
                parts.c.message_id == message_id,
                parts.c.idx == index,
                messages.c.owner_id == conv.owner_id,
            )
        )

    def part(self, conv: Conversation, message_id: str, index: int) -> tuple[str, str | None] | None:
        """One whole part (its JSON and tool), read by message id under the conversation's owner."""
        with self.read() as conn:
            row = conn.execute(self._part_query(conv, message_id, index, parts.c.body)).first()
        return (row.body, row.tool) if row else None

    def counts(self, conversation_ids: Sequence[str]) -> dict[str, int]:
        """Messages and parts stored under these conversations (what the import tests and bench check)."""
        if not conversation_ids:
            return {"messages": 0, "parts": 0}
        with self.read() as conn:
            m = conn.execute(
                select(func.count()).select_from(messages).where(messages.c.conversation_id.in_(conversation_ids))
            ).scalar()
            p = conn.execute(
                select(func.count()).select_from(parts).where(parts.c.conversation_id.in_(conversation_ids))
            ).scalar()
        return {"messages": int(m or 0), "parts": int(p or 0)}

    # -- import bookkeeping --------------------------------------------------------------

    def import_state(self, source: str) -> str | None:
        """What the importers recorded for a source (a session file), or None if never imported."""
        with self.read() as conn:
            return conn.execute(select(imports.c.state).where(imports.c.source == source)).scalar()

    def set_import_state(self, source: str, state: str) -> None:
        """Record (or replace) the import state of a source."""
        with self.write() as conn:
            self.upsert_in(
                conn,
                imports,
                {"source": source, "state": state, "done": True, "updated_at": now()},
                ["source"],
                ["state", "done", "updated_at"],
            )

    # -- dialect hooks -------------------------------------------------------------------

    def upsert_in(
        self, conn: Connection, table: Any, values: dict[str, Any], keys: Sequence[str], update_cols: Sequence[str]
    ) -> None:
        """Run :meth:`upsert` on an open connection."""
        conn.execute(self.upsert(table, values, keys, update_cols))
