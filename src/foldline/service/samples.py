"""The sample sessions of a first run: imported into a workspace of their own, "Samples", so they
are never taken for the user's own, and removed all at once.

Which workspace holds an account's samples is one import record, ``samples:<account id>``, whose
state is the workspace's id. It is written when the first run makes the workspace and kept when
the samples are removed, so a later first run never imports them again.
"""

from __future__ import annotations

from .agents import Agents
from .core import Json
from .workspaces import Workspaces

SAMPLES_WORKSPACE = "Samples"


def samples_record(account_id: str) -> str:
    return f"samples:{account_id}"


class Samples(Workspaces, Agents):
    def samples_workspace(self, account: str) -> str | None:
        """The workspace that holds ``account``'s sample sessions, while it is one of its own."""
        workspace_id = self._store.import_state(samples_record(account))
        if not workspace_id or not self._store.is_member(workspace_id, account):
            return None
        return workspace_id

    def make_samples_workspace(self, account: str) -> str | None:
        """A new "Samples" workspace for ``account``'s sample sessions, recorded as theirs; None
        when the samples were imported once already (and maybe removed since)."""
        if self._store.import_state(samples_record(account)) is not None:
            return None
        workspace_id = self.create_workspace(SAMPLES_WORKSPACE, [account])["id"]
        self._store.set_import_state(samples_record(account), workspace_id)
        return str(workspace_id)

    def remove_samples(self, account: str) -> Json:
        """Delete every agent of ``account``'s samples workspace (each with its subagents, search
        text and usage; followers told), then take the account out of that workspace, so it is
        gone from its list. Nothing to remove: ``removed`` is 0."""
        workspace_id = self.samples_workspace(account)
        if workspace_id is None:
            return {"removed": 0, "workspace_id": None}
        agents = self._sample_agents(account, workspace_id)
        for agent_id in agents:
            self.delete_agent(account, agent_id)
        self.remove_member(workspace_id, account)
        return {"removed": len(agents), "workspace_id": workspace_id}

    def _sample_agents(self, account: str, workspace_id: str) -> list[str]:
        found: list[str] = []
        cursor = None
        while True:
            page = self.list_agents(account, workspace_id, limit=200, cursor=cursor)
            found += [a["id"] for a in page["agents"] if a.get("owner_id") == account]
            cursor = page["next"]
            if not cursor:
                return found
