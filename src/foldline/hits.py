"""Search hits as a person reads them: the panel address of a hit, and a hit as terminal text.

The panel address is ``/agents/{agent}#msg={message}&part={index}&field={field}&start={s}&end={e}``,
with ``&call={call}`` (URL-encoded) for a hit in a subagent's conversation: the panel page of
the agent, and in the fragment (which never reaches the server) where the match is.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote, urlencode

import click

MARK = ("[[", "]]")

Json = dict[str, Any]


def panel_address(hit: Json) -> str:
    where: dict[str, Any] = {}
    if hit.get("call") is not None:
        where["call"] = hit["call"]
    where.update(msg=hit["message_id"], part=hit["part"], field=hit["field"], start=hit["start"], end=hit["end"])
    return f"/agents/{quote(str(hit['agent_id']), safe='')}#{urlencode(where, quote_via=quote)}"


def one_line(text: str) -> str:
    """``text`` on one line, each line break or tab a space (offsets stay as they were)."""
    return text.translate({ord("\n"): " ", ord("\r"): " ", ord("\t"): " "})


def hit_text(hit: Json) -> str:
    """Three lines: who and where, the snippet with the match marked, the panel address."""
    sub = f"subagent {hit['call']}" if hit.get("call") is not None else None
    who = " · ".join(str(x) for x in (hit.get("title") or "untitled", sub, hit["role"], hit["tool"]) if x)
    place = f"{hit['field']} {hit['start']}–{hit['end']}" + (" (in the cut middle)" if hit["hidden"] else "")
    snippet = hit["snippet"]
    text, start, end = one_line(snippet["text"]), snippet["start"], snippet["end"]
    match = click.style(MARK[0] + text[start:end] + MARK[1], bold=True)
    return f"{who} · {place}\n  {text[:start]}{match}{text[end:]}\n  {panel_address(hit)}"
