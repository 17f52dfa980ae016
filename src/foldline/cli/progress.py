"""An import's progress on a terminal: sessions and files done, megabytes and their rate; nothing
when stderr is not a terminal (a pipe, a file, a test)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from ..importers.importer import Progress as Told
from ..importers.importer import Step


@contextmanager
def progress_bar(enabled: bool = True) -> Iterator[Told | None]:
    """A progress bar on stderr that an import tells each :class:`Step`, gone when it ends;
    ``None`` (nothing shown) when not ``enabled`` or stderr is not a terminal. (rich is loaded
    only here: an import with ``--json`` starts sooner without it.)"""
    if not enabled:
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn, TransferSpeedColumn

    console = Console(stderr=True)
    if not enabled or not console.is_terminal:
        yield None
        return
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.fields[counts]}"),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task("importing", total=None, counts="")

        def told(step: Step) -> None:
            name = step.path.rsplit("/", 1)[-1][:32]
            counts = f"{step.sessions}/{step.all_sessions} sessions, {step.files}/{step.all_files} files"
            bar.update(task, completed=step.bytes, total=step.all_bytes, description=f"importing {name}", counts=counts)

        yield told
