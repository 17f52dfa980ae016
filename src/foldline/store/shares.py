"""Share links: made, found by their token's hash, listed by agent, and deleted (revoked)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import and_, delete, insert, or_, select

from .core import Hooks
from .rows import EVERYONE, now
from .schema import conversations, members, shares

Json = dict[str, Any]
SHOWN = (shares.c.id, shares.c.agent_id, shares.c.account_id, shares.c.created_at, shares.c.expires_at)


class Shares(Hooks):
    """Share links (mixed into :class:`~foldline.store.Store`): stored by their token's hash only."""

    def add_share(self, share_id: str, token_hash: str, agent_id: str, account_id: str, expires_at: str | None) -> Json:
        """A new share of ``agent_id`` made by ``account_id``; the agent's expired shares are
        dropped on the way. Returns it as :meth:`share` does."""
        stamp = now()
        row = {"id": share_id, "agent_id": agent_id, "account_id": account_id, "created_at": stamp,
               "expires_at": expires_at}  # fmt: skip
        with self.write() as conn:
            conn.execute(delete(shares).where(shares.c.agent_id == agent_id, shares.c.expires_at <= stamp))
            conn.execute(insert(shares).values(hash=token_hash, **row))
        return row

    def share_by_hash(self, token_hash: str) -> Json | None:
        """The share whose token hashes to ``token_hash`` (expired or not), or None."""
        with self.read() as conn:
            row = conn.execute(select(*SHOWN).where(shares.c.hash == token_hash)).first()
        return row._asdict() if row else None

    def share(self, share_id: str) -> Json | None:
        """A share by its id (expired or not), or None."""
        with self.read() as conn:
            row = conn.execute(select(*SHOWN).where(shares.c.id == share_id)).first()
        return row._asdict() if row else None

    def shares_of(self, account_id: str, agent_id: str | None = None) -> list[Json]:
        """The shares that have not expired of the agents ``account_id`` may read (a member of
        their workspace), or of one of them: oldest first, never a hash."""
        stamp = now()
        query = (
            select(*SHOWN)
            .join(conversations, conversations.c.id == shares.c.agent_id)
            .join(members, and_(members.c.workspace_id == conversations.c.workspace_id,
                                members.c.account_id == account_id))  # fmt: skip
            .where(or_(shares.c.expires_at.is_(None), shares.c.expires_at > stamp))
            .order_by(shares.c.created_at, shares.c.id)
        )
        if agent_id is not None:
            query = query.where(shares.c.agent_id == agent_id)
        with self.read() as conn:
            return [row._asdict() for row in conn.execute(query)]

    def delete_share(self, share_id: str) -> bool:
        """Revoke a share: its row is deleted and every follower is told to check again; whether one was."""
        with self.write() as conn:
            gone = conn.execute(delete(shares).where(shares.c.id == share_id)).rowcount
            if gone:
                self.announce(conn, EVERYONE)
        return bool(gone)

