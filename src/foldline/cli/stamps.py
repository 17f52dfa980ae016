"""``foldline restamp``: let reads send stored messages as they are stored.

A read sends a message from its stored JSON when the message carries today's read stamp (it
passed the checks a read would run, under this registry's metadata schemas). Messages stored
before stamps existed, or before the registry's metadata schemas changed, are checked part by
part on every read instead. This command checks each of them once and stamps those that pass.
"""

from __future__ import annotations

import click

from .common import db_option, emit, json_option, service


@click.command("restamp")
@db_option
@json_option
def restamp(db: str, as_json: bool) -> None:
    """Check once each stored message that lacks today's read stamp, and stamp those that pass.

    Reads then send them as stored instead of checking them part by part. A message that fails
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
