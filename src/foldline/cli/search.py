"""``foldline search QUERY``: results (one field of one part each) with their snippets and panel addresses.

The panel address of a hit is ``{server}/agents/{agent}#msg={message}&part={i}&field={field}&at={start}``,
with ``?call={call}`` before the ``#`` for a hit in a subagent's conversation: the agent's page,
and in the fragment (which never reaches the server) where the match is. ``{server}`` is
``FOLDLINE_URL``, else the address ``foldline serve`` listens on by default (``LOCAL_URL``).
docs/panel.md says how the panel opens it.
"""

from __future__ import annotations

import os
from typing import Any
from urllib.parse import quote, urlencode

import click

from ..local_account import ensure_local
from ..service import Transcripts
from .common import db_option, emit, existing_service, json_option

MARK = ("[[", "]]")
LOCAL_URL = "http://127.0.0.1:8765"  # `foldline serve`'s default host and port

Json = dict[str, Any]


def panel_address(hit: Json) -> str:
    """Where the panel shows a hit: an address one can open."""
    server = (os.environ.get("FOLDLINE_URL") or LOCAL_URL).rstrip("/")
    path = f"{server}/agents/{quote(str(hit['agent_id']), safe='')}"
    if hit.get("call") is not None:
        path += "?" + urlencode({"call": hit["call"]}, quote_via=quote)
    where = {"msg": hit["message_id"], "part": hit["part"], "field": hit["field"], "at": hit["start"]}
    return f"{path}#{urlencode(where, quote_via=quote)}"


def one_line(text: str) -> str:
    """``text`` on one line, each line break or tab a space (offsets stay as they were)."""
    return text.translate({ord("\n"): " ", ord("\r"): " ", ord("\t"): " "})


def hit_text(hit: Json) -> str:
    """Three lines: who and where (and how many matches the field holds), the snippet around the
    first match with every match in it marked, the panel address of the first."""
    sub = f"subagent {hit['call']}" if hit.get("call") is not None else None
    who = " · ".join(str(x) for x in (hit.get("title") or "untitled", sub, hit["role"], hit["tool"]) if x)
    place = f"{hit['field']} {hit['start']}–{hit['end']}" + (" (in the cut middle)" if hit["hidden"] else "")
    count = int(hit.get("count", 1))
    if count > 1 or hit.get("more"):
        place += f" · {count}{'+' if hit.get('more') else ''} matches in this {hit['field']}"
    snippet = hit["snippet"]
    text = one_line(snippet["text"])
    spans = [(m["start"], m["end"]) for m in snippet.get("matches") or [snippet]]
    drawn, at = [], 0
    for start, end in spans:
        if start < at:
            continue
        drawn += [text[at:start], click.style(MARK[0] + text[start:end] + MARK[1], bold=True)]
        at = end
    return f"{who} · {place}\n  {''.join(drawn)}{text[at:]}\n  {panel_address(hit)}"


def filled(
    transcripts: Transcripts,
    who: str,
    query: str,
    workspace: str | None,
    agent: str | None,
    limit: int,
    cursor: str | None,
) -> Json:
    """A page of ``limit`` hits (fewer only at the end): pages the search ended early for time
    (``partial``) are followed until it is full."""
    found = transcripts.search(who, query, workspace, agent, limit, cursor)
    hits = list(found["hits"])
    while found["partial"] and found["next"] and len(hits) < limit:
        found = transcripts.search(who, query, workspace, agent, limit - len(hits), found["next"])
        hits += found["hits"]
    return {"hits": hits, "next": found["next"], "partial": False}


@click.command("search")
@click.argument("query")
@click.option("--workspace", help="Only this workspace (an id).")
@click.option("--agent", help="Only this agent and its subagents (an id).")
@click.option("--limit", default=20, show_default=True, type=click.IntRange(1, 100), help="Hits per page (1 to 100).")
@click.option("--cursor", help="The page after the one that printed this cursor.")
@click.option("--account", "account_id", help="Search as this account (default: the local account).")
@db_option
@json_option
def search_command(
    query: str,
    workspace: str | None,
    agent: str | None,
    limit: int,
    cursor: str | None,
    account_id: str | None,
    db: str,
    as_json: bool,
) -> None:
    """Search every transcript the account may read, cut middles included; each hit is printed
    with its snippet (the match in [[ ]]) and its panel address. A page is filled even where the
    search must read chunk after chunk (it may then take several seconds on a big store)."""
    with existing_service(db) as transcripts:
        who = account_id or ensure_local(transcripts, db).account_id
        found = filled(transcripts, who, query, workspace, agent, limit, cursor)
    lines = [hit_text(hit) for hit in found["hits"]] or ["no hits"]
    if found["next"]:
        lines.append(f"more: --cursor {found['next']}")
    emit(found, as_json, "\n".join(lines))
