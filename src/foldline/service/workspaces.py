"""Workspaces and their members (the operator's command line)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from ..errors import NotFound
from ..store import EVERYONE
from .core import Core, Json, canonical_uuid


class Workspaces(Core):
    def create_workspace(self, name: str, member_ids: list[str], workspace_id: str | None = None) -> Json:
        """A new workspace with these members (the operator's command line); ``workspace_id``: its
        id, chosen by the caller (a first import, which parses sessions before the store is made)."""
        members = [self._known_account(account_id) for account_id in member_ids]
        chosen = str(uuid.uuid4()) if workspace_id is None else canonical_uuid(workspace_id, "workspace")
        return self._store.create_workspace(chosen, name, members)

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

    def import_state(self, account: str, workspace_id: str, source: str) -> str | None:
        """What an importer saved of ``source`` (a session's main file) in a workspace of ``account``."""
        return self._store.import_state(f"{self.check_member(account, workspace_id)}:{source}")

    def import_states(self, account: str, workspace_id: str, sources: Sequence[str]) -> dict[str, str | None]:
        """:meth:`import_state` of several sources, in one read (the access checked once)."""
        workspace = self.check_member(account, workspace_id)
        found = self._store.import_states([f"{workspace}:{source}" for source in sources])
        return {source: found.get(f"{workspace}:{source}") for source in sources}

    def save_import_state(self, account: str, workspace_id: str, source: str, state: str) -> None:
        """Save what an importer made of ``source`` in a workspace of ``account``."""
        self.save_import_states(account, workspace_id, {source: state})

    def save_import_states(self, account: str, workspace_id: str, states: dict[str, str]) -> None:
        """Save what an importer made of several sources, in one transaction (the access checked once)."""
        workspace = self.check_member(account, workspace_id)
        self._store.set_import_states({f"{workspace}:{source}": state for source, state in states.items()})
