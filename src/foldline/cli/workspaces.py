"""``foldline workspace``: create and list workspaces, add members."""

from __future__ import annotations

import click

from .common import db_option, emit, json_option, service


@click.group()
def workspace() -> None:
    """Manage workspaces."""


@workspace.command("list")
@db_option
@json_option
def workspace_list(db: str, as_json: bool) -> None:
    """List the workspaces and their members' ids."""
    with service(db) as transcripts:
        found = transcripts.workspaces()
    lines = [f"{w['id']}  {w['name']}  members: {', '.join(w['members']) or 'none'}" for w in found]
    emit(found, as_json, "\n".join(lines) or "no workspaces")


@workspace.command("create")
@click.argument("name")
@click.option("--member", "members", multiple=True, help="An account id; repeat for several.")
@db_option
@json_option
def workspace_create(name: str, members: tuple[str, ...], db: str, as_json: bool) -> None:
    """Create a workspace with these members."""
    with service(db) as transcripts:
        created = transcripts.create_workspace(name, list(members))
    emit(created, as_json, f"workspace {created['id']} ({name})")


@workspace.command("add")
@click.argument("workspace_id")
@click.argument("account_id")
@db_option
@json_option
def workspace_add(workspace_id: str, account_id: str, db: str, as_json: bool) -> None:
    """Add an account to a workspace."""
    with service(db) as transcripts:
        transcripts.add_member(workspace_id, account_id)
    emit({"workspace_id": workspace_id, "account_id": account_id}, as_json, "added")


@workspace.command("remove")
@click.argument("workspace_id")
@click.argument("account_id")
@db_option
@json_option
def workspace_remove(workspace_id: str, account_id: str, db: str, as_json: bool) -> None:
    """Take an account out of a workspace; its open event streams there end."""
    with service(db) as transcripts:
        transcripts.remove_member(workspace_id, account_id)
    emit({"workspace_id": workspace_id, "account_id": account_id}, as_json, "removed")
