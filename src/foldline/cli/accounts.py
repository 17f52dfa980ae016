"""``foldline account``: create and list accounts, make tokens."""

from __future__ import annotations

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


@account.command("token")
@click.argument("account_id")
@db_option
@json_option
def account_token(account_id: str, db: str, as_json: bool) -> None:
    """Make another token for an account (for a lost one); it is shown once."""
    with service(db) as transcripts:
        made = transcripts.new_token(account_id)
    emit(made, as_json, f"token {made['token']} (shown once)")
