"""``foldline redact``: redact a store written before redaction (or before a new rule), in place."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

import click

from .common import db_option, emit, json_option, service


@contextmanager
def progress_line() -> Iterator[Callable[[int, int], None]]:
    """A rich progress line on stderr when it is a terminal; silent otherwise."""
    from rich.console import Console
    from rich.progress import Progress, SpinnerColumn, TextColumn

    console = Console(stderr=True)
    if not console.is_terminal:
        yield lambda looked, secrets: None
        return
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), console=console, transient=True) as bar:
        task = bar.add_task("redacting")
        yield lambda looked, secrets: bar.update(
            task, description=f"redacting: {looked} messages looked at, {secrets} secrets"
        )


@click.command("redact")
@db_option
@json_option
def redact(db: str, as_json: bool) -> None:
    """Redact every stored message and agent title in place, as the write door now does.

    A message with a secret is written again, its cut heads and tails, search chunks and index
    with it; then the database keeps no copy of the old text (SQLite: the search index merged,
    VACUUM and the log checkpointed; PostgreSQL: VACUUM, see docs/security.md). Uses
    FOLDLINE_REDACT_RULES; refused when FOLDLINE_REDACT=off.
    """
    with service(db) as t, progress_line() as told:
        looked, rewritten, secrets = t.redact_stored(told)
    emit(
        {"messages": looked, "rewritten": rewritten, "secrets": secrets},
        as_json,
        f"{secrets} secrets redacted in {rewritten} of {looked} messages",
    )
