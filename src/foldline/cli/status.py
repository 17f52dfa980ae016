"""``foldline status``: what the store holds that the search index has not reached yet."""

from __future__ import annotations

import click

from ..store import shown
from .common import db_option, emit, existing_service, json_option


@click.command("status")
@db_option
@json_option
def status(db: str, as_json: bool) -> None:
    """Show the search index's backlog: chunks written but not indexed yet (searches read them too)."""
    with existing_service(db) as t:
        backlog = t.backlog()
    emit({"db": shown(db), "search_index": backlog}, as_json, f"Foldline on {shown(db)}\n{line(backlog)}")


def line(backlog: dict[str, int | float | None]) -> str:
    """The backlog as a person reads it."""
    if not backlog["pending_chunks"]:
        return "search index: up to date"
    age = backlog["oldest_pending_seconds"]
    since = "" if age is None else f", the oldest written {age:.0f} s ago"
    return (
        f"search index: {backlog['pending_chunks']} chunks pending ({backlog['pending_code_points']} code points"
        f"{since}); searches read them until they are indexed, by a running `foldline serve` or by"
        " `foldline import --wait-index`"
    )
