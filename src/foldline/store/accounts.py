"""Accounts, their tokens, and workspaces with their members: who may use the store."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import (
    delete,
    func,
    insert,
    select,
    update,
)

from .core import Hooks, slot
from .rows import (
    EVERYONE,
    TOKEN_ID,
    now,
)
from .schema import (
    accounts,
    members,
    tokens,
    workspaces,
)


class Accounts(Hooks):
    """Accounts and tokens, workspaces and members (mixed into :class:`~foldline.store.Store`)."""

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
        query = self.prepared("is_member", lambda: select(members.c.account_id).where(
            members.c.workspace_id == slot("workspace"), members.c.account_id == slot("account")))  # fmt: skip
        return self.first_row(query, {"workspace": workspace_id, "account": account_id}) is not None
