"""Share links: one agent and its subagents, read without signing in by whoever holds the link.

A share reads as the member who made it may, narrowed to one agent: the agent's workspace,
its other agents and every account stay out of reach. Its token is a bearer secret like an
account's (made by :func:`~.tokens.new_token`'s generator, stored as its SHA-256 hash only) but
a different one: a share token never signs in (``/api/me`` is 401) and an account token never
opens a share. An unknown, revoked or expired share, a share of an agent its maker may no longer
read, and another agent's id through a share are all the one not-found.
"""

from __future__ import annotations

import secrets
import uuid
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from ..errors import Invalid, NotFound
from ..store import EVERYONE
from .core import Core, Json, canonical_uuid
from .tokens import hash_token, later, now

SHARE_PREFIX = "fls_"  # an account's token starts fl_: the two are told apart at a glance
EXPIRES_MAX = 10 * 366 * 24 * 3600  # seconds: a share may be made to last ten years at most
# What an agent's read shows that a share must not: the workspace and the accounts.
NOT_SHARED = ("workspace_id", "owner_id")


@dataclass(frozen=True, slots=True)
class Share:
    """A share that opens now: its id, the agent it opens, the member whose access it reads by,
    and when it expires (None: never)."""

    id: str
    agent_id: str
    account: str
    expires_at: str | None


def new_share_token() -> str:
    return SHARE_PREFIX + secrets.token_urlsafe(32)


def expires_in_seconds(value: Any) -> int | None:
    """``expires_in`` as the API takes it: absent (never expires) or whole seconds, 1 to ten years."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= EXPIRES_MAX:
        raise Invalid(f"'expires_in' is a whole number of seconds from 1 to {EXPIRES_MAX}", where="expires_in")
    return value


def as_shared(agent: Json) -> Json:
    """An agent's read as a share shows it: without its workspace and its owner."""
    return {key: value for key, value in agent.items() if key not in NOT_SHARED}


def share_json(row: Json) -> Json:
    return {"id": row["id"], "agent_id": row["agent_id"], "created_at": row["created_at"],
            "expires_at": row["expires_at"]}  # fmt: skip


class Shares(Core):
    def create_share(self, account: str, agent_id: str, expires_in: Any = None) -> Json:
        """A share of an agent ``account`` may read (else the one not-found): ``{"id", "agent_id",
        "created_at", "expires_at", "token"}``, the token shown once (only its hash is kept)."""
        seconds = expires_in_seconds(expires_in)
        conv = self.conversation(account, agent_id)
        token = new_share_token()
        expires_at = None if seconds is None else later(now(), timedelta(seconds=seconds))
        row = self._store.add_share(str(uuid.uuid4()), hash_token(token), conv.id, account, expires_at)
        return {**share_json(row), "token": token}

    def shares(self, account: str, agent_id: str | None = None) -> list[Json]:
        """The shares (not expired) of one agent ``account`` may read, or of every agent it may
        read (``agent_id`` None): oldest first, never a token."""
        agent = None if agent_id is None else self.conversation(account, agent_id).id
        return [share_json(row) for row in self._store.shares_of(canonical_uuid(account, "account"), agent)]

    def revoke_share(self, account: str, share_id: str) -> None:
        """Revoke a share of an agent ``account`` may read (else the one not-found): it opens
        nothing from now on, and its open event streams end (in this process at once; in others
        within a second)."""
        found = self._store.share(canonical_uuid(share_id, "share"))
        if found is None:
            raise NotFound(what=f"share {share_id}")
        self.conversation(account, found["agent_id"])
        if not self._store.delete_share(found["id"]):
            raise NotFound(what=f"share {share_id}")
        self._changed(EVERYONE)

    def shared(self, token: str | None, agent_id: str | None = None) -> Share:
        """The share ``token`` opens, if it opens now and (with ``agent_id``) opens that agent;
        else the one not-found. Asked of the database each time: a revocation holds at once."""
        found = self._store.share_by_hash(hash_token(token)) if token else None
        if found is None or (found["expires_at"] is not None and found["expires_at"] <= now()):
            raise NotFound()
        if agent_id is not None and canonical_uuid(agent_id) != found["agent_id"]:
            raise NotFound()
        return Share(found["id"], found["agent_id"], found["account_id"], found["expires_at"])

    def may_follow_share(self, token: str | None, agent_id: str, call: str | None = None) -> bool:
        """Whether ``token`` still opens the agent and its maker may still read the conversation."""
        try:
            share = self.shared(token, agent_id)
            self.conversation(share.account, agent_id, call)
        except NotFound:
            return False
        return True
