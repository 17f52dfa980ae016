"""Agents as the agents list and the usage views read them: facts and totals kept as messages are written."""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    and_,
    func,
    or_,
    select,
)

from .core import CONVERSATION, Hooks
from .rows import (
    TOTALS,
    AgentRow,
    Conversation,
)
from .schema import (
    conversations,
    members,
    usage_totals,
)


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


class Agents(Hooks):
    """The agents list, its facets, and usage (mixed into :class:`~foldline.store.Store`)."""

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
        no_project: bool = False,
        after: tuple[Any, str] | None = None,
        limit: int | None = 50,
    ) -> tuple[list[AgentRow], Any]:
        """One page of a workspace's agents (not subagents) ordered by ``sort`` (one of
        :data:`AGENT_SORTS`), then by id; only those of ``source`` and ``project`` when given
        (``no_project``: only those with none);
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
        if no_project:
            query = query.where(c.project.is_(None))
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
