"""``foldline agent``: delete an agent."""

from __future__ import annotations

import click

from ..indexer import Indexer
from ..local_account import ensure_local
from .common import db_option, emit, existing_service, json_option


@click.group()
def agent() -> None:
    """Manage agents."""


@agent.command("delete")
@click.argument("agent_id")
@click.option(
    "--forget", is_flag=True, help="Also pass its session over in every later import (else a re-import brings it back)."
)
@click.option("--account", "account_id", help="Delete as this account, the agent's owner (default: the local account).")
@db_option
@json_option
def agent_delete(agent_id: str, forget: bool, account_id: str | None, db: str, as_json: bool) -> None:
    """Delete an agent with its subagents, messages, search text and usage; anyone following it
    is told. The search index forgets its text before the command ends; the database file keeps
    freed pages until it is compacted (docs/security.md)."""
    with existing_service(db) as transcripts:
        who = account_id or ensure_local(transcripts, db).account_id
        done = transcripts.delete_agent(who, agent_id, forget=forget)
        Indexer(transcripts).catch_up()  # the index's rows of its text go now, not at the next serve
    subagents = f" and {done['subagents']} subagents" if done["subagents"] else ""
    again = "; imports pass its session over" if forget else "; a re-import brings it back (--forget to prevent)"
    emit(done, as_json, f"deleted agent {done['id']}{subagents}{again}")
