"""Write docs/cli.md from the commands' own --help (run: .venv/bin/python scripts/cli_docs.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from foldline.cli import main

HEADER = """# The `foldline` command

Generated from `--help` by `scripts/cli_docs.py`; `tests/test_docs.py` fails when it drifts.
Every command takes `--db` (a SQLite path or a `postgresql://` URL; default `$FOLDLINE_DB`,
then `foldline.db`).

A command that fails prints `Error: …` naming what failed (the file, the URL without its
password, the address, or the account, workspace, token or agent not found) with the likely fix
on a second line, and exits 1 (2 for a misused option). `foldline --debug COMMAND …` shows the
traceback instead.
"""


def commands(group: click.Group, prefix: list[str]) -> list[tuple[list[str], click.Command]]:
    found: list[tuple[list[str], click.Command]] = []
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if command is None or command.hidden:
            continue
        if isinstance(command, click.Group):
            found += commands(command, [*prefix, name])
        else:
            found.append(([*prefix, name], command))
    return found


def render() -> str:
    out = [HEADER]
    for path, command in [(["foldline"], main), *commands(main, ["foldline"])]:
        with click.Context(command, info_name=" ".join(path), terminal_width=100, max_content_width=100) as ctx:
            out.append(f"\n## `{' '.join(path)}`\n\n```\n{command.get_help(ctx)}\n```\n")
    return "".join(out)


if __name__ == "__main__":
    target = Path(__file__).resolve().parent.parent / "docs" / "cli.md"
    target.write_text(render())
    sys.stdout.write(f"wrote {target.name}\n")
