"""``foldline mcp``: the MCP server on stdin and stdout, for an agent on this machine."""

from __future__ import annotations

import os

import click

from ..errors import NotFound, Unauthorized
from ..local_account import ensure_local
from ..service import canonical_uuid
from .common import Failed, db_option, service


@click.command("mcp")
@click.option("--account", "account_id", help="Answer as this account (default: FOLDLINE_TOKEN's, else the local one).")
@db_option
def mcp_command(account_id: str | None, db: str) -> None:
    """Serve Foldline's MCP tools (search, list_agents, read_transcript, read_part, usage) on
    stdin and stdout, for an agent that starts this command (docs/mcp.md says how to add it)."""
    with service(db) as transcripts:
        token = os.environ.get("FOLDLINE_TOKEN")
        if account_id is not None:
            who = canonical_uuid(account_id, "account")
            if who not in {account["id"] for account in transcripts.accounts()}:
                raise NotFound(what=f"account {who}")
        elif token:
            try:
                who = transcripts.authenticate(token)
            except Unauthorized:
                raise Failed("FOLDLINE_TOKEN is not a valid token (expired, revoked or mistyped)") from None
        else:
            who = ensure_local(transcripts, db).account_id
        from ..mcp.server import run_stdio  # the SDK loads only for this command

        run_stdio(transcripts, who)
