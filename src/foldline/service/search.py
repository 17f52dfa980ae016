"""Search over every transcript an account may read (or one workspace's, or one agent's)."""

from __future__ import annotations

import math
import time
from typing import Any

from ..search.query import page, parse_cursor, parse_limit, parse_query
from ..store import Found, TextRow
from .core import Core, Json


class Search(Core):
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
        terms = parse_query(q)
        count = parse_limit(limit)
        after = parse_cursor(cursor)
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

        return page(fetch, terms, count, after, self.registry.text_tools, keep)
