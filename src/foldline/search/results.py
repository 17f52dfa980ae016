"""A search result: one field of one part, with every match in it.

A result gathers the matches of the chunks of one field that a page reads (``Place``), in order
of offset; it says how many (``count``), where each is (``matches``: ``start``, ``end`` in the
field and ``hidden`` when a cut page leaves it out), and shows a snippet around the first, with
every match inside the snippet marked. The first match's ``start``, ``end`` and ``hidden`` are
also the result's own, as a hit's were before results (a client that reads only those still
opens the right place). A result lists at most ``MATCHES_MOST`` matches (and only those of the
chunks its page reads: see :func:`..query.page`); a field with more ends its page there and goes
on, as a result of its own, on the next (``more``; ``count`` is then the matches so far).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..registry import TextTools
from ..store import TextRow

SNIPPET = 80  # code points of context each side of the first match
MATCHES_MOST = 64  # matches listed in one result (of one page)

Json = dict[str, Any]
PlaceKey = tuple[str, str | None, str, int, str]  # agent, call, message, part, field


def place_of(row: TextRow) -> PlaceKey:
    return (row.agent_id, row.call_id, row.message_id, row.idx, row.field)


def drawn(tools: TextTools, tool: str | None) -> bool:
    """Whether a cut read sends this part cut when it has a stored cut (as the store decides)."""
    if tool is None or tool in tools.names:
        return True
    return tool not in tools.others and tool.startswith(tools.prefixes)


@dataclass(slots=True)
class Place:
    """The matches found so far in one field of one part: ``(start, end, row)`` each, ``start``
    and ``end`` in the chunk ``row``'s text."""

    key: PlaceKey
    found: list[tuple[int, int, TextRow]] = field(default_factory=list)
    more: bool = False  # the field has matches past the ones listed: the next page goes on

    @property
    def full(self) -> bool:
        return len(self.found) >= MATCHES_MOST

    def add(self, row: TextRow, start: int, end: int) -> None:
        self.found.append((start, end, row))

    def json(self, tools: TextTools) -> Json:
        ordered = sorted(self.found, key=lambda m: m[2].start + m[0])
        cut = ordered[0][2]  # the chunk of the first match: its snippet, and what the part is
        hidden_by = cut.shown is not None and drawn(tools, cut.tool)
        matches = [_match(row, start, end, hidden_by) for start, end, row in ordered]
        first = matches[0]
        return {
            "agent_id": cut.agent_id,
            "call": cut.call_id,
            "message_id": cut.message_id,
            "part": cut.idx,
            "field": cut.field,
            "start": first["start"],
            "end": first["end"],
            "hidden": first["hidden"],
            "count": len(matches),
            "more": self.more,
            "matches": matches,
            "role": cut.role,
            "tool": cut.tool,
            "title": cut.title,
            "snippet": _snippet(cut, ordered[0][0], ordered[0][1], [(s, e) for s, e, r in ordered if r is cut]),
        }


def _match(row: TextRow, start: int, end: int, hidden_by: bool) -> Json:
    """One match: its offsets in the field, and whether a cut page leaves it out."""
    at, to = row.start + start, row.start + end
    hidden = hidden_by and row.shown is not None and to > row.shown and at < row.length - row.shown
    return {"start": at, "end": to, "hidden": hidden}


def _snippet(row: TextRow, start: int, end: int, spans: list[tuple[int, int]]) -> Json:
    """The text around the first match (``start``, ``end`` in the chunk's text), with the first
    match's offsets in it and every match it shows (clipped to it)."""
    lo, hi = max(0, start - SNIPPET), min(len(row.text), end + SNIPPET)
    inside = [{"start": max(s, lo) - lo, "end": min(e, hi) - lo} for s, e in spans if s < hi and e > lo]
    return {"text": row.text[lo:hi], "start": start - lo, "end": end - lo, "matches": inside}
