"""``foldline account``: create and list accounts, make tokens."""

from __future__ import annotations

import re
from datetime import timedelta

import click

from .common import db_option, emit, json_option, service


@click.group()
def account() -> None:
    """Manage accounts."""


@account.command("create")
@click.argument("name")
@db_option
@json_option
def account_create(name: str, db: str, as_json: bool) -> None:
    """Create an account; its token is shown once."""
    with service(db) as transcripts:
        created = transcripts.create_account(name)
    emit(created, as_json, f"account {created['id']} ({name})\ntoken {created['token']} (shown once)")


@account.command("list")
@db_option
@json_option
def account_list(db: str, as_json: bool) -> None:
    """List the accounts."""
    with service(db) as transcripts:
        found = transcripts.accounts()
    emit(found, as_json, "\n".join(f"{a['id']}  {a['name']}" for a in found) or "no accounts")


DURATION = re.compile(r"([1-9][0-9]{0,4})([hdw])")
UNITS = {"h": "hours", "d": "days", "w": "weeks"}


def duration(value: str | None) -> timedelta | None:
    """``12h``, ``30d`` or ``2w`` as a time span; None for none."""
    if value is None:
        return None
    found = DURATION.fullmatch(value.strip())
    if found is None:
        raise click.BadParameter("a number of hours, days or weeks: 12h, 30d, 2w", param_hint="--expires")
    return timedelta(**{UNITS[found.group(2)]: int(found.group(1))})


@account.command("token")
@click.argument("account_id")
@click.option("--expires", help="Let it expire after 12h, 30d, 2w … (default: it never expires).")
@click.option("--label", default="cli", show_default=True, help="A word to tell it apart in 'account tokens'.")
@db_option
@json_option
def account_token(account_id: str, expires: str | None, label: str, db: str, as_json: bool) -> None:
    """Make another token for an account (for a lost one); it is shown once."""
    span = duration(expires)
    with service(db) as transcripts:
        made = transcripts.new_token(account_id, label=label, expires_in=span)
    until = f", expires {made['expires_at']}" if made["expires_at"] else ""
    emit(made, as_json, f"token {made['token']} (shown once; id {made['token_id']}{until})")


@account.command("tokens")
@click.argument("account_id")
@db_option
@json_option
def account_tokens(account_id: str, db: str, as_json: bool) -> None:
    """List an account's tokens: id, label, made, last used, expires (never the secret)."""
    with service(db) as transcripts:
        found = transcripts.tokens(account_id)
    lines = [
        f"{t['id']}  {t['label']:<8} made {t['created_at']}  last used {t['last_used_at'] or 'never'}"
        f"  expires {t['expires_at'] or 'never'}"
        for t in found
    ]
    emit(found, as_json, "\n".join(lines) or "no tokens")


@account.command("revoke")
@click.argument("token_id")
@db_option
@json_option
def account_revoke(token_id: str, db: str, as_json: bool) -> None:
    """Revoke a token by its id (from 'account tokens'): it stops working, and its open event
    streams end (at once on PostgreSQL, within 15 s on SQLite)."""
    with service(db) as transcripts:
        transcripts.revoke(token_id)
    emit({"revoked": token_id}, as_json, f"revoked {token_id}")
