"""The ``foldline`` command: it parses and delegates, nothing more."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import click
import orjson

from .errors import FoldlineError
from .importers.cli import import_command
from .settings import Settings, default_db
from .store import open_store
from .transcripts import Transcripts

db_option = click.option(
    "--db",
    default=default_db,
    show_default="$FOLDLINE_DB or foldline.db",
    help="A SQLite file path, or a postgresql:// URL.",
)
json_option = click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")


@contextmanager
def open_transcripts(db: str) -> Iterator[Transcripts]:
    """The service on ``db``, its connections closed when the command is done."""
    store = open_store(db)
    try:
        yield Transcripts(store, settings=Settings(db=db))
    finally:
        store.close()


def emit(data: Any, as_json: bool, text: str) -> None:
    click.echo(orjson.dumps(data).decode() if as_json else text)


class Group(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except FoldlineError as exc:
            raise click.ClickException(f"{exc.message}" + (f" ({exc.where})" if exc.where else "")) from None


@click.group(cls=Group)
@click.version_option(package_name="foldline")
def main() -> None:
    """Foldline: transcripts of coding agents, served light."""


@main.group()
def account() -> None:
    """Manage accounts."""


@account.command("create")
@click.argument("name")
@db_option
@json_option
def account_create(name: str, db: str, as_json: bool) -> None:
    """Create an account; its token is shown once."""
    with open_transcripts(db) as transcripts:
        created = transcripts.create_account(name)
    emit(created, as_json, f"account {created['id']} ({name})\ntoken {created['token']} (shown once)")


@account.command("list")
@db_option
@json_option
def account_list(db: str, as_json: bool) -> None:
    """List the accounts."""
    with open_transcripts(db) as transcripts:
        found = transcripts.store.all_accounts()
    emit(found, as_json, "\n".join(f"{a['id']}  {a['name']}" for a in found) or "no accounts")


@account.command("token")
@click.argument("account_id")
@db_option
@json_option
def account_token(account_id: str, db: str, as_json: bool) -> None:
    """Make another token for an account (for a lost one); it is shown once."""
    with open_transcripts(db) as transcripts:
        made = transcripts.new_token(account_id)
    emit(made, as_json, f"token {made['token']} (shown once)")


@main.group()
def workspace() -> None:
    """Manage workspaces."""


@workspace.command("list")
@db_option
@json_option
def workspace_list(db: str, as_json: bool) -> None:
    """List the workspaces and their members' ids."""
    with open_transcripts(db) as transcripts:
        found = transcripts.store.all_workspaces()
    lines = [f"{w['id']}  {w['name']}  members: {', '.join(w['members']) or 'none'}" for w in found]
    emit(found, as_json, "\n".join(lines) or "no workspaces")


@workspace.command("create")
@click.argument("name")
@click.option("--member", "members", multiple=True, help="An account id; repeat for several.")
@db_option
@json_option
def workspace_create(name: str, members: tuple[str, ...], db: str, as_json: bool) -> None:
    """Create a workspace with these members."""
    with open_transcripts(db) as transcripts:
        created = transcripts.create_workspace(name, list(members))
    emit(created, as_json, f"workspace {created['id']} ({name})")


@workspace.command("add")
@click.argument("workspace_id")
@click.argument("account_id")
@db_option
@json_option
def workspace_add(workspace_id: str, account_id: str, db: str, as_json: bool) -> None:
    """Add an account to a workspace."""
    with open_transcripts(db) as transcripts:
        transcripts.add_member(workspace_id, account_id)
    emit({"workspace_id": workspace_id, "account_id": account_id}, as_json, "added")


@main.command()
@db_option
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8765, show_default=True, type=int)
@click.option("--watch", is_flag=True, help="Follow Claude Code and Codex session folders live.")
@click.option("--no-import", is_flag=True, help="Do not import local sessions or samples on first run.")
def serve(db: str, host: str, port: int, watch: bool, no_import: bool) -> None:
    """Run the service (the API and the panel)."""
    from .server import run

    run(Settings(db=db), host=host, port=port, watch=watch, first_import=not no_import)


@main.command("search")
@click.argument("query")
@click.option("--workspace", help="Only this workspace (an id).")
@click.option("--agent", help="Only this agent and its subagents (an id).")
@click.option("--limit", default=20, show_default=True, type=int, help="Hits per page (1 to 100).")
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
    with its snippet (the match in [[ ]]) and its panel address."""
    from .hits import hit_text
    from .local import ensure_local

    with open_transcripts(db) as transcripts:
        who = account_id or ensure_local(transcripts, db).account_id
        found = transcripts.search(who, query, workspace, agent, limit, cursor)
    lines = [hit_text(hit) for hit in found["hits"]] or ["no hits"]
    if found["next"]:
        lines.append(f"more: --cursor {found['next']}")
    emit(found, as_json, "\n".join(lines))


main.add_command(import_command, "import")

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
