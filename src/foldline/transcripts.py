"""What Foldline does, above the store and below HTTP: accounts, agents, the write door, reads.

:class:`Transcripts` is the only way in: routes, the CLI and the importers call its methods and
never see the store or SQL. Access is checked here: a read needs membership of the agent's
workspace, a write needs the owner, and every other case is the same
:class:`~foldline.errors.NotFound`. Every write (messages, titles, dates) wakes live followers.
"""

from __future__ import annotations

import hashlib
import math
import re
import secrets
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from types import TracebackType
from typing import Any

import orjson

from . import search
from .agentlist import PROJECT_MAX, encode_cursor, is_live, parse_list_query, usage_json
from .cut import candidate, cut_text
from .errors import BadRequest, Conflict, FoldlineError, Forbidden, Invalid, NotFound, Unauthorized
from .fields import FIELDS, searchable
from .message import (
    NOT_IN_NAMES,
    READ_CHECKS,
    TURN_ENDED,
    canonical,
    check_message,
    readable_metadata,
    readable_part,
    set_unknown_outcome,
    tool_name,
)
from .pagecache import PageCache, PageKey
from .registry import Registry
from .settings import Settings
from .store import (
    EVERYONE,
    AgentFacts,
    AgentRow,
    Conversation,
    Found,
    MessageRow,
    PageRead,
    SeqChecks,
    StaleWrite,
    Store,
    StoredPart,
    TextRow,
    open_store,
)
from .store.chunks import FieldText
from .usage import NAME_MAX, Usage, message_usage, parse_usage, price_table

__all__ = ["TURN_ENDED", "Transcripts"]
OPEN_STATES = ("input-streaming", "input-available", "approval-requested", "approval-responded")
TURN_END_TRIES = 5
RESTAMP_BATCH = 500  # messages looked at per step of `restamp`
CALL_MAX = 256  # code points in a subagent's call id
TITLE_MAX = 500  # code points in an agent's title
TOKEN_CACHE_MAX = 10_000  # tokens remembered at once (past it, the cache starts again empty)
# Keys a stored head may not hold for its message to be sent from its stored text (a read adds them).
ADDED_KEYS = (b'"parts"', b'"cutParts"', b'"skippedParts"', b'"createdAt"')
SEQ_MAX = 2**31 - 1  # positions and seqs are 32-bit integers on every backend

Json = dict[str, Any]


TOUCH_MINUTES = 5  # how stale a token's last use may be before it is noted again
SESSION_DAYS = 30  # a panel session's life
TOKEN_ID_SHAPE = re.compile("[0-9a-f]{12,64}")


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def later(stamp: str, delta: timedelta) -> str:
    moment = datetime.fromisoformat(stamp.replace("Z", "+00:00")) + delta
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def minutes_before(stamp: str, minutes: int) -> str:
    return later(stamp, timedelta(minutes=-minutes))


def new_token() -> str:
    return "fl_" + secrets.token_urlsafe(32)


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()


def conversation_json(conv: Conversation) -> Json:
    return {
        "id": conv.id,
        "workspace_id": conv.workspace_id,
        "owner_id": conv.owner_id,
        "title": conv.title,
        "created_at": conv.created_at,
        "updated_at": conv.updated_at,
    }


def agent_json(row: AgentRow) -> Json:
    """An agent as the list and its own read show it: the conversation, where it ran, its
    messages (its subagents' included), tokens and estimated cost, and whether it is live."""
    usage = Usage(row.input_tokens, row.output_tokens, row.cache_read_tokens, row.cache_write_tokens)
    return {
        **conversation_json(row.conv),
        "source": row.source,
        "project": row.project,
        "branch": row.branch,
        "model": row.model,
        "messages": row.messages,
        "usage": usage_json(usage, row.cost, row.unpriced),
        "live": is_live(row.conv.updated_at),
    }


def usage_row_json(row: Json) -> Json:
    usage = Usage(row["input_tokens"], row["output_tokens"], row["cache_read_tokens"], row["cache_write_tokens"])
    return {"messages": row["messages"], **usage_json(usage, row["cost"], row["unpriced"])}


def agent_facts(role: str, metadata: Any) -> AgentFacts:
    """Where an agent ran, as a message's metadata says: its source (``claude-code`` or
    ``codex`` as the importers mark it, else ``api``), folder (``cwd``), git branch
    (``gitBranch``, or Codex's ``git.branch``) and, for an assistant message, its model."""
    meta = metadata if isinstance(metadata, dict) else {}

    def text(value: Any, most: int) -> str | None:  # NUL cannot be stored in PostgreSQL text
        return value[:most] if isinstance(value, str) and value and "\x00" not in value else None

    source = meta.get("source") if meta.get("source") in ("claude-code", "codex") else "api"
    git = meta.get("git")
    branch = text(meta.get("gitBranch"), NAME_MAX) or (
        text(git.get("branch"), NAME_MAX) if isinstance(git, dict) else None
    )
    model = text(meta.get("model"), NAME_MAX) if role == "assistant" else None
    if model is not None and model.startswith("<"):  # Claude Code's "<synthetic>" notes are no model
        model = None
    return AgentFacts(source, text(meta.get("cwd"), PROJECT_MAX), branch, model)


class Transcripts:
    """The service: accounts, workspaces, agents, the write door and every read.

    ``Transcripts.open(url)`` opens (and migrates) the store at a database URL; ``close()`` (or a
    ``with`` block) releases it. Methods that act for an account take its id first, as
    :meth:`authenticate` returns it, and raise a :mod:`foldline.errors` class when refused.
    """

    def __init__(self, store: Store, registry: Registry | None = None, settings: Settings | None = None):
        self._store = store
        self.listeners: list[Callable[[str], None]] = []  # told the conversation id after each write
        self.settings = settings or Settings()
        self.registry = registry or Registry.load(self.settings.registry)
        self.read_stamp = read_stamp(self.registry)
        self._retired = frozenset(name for name, tool in self.registry.tools.items() if tool.retired)
        self._pages = PageCache(int(self.settings.page_cache_mb * 2**20))
        # token hash -> (account id, monotonic time it is good until); see forget_tokens().
        self._tokens: dict[str, tuple[str, float]] = {}
        self._tokens_lock = threading.Lock()

    @property
    def reads_are_local(self) -> bool:
        """Whether a read is answered from a file on this machine (SQLite), with no network
        round trip to wait on."""
        return self._store.local

    def seq_checks(self) -> SeqChecks | None:
        """What checks kept pages from an event loop (:meth:`kept_page`), for that loop to open
        and close; None where reads are local, or no page is kept."""
        return self._store.seq_checks(self.settings.db_threads) if self.settings.page_cache_mb > 0 else None

    @classmethod
    def open(cls, settings: Settings) -> Transcripts:
        """The service on ``settings.db`` (a SQLite path or a ``postgresql://`` URL), migrated."""
        return cls(open_store(settings.db, synchronous=settings.sqlite_synchronous), settings=settings)

    def close(self) -> None:
        """Close the store's connections."""
        self._store.close()

    def __enter__(self) -> Transcripts:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def listen(self, callback: Callable[[str], None]) -> Callable[[], None]:
        """Call ``callback(conversation_id)`` on other processes' writes; returns a stop function."""
        return self._store.listen(callback)

    def _changed(self, conversation_id: str) -> None:
        for listener in self.listeners:
            listener(conversation_id)

    # -- accounts ------------------------------------------------------------------------

    def authenticate(self, token: str | None) -> str:
        """The account a bearer token belongs to, or :class:`Unauthorized` (unknown, revoked or
        expired).

        A token found is remembered for ``settings.token_cache_seconds`` (0: never), so a burst
        of reads asks the database once; a token not found is never remembered. Whatever takes a
        token's power away (a revocation, a sign-out) calls :meth:`forget_tokens` in this
        process; the cache's few seconds bound how long another process keeps trusting it. When
        a token was last used is noted at most every few minutes, never on each call.
        """
        if not token:
            raise Unauthorized()
        key = hash_token(token)
        known = self._tokens.get(key)
        moment = time.monotonic()
        if known is not None and known[1] > moment:
            return known[0]
        found = self._store.token(key)
        stamp = now()
        if found is None or (found["expires_at"] is not None and found["expires_at"] <= stamp):
            raise Unauthorized()
        if found["last_used_at"] is None or found["last_used_at"] < minutes_before(stamp, TOUCH_MINUTES):
            self._store.touch_token(key, stamp)
        account = str(found["account_id"])
        seconds = self.settings.token_cache_seconds
        if seconds > 0:
            with self._tokens_lock:
                if len(self._tokens) >= TOKEN_CACHE_MAX:
                    self._tokens.clear()
                self._tokens[key] = (account, moment + seconds)
        return account

    def tokens(self, account_id: str) -> list[Json]:
        """An account's tokens: id, label, when made, last used and expiring; never the secret."""
        return self._store.tokens_of(self._known_account(account_id))

    def revoke(self, token_id: str) -> None:
        """Revoke a token by its id (from :meth:`tokens`): it stops working at once, and every
        event stream opened with it ends (in this process at once; in others within a heartbeat)."""
        if not (TOKEN_ID_SHAPE.fullmatch(token_id) and self._store.revoke_token(token_id)):
            raise NotFound(what=f"token {token_id}")
        self.forget_tokens()
        self._changed(EVERYONE)

    def start_session(self, token: str) -> str:
        """A panel session for the account ``token`` signs in as: a token of its own, expiring in
        30 days and revoked by :meth:`end_session`, so a browser never keeps the account's token."""
        account = self.authenticate(token)
        return str(self.new_token(account, label="panel", expires_in=timedelta(days=SESSION_DAYS))["token"])

    def end_session(self, token: str | None) -> None:
        """Sign a panel session out for good: its token is revoked (a copy of the cookie stops working)."""
        if token:
            self._store.revoke_token(hash_token(token))
            self.forget_tokens()
            self._changed(EVERYONE)

    def cached_account(self, token: str | None) -> str | None:
        """The account of a token this process authenticated moments ago, without asking the
        database; ``None`` when it must ask (:meth:`authenticate`)."""
        if not token:
            return None
        known = self._tokens.get(hash_token(token))
        return known[0] if known is not None and known[1] > time.monotonic() else None

    def forget_tokens(self) -> None:
        """Forget every remembered token at once: the next request of each asks the database.

        Call it after anything that takes a token's power away (revoking or expiring a token,
        removing an account), in the process that did it.
        """
        with self._tokens_lock:
            self._tokens.clear()

    def create_account(self, name: str) -> Json:
        """A new account and its first token (shown once: only its hash is stored)."""
        token = new_token()
        account = self._store.create_account(str(uuid.uuid4()), name, hash_token(token))
        return {**account, "token": token}

    def new_token(self, account_id: str, label: str = "cli", expires_in: timedelta | None = None) -> Json:
        """Another token for an account (the old ones keep working), expiring after ``expires_in``
        if given; shown once. Returns the account's id, the token and the token's own id."""
        account_id = self._known_account(account_id)
        token = new_token()
        expires_at = later(now(), expires_in) if expires_in is not None else None
        self._store.add_token(account_id, hash_token(token), label, expires_at)
        return {"id": account_id, "token": token, "token_id": hash_token(token)[:12], "expires_at": expires_at}

    def accounts(self) -> list[Json]:
        """Every account (for the operator's command line)."""
        return self._store.all_accounts()

    def accounts_named(self, name: str) -> list[str]:
        """The ids of the accounts called ``name``, oldest first."""
        return self._store.accounts_named(name)

    def create_workspace(self, name: str, member_ids: list[str]) -> Json:
        """A new workspace with these members (the operator's command line)."""
        members = [self._known_account(account_id) for account_id in member_ids]
        return self._store.create_workspace(str(uuid.uuid4()), name, members)

    def workspaces(self) -> list[Json]:
        """Every workspace with its members' ids (for the operator's command line)."""
        return self._store.all_workspaces()

    def add_member(self, workspace_id: str, account_id: str) -> None:
        """Add an account to a workspace (the operator's command line; no caller is checked)."""
        account_id = self._known_account(account_id)
        workspace_id = canonical_uuid(workspace_id, "workspace")
        if not self._store.workspace_exists(workspace_id):
            raise NotFound(what=f"workspace {workspace_id}")
        self._store.add_member(workspace_id, account_id)

    def remove_member(self, workspace_id: str, account_id: str) -> None:
        """Take an account out of a workspace: its open event streams there end at once."""
        workspace_id, account_id = canonical_uuid(workspace_id, "workspace"), canonical_uuid(account_id, "account")
        if not self._store.remove_member(workspace_id, account_id):
            raise NotFound(what=f"membership of account {account_id} in workspace {workspace_id}")
        self._changed(EVERYONE)

    def check_member(self, account: str, workspace_id: str) -> str:
        """The workspace's canonical id if ``account`` is a member; else the one not-found."""
        workspace_id = canonical_uuid(workspace_id, "workspace")
        if not self._store.is_member(workspace_id, canonical_uuid(account, "account")):
            raise NotFound(what=f"workspace {workspace_id} with account {account} among its members")
        return workspace_id

    def _known_account(self, account_id: str) -> str:
        account_id = canonical_uuid(account_id, "account")
        if self._store.account(account_id) is None:
            raise NotFound(what=f"account {account_id}")
        return account_id

    def me(self, account_id: str) -> Json:
        """An account with the workspaces it belongs to."""
        account = self._store.account(account_id) or {"id": account_id, "name": ""}
        return {**account, "workspaces": self._store.workspaces_of(account_id)}

    # -- agents --------------------------------------------------------------------------

    def create_agent(self, account: str, workspace_id: Any, title: Any = None, agent_id: str | None = None) -> Json:
        """A new agent in a workspace ``account`` belongs to, owned by ``account``; an importer passes
        a stable ``agent_id``.
        """
        if not isinstance(workspace_id, str):
            raise Invalid("'workspace_id' must be a string", where="workspace_id")
        if title is not None:
            check_title(title)
        workspace_id = canonical_uuid(workspace_id)
        if not self._store.is_member(workspace_id, account):
            raise NotFound()
        conv = self._store.create_conversation(agent_id or str(uuid.uuid4()), workspace_id, account, title)
        if (conv.owner_id, conv.workspace_id, conv.parent_id) != (account, workspace_id, None):
            raise NotFound()  # an importer's stable id taken by someone else's agent: say nothing of it
        return self._agent_json(conv)

    def list_agents(
        self,
        account: str,
        workspace_id: str | None,
        *,
        sort: Any = None,
        order: Any = None,
        source: Any = None,
        project: Any = None,
        limit: Any = None,
        cursor: Any = None,
    ) -> Json:
        """A page of the agents of a workspace ``account`` belongs to: ``{"agents", "next",
        "prices"}``, and on the first page (no ``cursor``) ``facets``: the sources and projects
        to filter by. Sorted by ``sort`` (activity, messages, tokens, cost, title) in ``order``,
        only ``source``'s and ``project``'s when given, ``limit`` (1–200, default 50) a page."""
        query = parse_list_query(sort, order, source, project, limit, cursor)
        if workspace_id is None:
            raise BadRequest("workspace_id is required", where="workspace_id")
        workspace_id = canonical_uuid(workspace_id)
        if not self._store.is_member(workspace_id, account):
            raise NotFound()
        rows, last_value = self._store.agent_list(
            workspace_id, sort=query.sort, descending=query.descending, source=query.source, project=query.project,
            after=query.after, limit=query.limit,
        )  # fmt: skip
        after = None
        if last_value is not None and rows:
            after = encode_cursor(query.sort, query.descending, last_value, rows[-1].conv.id)
        out: Json = {"agents": [agent_json(row) for row in rows], "next": after, "prices": price_table()}
        if cursor is None:
            facets = self._store.agent_facets(workspace_id)
            out["facets"] = {
                "sources": [{"value": v, "agents": n} for v, n in facets["source"]],
                "projects": [{"value": v, "agents": n} for v, n in facets["project"]],
            }
        return out

    def agent(self, account: str, agent_id: str) -> Json:
        """One agent ``account`` may read, with its subagents' call ids, what the list shows of
        it, and its usage by model."""
        conv = self.conversation(account, agent_id)
        out = self._agent_json(conv)
        by_model = self._store.usage_rows(account, "model", agent_id=conv.id)
        out["usage_by_model"] = [{"model": row["key"] or None, **usage_row_json(row)} for row in by_model]
        out["prices"] = price_table()
        return out

    def _agent_json(self, conv: Conversation) -> Json:
        row = self._store.agent_row(conv.id)
        shown = agent_json(row) if row is not None else conversation_json(conv)
        return {**shown, "subagents": self._store.subagent_calls(conv.id)}

    def usage(self, account: str, by: str = "day", workspace_id: str | None = None) -> Json:
        """Tokens and estimated cost over the agents ``account`` may read (or one workspace's),
        summed by ``day`` (UTC, by each message's own time), ``model`` or ``agent``, from the
        totals kept as messages are written: ``{"by", "rows", "total", "prices"}``."""
        if by not in ("day", "model", "agent"):
            raise BadRequest("'by' is day, model or agent", where="by")
        if workspace_id is not None:
            workspace_id = self.check_member(account, workspace_id)
        rows = self._store.usage_rows(account, by, workspace_id=workspace_id)
        out = []
        total = dict.fromkeys(("messages", "input_tokens", "output_tokens", "cache_read_tokens",
                               "cache_write_tokens", "cost", "unpriced"), 0)  # fmt: skip
        for row in rows:
            entry: Json = {by: row["key"] or None}
            if by == "agent":
                entry.update(title=row["title"], workspace_id=row["workspace_id"])
            out.append({**entry, **usage_row_json(row)})
            for key in total:
                total[key] += row[key]
        return {"by": by, "rows": out, "total": usage_row_json(total), "prices": price_table()}

    def find_agent(self, account: str, agent_id: str, call: str | None = None) -> Json | None:
        """The agent (or its subagent) if ``account`` may read it, else ``None`` (never an error)."""
        try:
            return conversation_json(self.conversation(account, agent_id, call))
        except NotFound:
            return None

    def rename_agent(self, account: str, agent_id: str, title: str, call: str | None = None) -> None:
        """Give an agent (or its subagent) a title; owner only."""
        check_title(title)
        conv = self._target(account, agent_id, call)
        self._store.set_title(conv.id, title)
        self._changed(conv.id)

    def date_agent(
        self, account: str, agent_id: str, created_at: str, updated_at: str, call: str | None = None
    ) -> None:
        """Date an agent (or its subagent) by its source, such as an imported session's first and
        last lines; owner only."""
        conv = self._target(account, agent_id, call)
        self._store.set_times(conv.id, created_at, updated_at)
        self._changed(conv.id)

    def _target(self, account: str, agent_id: str, call: str | None) -> Conversation:
        """The conversation ``account`` may change: the agent it owns, or that agent's subagent."""
        parent = self._owned(account, agent_id)
        return parent if call is None else self.conversation(account, agent_id, call)

    def conversation(self, account: str, agent_id: str, call: str | None = None) -> Conversation:
        """The conversation ``account`` may read, or the one not-found."""
        agent = f"agent {agent_id}" + (f" (subagent {call})" if call is not None else "")
        if call is not None and not is_call(call):
            raise NotFound(what=agent)
        conv = self._store.visible_conversation(account, canonical_uuid(agent_id, "agent"), call)
        if conv is None:
            raise NotFound(what=f"{agent} that account {account} may read")
        return conv

    # -- the write door ------------------------------------------------------------------

    def put_message(self, account: str, agent_id: str, message_id: str, body: Any, call: str | None = None) -> Json:
        """The write door: validate ``body`` fully and create or replace the message (owner only); a
        subagent's conversation is made by its first write.
        """
        message_id = canonical_uuid(message_id)
        parent = self._owned(account, agent_id)
        if call is not None and not is_call(call):
            raise NotFound()
        message = check_message(body, self.registry, message_id)
        parse_usage(message.get("metadata"))  # a usage report of another shape is refused (422)
        # A subagent's conversation is made by its first write, and only once that write passed.
        conv = parent if call is None else self._subagent(account, parent, call)
        return self._write(conv, message)

    def _owned(self, account: str, agent_id: str) -> Conversation:
        """The agent, if ``account`` may write to it: its owner (a mere member is refused)."""
        conv = self.conversation(account, agent_id)
        if conv.owner_id != account:
            raise Forbidden("only the agent's owner may write to it")
        return conv

    def _subagent(self, account: str, parent: Conversation, call: str) -> Conversation:
        found = self._store.visible_conversation(account, parent.id, call)
        if found is not None:
            return found
        return self._store.create_conversation(
            str(uuid.uuid4()), parent.workspace_id, parent.owner_id, None, parent.id, call
        )

    def _write(
        self, conv: Conversation, message: Json, expect_seq: int | None = None, checked: bool = True
    ) -> Json:
        """Store a message. ``checked``: it passed the write door (or is valid by construction),
        so it is stamped with :attr:`read_stamp` and later reads send its stored text as it is."""
        head = {k: v for k, v in message.items() if k != "parts"}
        stored = [self._stored_part(i, p) for i, p in enumerate(message["parts"])]
        stamp = self.read_stamp if checked else None
        meta = message.get("metadata")
        seq, created = self._store.put_message(
            conv, message["id"], message["role"], orjson.dumps(head).decode(), stored, expect_seq, stamp,
            usage=message_usage(meta), facts=agent_facts(message["role"], meta),
        )
        self._changed(conv.id)
        return {"id": message["id"], "seq": seq, "created": created}

    def _stored_part(self, index: int, part: Json) -> StoredPart:
        """A part to store, with its cut if it has a field over the bound (of any tool: whether
        the cut is sent is decided by the registry when the part is read)."""
        body = orjson.dumps(part).decode()
        name = tool_name(part)
        found = candidate(part)
        # A text part (an answer, a prompt) is cut only past the larger text bound, with the same ends.
        bound = self.settings.text_bound if part.get("type") == "text" else self.settings.bound
        cut = cut_text(*found, bound=bound, half=self.settings.bound // 2) if found else None
        texts = tuple(
            FieldText(field, text, len(cut.head) if cut and cut.field == field else None)
            for field, text in searchable(part)
        )
        if cut is None:
            return StoredPart(index, name, body, texts=texts)
        rest = {k: v for k, v in part.items() if k != cut.field}
        ref = {"index": index, "field": cut.field, "bytes": cut.bytes, "head": cut.head, "tail": cut.tail}
        return StoredPart(index, name, body, orjson.dumps(rest).decode(), orjson.dumps(ref).decode(), texts)

    def end_turn(self, account: str, agent_id: str, call: str | None = None) -> Json:
        """Give every open tool part of the last assistant message an unknown outcome.

        The rewrite is a compare-and-set: if the agent writes that message meanwhile (a tool's
        real outcome arriving), the turn-end reads it again rather than overwrite it.
        """
        conv = self._target(account, agent_id, call)
        for _ in range(TURN_END_TRIES):
            message_id = self._store.last_message_id(conv, "assistant")
            row = self._store.message(conv, message_id) if message_id else None
            if row is None:
                return {"message": None, "ended": []}
            message = self._whole(row)
            ended = close_open_tools(message["parts"])
            if not ended:
                return {"message": message["id"], "ended": []}
            # Valid by construction (inputs kept, each open tool given an outcome) if the message
            # was; a row stored some other way is stamped only if it passes the read's checks.
            sound = row.checked == self.read_stamp or self._passes_read_checks(message)
            try:
                self._write(conv, message, expect_seq=row.seq, checked=sound)
            except StaleWrite:
                continue
            return {"message": message["id"], "ended": ended}
        raise Conflict("the last message kept changing; end the turn again")

    # -- import bookkeeping ---------------------------------------------------------------

    def import_state(self, account: str, workspace_id: str, source: str) -> str | None:
        """What an importer saved of ``source`` (a session's main file) in a workspace of ``account``."""
        return self._store.import_state(f"{self.check_member(account, workspace_id)}:{source}")

    def save_import_state(self, account: str, workspace_id: str, source: str, state: str) -> None:
        """Save what an importer made of ``source`` in a workspace of ``account``."""
        self._store.set_import_state(f"{self.check_member(account, workspace_id)}:{source}", state)

    # -- reads ---------------------------------------------------------------------------

    def messages(
        self,
        account: str,
        agent_id: str,
        *,
        call: str | None = None,
        cut: bool = False,
        limit: int | None = None,
        before: str | None = None,
    ) -> Json:
        """A page of a transcript: ``{"messages", "next", "seq"}`` (:meth:`page_json`, decoded)."""
        page: Json = orjson.loads(self.page_json(account, agent_id, call=call, cut=cut, limit=limit, before=before))
        return page

    def page_json(
        self,
        account: str,
        agent_id: str,
        *,
        call: str | None = None,
        cut: bool = False,
        limit: int | None = None,
        before: str | None = None,
        reread: bool = False,
    ) -> bytes:
        """A page of a transcript as the API sends it, in one read of the database.

        A message stamped with today's :attr:`read_stamp` is sent from its stored JSON texts as
        they are (no decoding, no encoding): it passed the write door's checks, which include
        every check a read runs but one, the retired tools, which is asked of each part's stored
        ``tool`` column. Any other message (stored before stamps, under another registry's
        metadata schemas, or not through the write door) is decoded and checked part by part.
        `seq`, read with the page: follow the events from here (…/events?since=seq) to miss nothing.
        ``reread``: the caller has just asked (:meth:`kept_page`), so a kept copy is not asked about again.
        """
        if call is not None and not is_call(call):
            raise NotFound()
        agent = canonical_uuid(agent_id)
        try:
            cursor = parse_cursor(before)
        except BadRequest:
            self.conversation(account, agent, call)  # a conversation not visible is the one not-found
            raise
        text_tools = self.registry.text_tools if cut else None
        key: PageKey = (agent, call, cut, limit, cursor)
        kept = self._pages.get(key)
        known = None if kept is None or reread else kept.seq
        found = self._store.read_page(account, agent, call, cut=text_tools, limit=limit, before=cursor, known_seq=known)
        if found is None:
            raise NotFound()
        if found.unchanged and kept is not None:
            return kept.body
        out = [b'{"messages":[']
        self._page_bytes(found, out, dated=cut)
        after = b"null" if not (found.more and found.messages) else b'"%d"' % found.messages[0][1]
        out.append(b'],"next":%s,"seq":%d}' % (after, found.seq))
        page = b"".join(out)
        self._pages.put(key, found.seq, page)
        return page

    async def kept_page(
        self, checks: SeqChecks, account: str, agent_id: str, *, call: str | None = None, cut: bool = False,
        limit: int | None = None, before: str | None = None,
    ) -> bytes | None:
        """The page :meth:`page_json` would send, if this process kept it and the database says
        it still holds (the account may read the conversation and it was not written since),
        asked on the event loop through ``checks``; None sends the caller to :meth:`page_json`."""
        if call is not None and not is_call(call):
            return None
        try:
            key: PageKey = (canonical_uuid(agent_id), call, cut, limit, parse_cursor(before))
        except FoldlineError:
            return None
        kept = self._pages.get(key)
        if kept is None:
            return None
        seq = await checks.seq(account, key[0], call)
        return kept.body if seq == kept.seq else None

    def _page_bytes(self, page: PageRead, out: list[bytes], dated: bool) -> None:
        """Add a page's messages to ``out``, comma-separated, as a read sends them.

        The parts arrive in the messages' order, so one walk down both lists pairs them. A
        message the stamp vouches for (see :meth:`page_json`) is sent from its stored texts;
        any other is read back whole and checked (:meth:`_readable`).
        """
        stamp, retired, parts = self.read_stamp, self._retired, page.parts
        at, count = 0, len(parts)
        for n, (message_id, position, seq, head, checked, created_at) in enumerate(page.messages):
            while at < count and parts[at][0] < position:  # a part of no message on the page
                at += 1
            first = at
            while at < count and parts[at][0] == position:
                at += 1
            mine = parts[first:at]
            if n:
                out.append(b",")
            head = as_bytes(head)
            if checked != stamp or head[-1:] != b"}" or any(key in head for key in ADDED_KEYS) or (
                retired and any(tool in retired for _, _, tool, _, _ in mine)
            ):
                row = MessageRow(message_id, position, seq, head, [(i, b, r) for _, i, _, b, r in mine], checked,
                                 [tool for _, _, tool, _, _ in mine], created_at)  # fmt: skip
                out.append(orjson.dumps(self._readable(row, dated=dated)))
                continue
            out += (head[:-1], b',"parts":[', b",".join([as_bytes(body) for _, _, _, body, _ in mine]), b"]")
            refs = [as_bytes(ref) for _, _, _, _, ref in mine if ref is not None]
            if refs:
                out += (b',"cutParts":[', b",".join(refs), b"]")
            if dated and created_at:
                out += (b',"createdAt":', orjson.dumps(created_at))
            out.append(b"}")

    def restamp(self, progress: Callable[[int, int], None] = lambda stamped, left: None) -> tuple[int, int]:
        """Stamp with :attr:`read_stamp` every stored message that passes today's read checks
        (those stored before stamps, or under another registry's metadata schemas), so their
        reads send them as stored; ``progress(stamped, kept)`` after each batch. A message that
        fails them is kept as it is and keeps every check on each read. Nothing is rewritten and
        no follower is told. Returns (stamped, kept)."""
        stamped = kept = 0
        after: tuple[str, str] | None = None
        while batch := self._store.unstamped(self.read_stamp, after, RESTAMP_BATCH):
            for conv, message_id in batch:
                row = self._store.message(conv, message_id)
                message = self._whole_or_none(row) if row is not None else None
                sound = message is not None and self._passes_read_checks(message)
                if sound and row is not None and self._store.stamp(conv, message_id, row.seq, self.read_stamp):
                    stamped += 1
                else:
                    kept += 1
            after = (batch[-1][0].id, batch[-1][1])
            progress(stamped, kept)
        return stamped, kept

    def _whole_or_none(self, row: MessageRow) -> Json | None:
        try:
            return self._whole(row)
        except Invalid:
            return None

    def _passes_read_checks(self, message: Json) -> bool:
        """Whether a whole message passes every check a read runs (so it may be stamped)."""
        return readable_metadata(message, self.registry) and all(
            readable_part(part, self.registry) for part in message["parts"]
        )

    def changes(self, conv: Conversation, since: int, limit: int | None = None) -> list[tuple[int, Json]]:
        """Messages written after ``since`` (at most ``limit``, oldest first), cut, each with the
        seq that wrote it."""
        rows = self._store.changes(conv, since, self.registry.text_tools, limit)
        return [(row.seq, self._readable(row, dated=True)) for row in rows]

    def seqs(self, conversation_ids: list[str]) -> dict[str, int]:
        """The write counters of some conversations (live follow's look for other processes' writes)."""
        return self._store.seqs(conversation_ids)

    def may_follow(self, token: str | None, account: str, agent_id: str, call: str | None = None) -> bool:
        """Whether ``token`` still signs in as ``account`` and it may still read the conversation."""
        try:
            return self.authenticate(token) == account and self.find_agent(account, agent_id, call) is not None
        except Unauthorized:
            return False

    def part(self, account: str, agent_id: str, message_id: str, index: str, call: str | None = None) -> Json:
        """One part, whole (the read's cheap checks apply: a part they drop is not found)."""
        conv = self.conversation(account, agent_id, call)
        if not (index.isascii() and index.isdigit()) or len(index) > 9 or index != str(int(index)):
            raise NotFound()  # one spelling of each index: "00" is not "0"
        found = self._store.part(conv, canonical_uuid(message_id), int(index))
        if found is None:
            raise NotFound()
        part = decoded(found[0])
        if not isinstance(part, dict) or not readable_part(part, self.registry):
            raise NotFound()
        return part

    def part_stream(
        self, account: str, agent_id: str, message_id: str, index: str, call: str | None = None
    ) -> tuple[int, Iterator[bytes]]:
        """One part, whole, as the API sends it: its size in bytes and its JSON in chunks.

        A part of a stamped message (:meth:`page_json`) whose tool is not retired is sent as it
        is stored, read as it is sent where the backend can; any other is decoded and checked
        as :meth:`part` does."""
        conv = self.conversation(account, agent_id, call)
        if not (index.isascii() and index.isdigit()) or len(index) > 9 or index != str(int(index)):
            raise NotFound()
        found = self._store.part_body(conv, canonical_uuid(message_id), int(index))
        if found is None:
            raise NotFound()
        if found.checked == self.read_stamp and (found.tool is None or found.tool not in self._retired):
            return found.size, found.chunks
        try:
            part = decoded(b"".join(found.chunks))
        finally:
            found.close()
        if not isinstance(part, dict) or not readable_part(part, self.registry):
            raise NotFound()
        body = orjson.dumps(part)
        return len(body), iter((body,))

    def part_slice(
        self,
        account: str,
        agent_id: str,
        message_id: str,
        index: str | int,
        field: Any,
        start: Any = 0,
        end: Any = None,
        call: str | None = None,
    ) -> Json:
        """Code points ``[start, end)`` of one field of one part, ``end`` clamped to the field's
        length; read from the chunks that cover them, never the whole part."""
        if field not in FIELDS:
            raise BadRequest(f"'field' is one of {', '.join(FIELDS)}", where="field")
        first = search.parse_offset(start, "start")
        last = None if end is None else search.parse_offset(end, "end")
        if last is not None and first > last:
            raise BadRequest("'start' must not be past 'end'", where="start")
        conv = self.conversation(account, agent_id, call)
        idx = str(index)
        if not (idx.isascii() and idx.isdigit()) or len(idx) > 9:
            raise NotFound()
        found = self._store.text_slice(conv.id, conv.owner_id, canonical_uuid(message_id), int(idx), field, first, last)
        if found is None or (found.tool is not None and self.registry.retired(found.tool)):
            raise NotFound()
        first = min(first, found.length)
        last = found.length if last is None else min(last, found.length)
        text = found.text[first - found.start : last - found.start]
        return {"field": field, "start": first, "end": last, "length": found.length, "text": text}

    # -- search --------------------------------------------------------------------------

    def search(
        self,
        account: str,
        q: Any,
        workspace_id: str | None = None,
        agent: str | None = None,
        limit: Any = None,
        cursor: Any = None,
        seconds: float | None = None,
    ) -> Json:
        """Hits for ``q`` in the workspaces ``account`` belongs to (or one of them, or one agent
        with its subagents), newest first: ``{"hits", "next", "partial"}``; a search still going
        after ``seconds`` (default: the settings' ``search_seconds``; ``math.inf``: no limit)
        answers with what it has (``partial``)."""
        terms = search.parse_query(q)
        count = search.parse_limit(limit)
        after = search.parse_cursor(cursor)
        if workspace_id is not None:
            workspace_id = self.check_member(account, workspace_id)
        agent_id = None if agent is None else self.conversation(account, agent).id
        seconds = self.settings.search_seconds if seconds is None else seconds
        deadline = None if math.isinf(seconds) else time.monotonic() + seconds

        def fetch(upto: int | None, n: int) -> Found:
            return self._store.search_texts(
                account, terms, workspace_id=workspace_id, agent_id=agent_id, upto=upto, limit=n, deadline=deadline
            )

        def keep(row: TextRow) -> bool:  # a retired tool's parts are dropped by every read
            return row.tool is None or not self.registry.retired(row.tool)

        return search.page(fetch, terms, count, after, self.registry.text_tools, keep)

    def _whole(self, row: MessageRow) -> Json:
        """A stored message, whole, to be written again (turn-end): every row must be readable."""
        message = decoded(row.head)
        parts = [decoded(body) for _, body, _ in row.parts]
        if not isinstance(message, dict) or not all(isinstance(p, dict) for p in parts):
            raise Invalid("the last message holds a stored part that cannot be read; it was left as it is")
        message["parts"] = parts
        return message

    def _readable(self, row: MessageRow, dated: bool = False) -> Json:
        """A stored message after the read's cheap checks, in the form it was read (cut or whole).

        ``dated`` (cut reads and live changes, which add keys of their own anyway) adds
        ``createdAt``: when the service first stored the message. A whole read returns the
        message as written, nothing added."""
        head = decoded(row.head)
        message: Json = head if isinstance(head, dict) else {"id": row.id}
        if not readable_metadata(message, self.registry):
            message.pop("metadata", None)
        sent, cut_parts, skipped = [], [], []
        for index, body, ref in row.parts:
            part = decoded(body)
            cut = decoded(ref) if ref else None
            if not self._part_ok(part, cut if isinstance(cut, dict) else None):
                skipped.append(index)
                continue
            sent.append(part)
            if isinstance(cut, dict):
                cut_parts.append(cut)
        message["parts"] = sent
        if cut_parts:
            message["cutParts"] = cut_parts
        if skipped:
            message["skippedParts"] = skipped
        if dated and row.created_at:
            message["createdAt"] = row.created_at
        return message

    def _part_ok(self, part: Any, cut: Json | None) -> bool:
        if cut is None or not isinstance(part, dict):
            return readable_part(part, self.registry)
        field = cut.get("field")
        if not isinstance(field, str) or not isinstance(cut.get("index"), int):
            return False
        # A cut part lacks its field; check its shape as if the field were there.
        return readable_part({**part, field: ""}, self.registry)


def read_stamp(registry: Registry) -> str:
    """What a message's ``checked`` stamp vouches for: the read checks of this version of
    :mod:`foldline.message` (:data:`READ_CHECKS`) and the registry's metadata schemas by role,
    passed at the write door. Retired tools are not in it: they are asked of every read."""
    schemas = orjson.dumps(registry.metadata, option=orjson.OPT_SORT_KEYS)
    return f"{READ_CHECKS}:{hashlib.sha256(schemas).hexdigest()[:16]}"


def as_bytes(text: str | bytes) -> bytes:
    return text if isinstance(text, bytes) else text.encode()


def decoded(text: str | bytes) -> Any:
    """A stored JSON text, or ``None`` when the row is not JSON (the read then drops it)."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return None


def parse_cursor(before: str | None) -> int | None:
    if before is None:
        return None
    return parse_seq(before, "before", "'before' must be a cursor from a previous page's 'next'")


def parse_seq(text: str, where: str, message: str) -> int:
    """A position or seq from a query string: ASCII digits, within the 32-bit range every backend keeps."""
    if not (text.isascii() and text.isdigit()) or len(text) > 10 or int(text) > SEQ_MAX:
        raise BadRequest(message, where=where)
    return int(text)


def check_title(title: Any) -> None:
    """A title: a string of at most 500 code points, without control characters but tab and newline."""
    if not isinstance(title, str):
        raise Invalid("'title' must be a string", where="title")
    if len(title) > TITLE_MAX:
        raise Invalid(f"'title' is at most {TITLE_MAX} characters", where="title")
    if NOT_IN_NAMES.search(title.replace("\n", " ").replace("\t", " ")):
        raise Invalid("'title' holds a control character", where="title")


def close_open_tools(parts: list[Json]) -> list[int]:
    """Give each open tool part the unknown outcome, in place; return their indexes."""
    ended = []
    for index, part in enumerate(parts):
        if tool_name(part) is not None and part.get("state") in OPEN_STATES:
            ended.append(index)
            set_unknown_outcome(part)
            if not (isinstance(part.get("approval"), dict) and part["approval"].get("approved") is True):
                part.pop("approval", None)
    return ended


def is_call(call: str) -> bool:
    """A subagent's call id as an agent writes it: 1 to 256 printable characters, not ``.`` or ``..``."""
    return 0 < len(call) <= CALL_MAX and call not in (".", "..") and NOT_IN_NAMES.search(call) is None


def canonical_uuid(value: str, kind: str | None = None) -> str:
    """A UUID in its lowercase canonical form; anything else is the one not-found (of a ``kind``
    of thing, for the operator's command line: ``account``, ``workspace``, ``agent``)."""
    found = canonical(value)
    if found is None:
        raise NotFound(what=f"{kind} {value}" if kind else None)
    return found
