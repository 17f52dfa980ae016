"""What every command shares: the ``--db`` and ``--json`` options, the service, printing."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import click
import orjson

from ..errors import FoldlineError
from ..settings import Settings, default_db
from ..transcripts import Transcripts

db_option = click.option(
    "--db",
    default=default_db,
    show_default="$FOLDLINE_DB or foldline.db",
    help="A SQLite file path, or a postgresql:// URL.",
)
json_option = click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")


@contextmanager
def service(db: str) -> Iterator[Transcripts]:
    """The service on ``db``, its connections closed when the command is done."""
    with Transcripts.open(Settings(db=db)) as transcripts:
        yield transcripts


def emit(data: Any, as_json: bool, text: str) -> None:
    click.echo(orjson.dumps(data).decode() if as_json else text)


class Group(click.Group):
    """A command group that prints a refused call as one line and exits 1."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except FoldlineError as exc:
            raise click.ClickException(f"{exc.message}" + (f" ({exc.where})" if exc.where else "")) from None
