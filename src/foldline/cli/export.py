"""``foldline export AGENT``: the agent's whole export (subagents included) as JSON, Markdown or
one HTML file, to a file or standard output, written as it is read."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..local_account import ensure_local
from .common import db_option, existing_service


@click.command("export")
@click.argument("agent")
@click.option(
    "--format", "fmt", type=click.Choice(["json", "md", "html"]), default="json", show_default=True,
    help="json (the messages as a whole read gives them), md (Markdown) or html (one self-contained file).",
)  # fmt: skip
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="Write here (default: stdout).")
@click.option("--account", "account_id", help="Export as this account (default: the local account).")
@db_option
def export_command(agent: str, fmt: str, output: Path | None, account_id: str | None, db: str) -> None:
    """Export one agent whole: every message, never cut, its subagents included."""
    with existing_service(db) as transcripts:
        who = account_id or ensure_local(transcripts, db).account_id
        _, _, chunks = transcripts.export(who, agent, fmt)  # the one not-found before a file is made
        if output is None:
            for chunk in chunks:
                sys.stdout.buffer.write(chunk)
            sys.stdout.buffer.flush()
            return
        partial = output.with_name(output.name + ".part")
        try:
            with partial.open("wb") as out:
                for chunk in chunks:
                    out.write(chunk)
            partial.replace(output)
        finally:
            partial.unlink(missing_ok=True)
    click.echo(f"wrote {output}", err=True)
