"""``foldline share``: make, list and revoke share links (an agent read-only, without signing in)."""

from __future__ import annotations

import os
from typing import Any

import click

from ..local_account import ensure_local
from ..service import Transcripts
from .accounts import duration
from .common import db_option, emit, existing_service, json_option
from .search import LOCAL_URL

account_option = click.option("--account", "account_id", help="Act as this account (default: the local account).")


def share_url(token: str) -> str:
    """The panel's address of a share: on ``FOLDLINE_URL``, else where ``foldline serve`` listens by default."""
    return (os.environ.get("FOLDLINE_URL") or LOCAL_URL).rstrip("/") + "/s/" + token


def acting(transcripts: Transcripts, account_id: str | None, db: str) -> str:
    return account_id or ensure_local(transcripts, db).account_id


def share_line(share: dict[str, Any]) -> str:
    until = share["expires_at"] or "never"
    return f"{share['id']}  agent {share['agent_id']}  made {share['created_at']}  expires {until}"


@click.group()
def share() -> None:
    """Share an agent's transcript: a link that opens it read-only, without signing in."""


@share.command("create")
@click.argument("agent")
@click.option("--expires", help="Let it expire after 12h, 7d, 2w … (default: it never expires).")
@account_option
@db_option
@json_option
def share_create(agent: str, expires: str | None, account_id: str | None, db: str, as_json: bool) -> None:
    """Make a share link of AGENT (and its subagents): its address, on $FOLDLINE_URL (else
    http://127.0.0.1:8765), is shown once. Whoever holds it reads the agent, read-only, without
    signing in, and nothing else."""
    span = duration(expires)
    with existing_service(db) as transcripts:
        made = transcripts.create_share(acting(transcripts, account_id, db), agent,
                                        None if span is None else int(span.total_seconds()))  # fmt: skip
    made["url"] = share_url(made["token"])
    until = f", expires {made['expires_at']}" if made["expires_at"] else ", never expires"
    emit(made, as_json, f"{made['url']}\n(shown once; share {made['id']}{until})")


@share.command("list")
@click.option("--agent", help="Only this agent's share links (an id).")
@account_option
@db_option
@json_option
def share_list(agent: str | None, account_id: str | None, db: str, as_json: bool) -> None:
    """List the share links (not expired) of the agents the account may read; never their tokens."""
    with existing_service(db) as transcripts:
        found = transcripts.shares(acting(transcripts, account_id, db), agent)
    emit(found, as_json, "\n".join(share_line(s) for s in found) or "no share links")


@share.command("revoke")
@click.argument("share_id")
@account_option
@db_option
@json_option
def share_revoke(share_id: str, account_id: str | None, db: str, as_json: bool) -> None:
    """Revoke a share link by its id (from 'share list'): it opens nothing from now on, and its
    open event streams end within a second or two."""
    with existing_service(db) as transcripts:
        transcripts.revoke_share(acting(transcripts, account_id, db), share_id)
    emit({"revoked": share_id}, as_json, f"revoked {share_id}")
