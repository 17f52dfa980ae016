"""The agents list's query (sort, order, filters, paging) and how one agent is shown in it.

Nothing here reads storage: :class:`~foldline.service.Transcripts` parses a request with
:func:`parse_list_query`, asks the store for a page, and shapes each row with :func:`agent_json`.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson

from .errors import BadRequest
from .sources import SOURCES
from .usage import Usage, dollars

SORTS = ("activity", "messages", "tokens", "cost", "title")
DEFAULT_LIMIT = 50
MAX_LIMIT = 200
PROJECT_MAX = 4096  # characters in a project filter
CURSOR_MAX = 2048
LIVE_MINUTES = 5  # an agent written to this recently is marked live

Json = dict[str, Any]


@dataclass(frozen=True, slots=True)
class ListQuery:
    """A parsed agents-list request: ``after`` is the last row's (sort value, id) of the page before."""

    sort: str
    descending: bool
    source: str | None
    project: str | None
    no_project: bool  # only the agents that name no folder
    limit: int
    after: tuple[Any, str] | None


def parse_list_query(
    sort: Any = None, order: Any = None, source: Any = None, project: Any = None, limit: Any = None, cursor: Any = None,
    no_project: Any = None,
) -> ListQuery:
    """The agents list's parameters, each refused with a 400 naming it (never a 500)."""
    sort = "activity" if sort is None else sort
    if sort not in SORTS:
        raise BadRequest(f"'sort' is one of {', '.join(SORTS)}", where="sort")
    if order is None:
        descending = sort != "title"
    elif order in ("asc", "desc"):
        descending = order == "desc"
    else:
        raise BadRequest("'order' is asc or desc", where="order")
    if source is not None and source not in SOURCES:
        raise BadRequest(f"'source' is one of {', '.join(SOURCES)}", where="source")
    if project is not None and (not isinstance(project, str) or not project or len(project) > PROJECT_MAX
                                or "\x00" in project):  # fmt: skip
        raise BadRequest(f"'project' is a folder of 1 to {PROJECT_MAX} characters", where="project")
    if no_project not in (None, True, False, "true", "false"):
        raise BadRequest("'no_project' is true or false", where="no_project")
    none = no_project in (True, "true")
    if none and project is not None:
        raise BadRequest("'no_project' keeps the agents with no project: not with 'project'", where="no_project")
    count = DEFAULT_LIMIT
    if limit is not None:
        if isinstance(limit, str) and limit.isascii() and limit.isdigit() and len(limit) <= 9:
            limit = int(limit)
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
            raise BadRequest(f"'limit' is a whole number from 1 to {MAX_LIMIT}", where="limit")
        count = limit
    after = None if cursor is None else parse_cursor(cursor, sort, descending)
    return ListQuery(sort, descending, source, project, none, count, after)


def encode_cursor(sort: str, descending: bool, value: Any, agent_id: str) -> str:
    """The opaque cursor of the page after a row: its sort, order, sort value and id."""
    raw = orjson.dumps([sort, "desc" if descending else "asc", value, agent_id])
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def parse_cursor(cursor: Any, sort: str, descending: bool) -> tuple[Any, str]:
    bad = BadRequest("'cursor' must be a 'next' from a previous page of the same sort and order", where="cursor")
    if not isinstance(cursor, str) or not cursor.isascii() or not 1 <= len(cursor) <= CURSOR_MAX:
        raise bad
    try:
        found = orjson.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    except (ValueError, orjson.JSONDecodeError):
        raise bad from None
    if not (isinstance(found, list) and len(found) == 4 and found[:2] == [sort, "desc" if descending else "asc"]):
        raise bad
    value, agent_id = found[2], found[3]
    numeric = sort in ("messages", "tokens", "cost")
    if numeric and (isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**63):
        raise bad
    if not numeric and not isinstance(value, str):
        raise bad
    if not isinstance(agent_id, str) or len(agent_id) > 64:
        raise bad
    return value, agent_id


def is_live(updated_at: str, now: datetime | None = None) -> bool:
    """Whether an agent's last activity is within the last :data:`LIVE_MINUTES` minutes."""
    try:
        moment = datetime.fromisoformat(updated_at.replace("Z", "+00:00"))
    except ValueError:
        return False
    return (now or datetime.now(UTC)) - moment <= timedelta(minutes=LIVE_MINUTES)


def usage_json(usage: Usage, cost: int, unpriced: int) -> Json:
    """Tokens and the estimated cost in US dollars: null when a message with tokens had no price;
    beside it what the priced messages cost and how many had no price (a sum that is known to be
    short, never passed off as the total)."""
    priced = dollars(cost) or 0.0
    return {**usage.json(), "cost_usd": None if unpriced else priced, "priced_cost_usd": priced,
            "unpriced_messages": unpriced}  # fmt: skip
