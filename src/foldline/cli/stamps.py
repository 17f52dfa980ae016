"""``foldline maintenance restamp``: let reads send stored messages as they are stored.

A read sends a message from its stored JSON when the message carries today's read stamp (it
passed the checks a read would run, under this registry's metadata schemas). Messages stored
before stamps existed, or before the registry's metadata schemas changed, are checked part by
part on every read instead. This command checks each of them once and stamps those that pass.
"""

from __future__ import annotations

import click

from .common import db_option, emit, json_option, service


@click.group("maintenance")
def maintenance() -> None:
    """Occasional jobs on a store; each says when it is needed."""


@maintenance.command("restamp")
@db_option
@json_option
def restamp(db: str, as_json: bool) -> None:
    """Make reads of older messages fast again: needed after an upgrade, or after a change to
    the tool registry's metadata schemas (FOLDLINE_REGISTRY).

    Messages stored before then are checked part by part on every read. This checks each of
    them once and marks those that pass, so reads send them as stored. A message that fails
    today's checks keeps every check on each read. Nothing is rewritten; safe while serving.
    """
    with service(db) as t:
        stamped, kept = t.restamp(
            lambda done, left: None if as_json else click.echo(f"stamped {done}, kept {left}", err=True)
        )
    emit(
        {"stamped": stamped, "kept": kept},
        as_json,
        f"{stamped} messages stamped; {kept} kept as they were (they fail today's read checks)",
    )
