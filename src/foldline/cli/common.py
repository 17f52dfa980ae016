"""What every command shares: the ``--db`` and ``--json`` options, the service, printing, and the
one place a failure becomes the lines a person reads (:func:`failure`)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import click
import orjson

from ..errors import FoldlineError, NotFound, Unusable
from ..settings import Settings, default_db
from ..store import explain, shown, sqlite_file

if TYPE_CHECKING:
    from ..service import Transcripts

db_option = click.option(
    "--db",
    default=default_db,
    show_default="$FOLDLINE_DB or foldline.db",
    help="A SQLite file path, or a postgresql:// URL.",
)
json_option = click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")

# What lists each kind of thing a not-found names.
LISTS = {
    "account": "foldline account list",
    "workspace": "foldline workspace list",
    "membership": "foldline workspace list",
    "token": "foldline account tokens ACCOUNT_ID",
    "share": "foldline share list",
}


class Failed(click.ClickException):
    """A failure said in a line or two (``Error: …``), exit code 1."""


def settings_for(db: str) -> Settings:
    try:
        return Settings(db=db)
    except ValueError as exc:  # a FOLDLINE_* variable that makes no sense
        raise Unusable(str(exc), "fix the environment variable, or unset it for the default") from None


@contextmanager
def service(db: str) -> Iterator[Transcripts]:
    """The service on ``db``, its connections closed when the command is done; a failure of the
    database, then or later, is said naming it."""
    from ..service import Transcripts  # SQLAlchemy with it: loaded by the commands that open a store

    try:
        with Transcripts.open(settings_for(db)) as transcripts:
            yield transcripts
    except Exception as exc:
        said = failure(exc, db)
        if said is None or debugging():
            raise
        raise Failed(said) from exc


@contextmanager
def existing_service(db: str) -> Iterator[Transcripts]:
    """:func:`service`, for a command that only reads: a SQLite file that is not there is said,
    never made (an empty new store would only answer "nothing")."""
    file = sqlite_file(db)
    if file is not None and not file.exists():
        raise Unusable(
            f"no Foldline store at {file}",
            "point at one with --db PATH or FOLDLINE_DB (a file or a postgresql:// URL), "
            "or make one here with `foldline import PATH` or `scripts/serve`",
        )
    with service(db) as transcripts:
        yield transcripts


def failure(exc: BaseException, db: str | None = None) -> str | None:
    """The line or two a person reads for ``exc``; ``None`` for click's own (usage errors, exits)."""
    if isinstance(exc, (click.ClickException, click.exceptions.Exit, click.Abort)):
        return None
    if db is not None:
        stored = explain(exc, db)
        if stored is not None:
            return stored.lines()
    if isinstance(exc, Unusable):
        return exc.lines()
    if isinstance(exc, NotFound):
        if exc.what is None:
            return "not found"
        kind = exc.what.split(" ", 1)[0]
        where = f" in {shown(db)}" if db is not None else ""
        hint = f"\n  `{LISTS[kind]}` shows them" if kind in LISTS else ""
        return f"not found: {exc.what}{where}{hint}"
    if isinstance(exc, FoldlineError):
        return exc.message + (f" ({exc.where})" if exc.where else "")
    if isinstance(exc, OSError) and exc.filename:
        return f"{exc.strerror or exc}: {exc.filename}"
    if isinstance(exc, Exception):
        return f"unexpected {type(exc).__name__}: {exc}\n  run again with --debug to see where"
    return None


def debugging() -> bool:
    context = click.get_current_context(silent=True)
    return bool(context is not None and context.find_root().params.get("debug"))


def emit(data: Any, as_json: bool, text: str) -> None:
    # A row's column names are SQLAlchemy's str subclass, which orjson refuses as a key unless told.
    click.echo(orjson.dumps(data, option=orjson.OPT_NON_STR_KEYS).decode() if as_json else text)


class Group(click.Group):
    """The ``foldline`` group: a failure is printed as a line or two and exits 1 (``--debug``
    shows the traceback instead)."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except Exception as exc:
            said = failure(exc)
            if said is None or ctx.params.get("debug"):
                raise
            raise Failed(said) from None
