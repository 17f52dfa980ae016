"""Accounts and their tokens: sign-in, panel sessions, revocation, and the operator's accounts."""

from __future__ import annotations

import re
import uuid
from datetime import timedelta

from ..errors import NotFound, Unauthorized
from ..store import EVERYONE
from .core import Core, Json
from .samples import samples_record
from .tokens import hash_token, later, minutes_before, new_token, now

TOUCH_MINUTES = 5  # how stale a token's last use may be before it is noted again
SESSION_DAYS = 30  # a panel session's life
TOKEN_ID_SHAPE = re.compile("[0-9a-f]{12,64}")


class Accounts(Core):
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
        if known is not None:
            return known
        found = self._store.token(key)
        stamp = now()
        if found is None or (found["expires_at"] is not None and found["expires_at"] <= stamp):
            raise Unauthorized()
        if found["last_used_at"] is None or found["last_used_at"] < minutes_before(stamp, TOUCH_MINUTES):
            self._store.touch_token(key, stamp)
        account = str(found["account_id"])
        seconds = self.settings.token_cache_seconds
        if seconds > 0:
            self._tokens.put(key, account, seconds)
        return account

    def cached_account(self, token: str | None) -> str | None:
        """The account of a token this process authenticated moments ago, without asking the
        database; ``None`` when it must ask (:meth:`authenticate`)."""
        return self._tokens.get(hash_token(token)) if token else None

    def forget_tokens(self) -> None:
        """Forget every remembered token at once: the next request of each asks the database.

        Call it after anything that takes a token's power away (revoking or expiring a token,
        removing an account), in the process that did it.
        """
        self._tokens.clear()

    def may_follow(self, token: str | None, account: str, agent_id: str, call: str | None = None) -> bool:
        """Whether ``token`` still signs in as ``account`` and it may still read the conversation."""
        try:
            if self.authenticate(token) != account:
                return False
            self.conversation(account, agent_id, call)
        except (Unauthorized, NotFound):
            return False
        return True

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

    def me(self, account_id: str) -> Json:
        """An account with the workspaces it belongs to."""
        account = self._store.account(account_id) or {"id": account_id, "name": ""}
        samples = self._store.import_state(samples_record(account_id))
        spaces = [{**w, "samples": w["id"] == samples} for w in self._store.workspaces_of(account_id)]
        return {**account, "workspaces": spaces}
