"""The service's core: the store, settings, registry, the access checks and the change notice.

Every concept's module (:mod:`.accounts`, :mod:`.agents`, :mod:`.writes`, …) is a class over
:class:`Core`; :class:`~foldline.service.Transcripts` composes them into the one way in. Access
is decided here: a read needs membership of the agent's workspace (:meth:`Core.conversation`),
a write needs the owner (:meth:`Core._owned`, :meth:`Core._target`), and every other case is
the same :class:`~foldline.errors.NotFound`.
"""

from __future__ import annotations

from collections.abc import Callable
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

from ..errors import Forbidden, NotFound
from ..message import NOT_IN_NAMES, canonical
from ..pagecache import PageCache
from ..redaction import Redactor
from ..registry import Registry
from ..settings import Settings
from ..store import EVERYONE, Conversation, SeqChecks, open_store
from .door import Door
from .tokens import TokenCache

if TYPE_CHECKING:
    from ..store import Store

CALL_MAX = 256  # code points in a subagent's call id

Json = dict[str, Any]


class Core:
    """What every part of the service shares. ``open(settings)`` opens (and migrates) the store;
    ``close()`` (or a ``with`` block) releases it."""

    def __init__(self, store: Store, registry: Registry | None = None, settings: Settings | None = None):
        self._store = store
        self.listeners: list[Callable[[str], None]] = []  # told the conversation id after each write
        self.settings = settings or Settings()
        self.registry = registry or Registry.load(self.settings.registry)
        self.door = Door(self.registry, self.settings)  # checks a message and makes it ready to store
        self.read_stamp = self.door.read_stamp
        self._retired = frozenset(name for name, tool in self.registry.tools.items() if tool.retired)
        self.pages = PageCache(int(self.settings.page_cache_mb * 2**20))  # pages sent, by their seq
        self._tokens = TokenCache()  # see Accounts.forget_tokens()
        self.redactor: Redactor | None = self.door.redactor  # None: redaction is off
        # The agents list's facets by workspace, with when they were counted (Agents.facets).
        self.facets_kept: dict[str, tuple[float, Json]] = {}

    @classmethod
    def open(cls, settings: Settings) -> Self:
        """The service on ``settings.db`` (a SQLite path or a ``postgresql://`` URL), migrated."""
        store = open_store(settings.db, synchronous=settings.sqlite_synchronous, wait=settings.db_wait)
        return cls(store, settings=settings)

    def close(self) -> None:
        """Close the store's connections."""
        self._store.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    @property
    def reads_are_local(self) -> bool:
        """Whether a read is answered from a file on this machine (SQLite), with no network
        round trip to wait on."""
        return self._store.local

    def seq_checks(self) -> SeqChecks | None:
        """What checks kept pages from an event loop (:mod:`foldline.pagereads`), for that loop to
        open and close; None where reads are local, or no page is kept."""
        return self._store.seq_checks(self.settings.db_threads) if self.settings.page_cache_mb > 0 else None

    def listen(self, callback: Callable[[str], None]) -> Callable[[], None]:
        """Call ``callback(conversation_id)`` on other processes' writes; returns a stop function.

        A notice that access changed somewhere (``EVERYONE``: a token revoked, a member removed,
        in another process) first makes this process forget the tokens it remembers, so the
        streams it then wakes ask the database whether their token still signs in."""

        def told(conversation_id: str) -> None:
            if conversation_id == EVERYONE:
                self._tokens.clear()
            self.facets_kept.clear()
            callback(conversation_id)

        return self._store.listen(told)

    def redacted(self, text: str) -> str:
        """``text`` with every secret replaced by its marker (as it is if redaction is off)."""
        return self.redactor.text(text)[0] if self.redactor is not None else text

    def _changed(self, conversation_id: str) -> None:
        self.facets_kept.clear()
        for listener in self.listeners:
            listener(conversation_id)

    # -- access --------------------------------------------------------------------------

    def conversation(self, account: str, agent_id: str, call: str | None = None) -> Conversation:
        """The conversation ``account`` may read, or the one not-found."""
        agent = f"agent {agent_id}" + (f" (subagent {call})" if call is not None else "")
        if call is not None and not is_call(call):
            raise NotFound(what=agent)
        conv = self._store.visible_conversation(account, canonical_uuid(agent_id, "agent"), call)
        if conv is None:
            raise NotFound(what=f"{agent} that account {account} may read")
        return conv

    def _owned(self, account: str, agent_id: str) -> Conversation:
        """The agent, if ``account`` may write to it: its owner (a mere member is refused)."""
        conv = self.conversation(account, agent_id)
        if conv.owner_id != account:
            raise Forbidden("only the agent's owner may write to it")
        return conv

    def _target(self, account: str, agent_id: str, call: str | None) -> Conversation:
        """The conversation ``account`` may change: the agent it owns, or that agent's subagent."""
        parent = self._owned(account, agent_id)
        return parent if call is None else self.conversation(account, agent_id, call)

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


def conversation_json(conv: Conversation) -> Json:
    return {
        "id": conv.id,
        "workspace_id": conv.workspace_id,
        "owner_id": conv.owner_id,
        "title": conv.title,
        "created_at": conv.created_at,
        "updated_at": conv.updated_at,
    }
