"""Agents: made, listed, read with their usage, renamed and dated."""

from __future__ import annotations

import time
import uuid
from typing import Any

from ..agentlist import encode_cursor, is_live, parse_list_query, usage_json
from ..errors import BadRequest, Invalid, NotFound
from ..message import NOT_IN_NAMES
from ..store import AgentRow, Conversation
from ..usage import Usage, price_table
from .core import Core, Json, canonical_uuid, conversation_json

TITLE_MAX = 500  # code points in an agent's title
FACETS_SECONDS = 2.0  # how long the agents list's facets are kept (Agents.facets)
FACETS_KEPT = 1024  # workspaces whose facets are kept at most


class Agents(Core):
    def create_agent(
        self, account: str, workspace_id: Any, title: Any = None, agent_id: str | None = None, brief: bool = False
    ) -> Json:
        """A new agent in a workspace ``account`` belongs to, owned by ``account``; an importer passes
        a stable ``agent_id`` (and ``brief``: only the agent's own fields, without what the list
        shows of it and its subagents, two reads fewer).
        """
        if not isinstance(workspace_id, str):
            raise Invalid("'workspace_id' must be a string", where="workspace_id")
        if title is not None:
            check_title(title)
        workspace_id = canonical_uuid(workspace_id)
        if not self._store.is_member(workspace_id, account):
            raise NotFound()
        title = self.redacted(title) if title is not None else None
        conv = self._store.create_conversation(agent_id or str(uuid.uuid4()), workspace_id, account, title)
        self.facets_kept.pop(workspace_id, None)
        if (conv.owner_id, conv.workspace_id, conv.parent_id) != (account, workspace_id, None):
            raise NotFound()  # an importer's stable id taken by someone else's agent: say nothing of it
        return conversation_json(conv) if brief else self._agent_json(conv)

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
        no_project: Any = None,
    ) -> Json:
        """A page of the agents of a workspace ``account`` belongs to: ``{"agents", "next",
        "prices"}``, and on the first page (no ``cursor``) ``facets``: the sources and projects
        to filter by. Sorted by ``sort`` (activity, messages, tokens, cost, title) in ``order``,
        only ``source``'s and ``project``'s when given (``no_project``: only those with no
        project), ``limit`` (1–200, default 50) a page."""
        query = parse_list_query(sort, order, source, project, limit, cursor, no_project)
        if workspace_id is None:
            raise BadRequest("workspace_id is required", where="workspace_id")
        workspace_id = canonical_uuid(workspace_id)
        if not self._store.is_member(workspace_id, account):
            raise NotFound()
        rows, last_value = self._store.agent_list(
            workspace_id, sort=query.sort, descending=query.descending, source=query.source, project=query.project,
            no_project=query.no_project, after=query.after, limit=query.limit,
        )  # fmt: skip
        after = None
        if last_value is not None and rows:
            after = encode_cursor(query.sort, query.descending, last_value, rows[-1].conv.id)
        out: Json = {"agents": [agent_json(row) for row in rows], "next": after, "prices": price_table()}
        if cursor is None:
            out["facets"] = self.facets(workspace_id)
        return out

    def facets(self, workspace_id: str) -> Json:
        """The sources and projects a workspace's agents can be filtered by, each with its count
        of agents. They are counted over every agent of the workspace (two ``GROUP BY``s, which
        grow with it), so a count is kept for ``FACETS_SECONDS`` and forgotten at any write this
        process makes or hears of: another process's write shows within that time."""
        kept = self.facets_kept.get(workspace_id)
        if kept is not None and time.monotonic() - kept[0] < FACETS_SECONDS:
            return kept[1]
        counted = time.monotonic()
        found = self._store.agent_facets(workspace_id)
        facets = {
            "sources": [{"value": v, "agents": n} for v, n in found["source"]],
            "projects": [{"value": v, "agents": n} for v, n in found["project"]],
        }
        if len(self.facets_kept) >= FACETS_KEPT:
            self.facets_kept.clear()
        self.facets_kept[workspace_id] = (counted, facets)
        return facets

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
        self._store.set_title(conv.id, self.redacted(title))
        self._changed(conv.id)

    def date_agent(
        self, account: str, agent_id: str, created_at: str, updated_at: str, call: str | None = None,
        title: str | None = None,
    ) -> None:  # fmt: skip
        """Date an agent (or its subagent) by its source, such as an imported session's first and
        last lines, and give it ``title`` too if one is given (in the same write); owner only."""
        if title is not None:
            check_title(title)
        conv = self._target(account, agent_id, call)
        self._store.set_times(conv.id, created_at, updated_at, None if title is None else self.redacted(title))
        self._changed(conv.id)

    def delete_agent(self, account: str, agent_id: str, forget: bool = False) -> Json:
        """Delete an agent with its subagents and everything stored of them; owner only (a
        member who is not its owner gets a 403, anyone else the one not-found). Its followers
        are told and their streams end. ``forget``: an importer passes its session over from
        now on (else a re-import brings it back)."""
        if not isinstance(forget, bool):
            raise Invalid("'forget' must be true or false", where="forget")
        conv = self._owned(account, agent_id)
        exclusion = f"{conv.workspace_id}:{forgotten_source(conv.id)}" if forget else None

        def told(deleted: list[str]) -> None:  # at the delete's commit, before its rows are cleared
            for conversation_id in deleted:
                self.pages.forget(conversation_id)
                self._changed(conversation_id)

        deleted = self._store.delete_agent(conv.id, exclusion, told)
        if not deleted:  # deleted meanwhile by another request
            raise NotFound()
        return {"id": conv.id, "deleted": True, "subagents": len(deleted) - 1, "forgotten": forget}

    def deleted(self, conversation_id: str) -> bool:
        """Whether a conversation someone followed is gone (live follow tells its followers)."""
        return not self._store.exists(conversation_id)

    def forgotten(self, account: str, workspace_id: str, agent_id: str) -> bool:
        """Whether the agent was deleted with ``forget``: an importer passes its session over."""
        source = f"{self.check_member(account, workspace_id)}:{forgotten_source(agent_id)}"
        return self._store.import_state(source) is not None


def forgotten_source(agent_id: str) -> str:
    """The import record that says an agent was deleted and its session is not imported again."""
    return f"forgotten:{agent_id}"


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


def check_title(title: Any) -> None:
    """A title: a string of at most 500 code points, without control characters but tab and newline."""
    if not isinstance(title, str):
        raise Invalid("'title' must be a string", where="title")
    if len(title) > TITLE_MAX:
        raise Invalid(f"'title' is at most {TITLE_MAX} characters", where="title")
    if NOT_IN_NAMES.search(title.replace("\n", " ").replace("\t", " ")):
        raise Invalid("'title' holds a control character", where="title")
