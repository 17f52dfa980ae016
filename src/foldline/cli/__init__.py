"""The ``foldline`` command: each command parses its options, calls the service and prints.

One module per command group; none of them holds logic of its own. A command's module is loaded
only when that command runs (``--help`` loads them all): ``foldline import`` starts without the
web app or the MCP server, and forks its workers before the store's SQL is loaded.
"""

from __future__ import annotations

import importlib
from typing import Any

import click

from .common import Group

# Each command: its module here and the click command in it.
COMMANDS = {
    "account": ("accounts", "account"),
    "agent": ("agents", "agent"),
    "export": ("export", "export_command"),
    "import": ("imports", "import_command"),
    "maintenance": ("stamps", "maintenance"),
    "mcp": ("mcp", "mcp_command"),
    "redact": ("redact", "redact"),
    "samples": ("samples", "samples"),
    "search": ("search", "search_command"),
    "serve": ("serve", "serve"),
    "share": ("shares", "share"),
    "status": ("status", "status"),
    "usage": ("usage", "usage_command"),
    "workspace": ("workspaces", "workspace"),
}
OLD_NAMES = {"restamp": ("stamps", "restamp")}  # kept working for scripts; not listed


def _loaded(module: str, name: str) -> Any:
    return getattr(importlib.import_module(f".{module}", __name__), name)


class Commands(Group):
    """The ``foldline`` group, its commands loaded by name."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted([*COMMANDS, *OLD_NAMES])

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in COMMANDS:
            command: click.Command = _loaded(*COMMANDS[cmd_name])
            return command
        if cmd_name in OLD_NAMES:
            old: click.Command = _loaded(*OLD_NAMES[cmd_name])
            return click.Command(cmd_name, callback=old.callback, params=old.params, hidden=True, help=old.help)
        return None


@click.group(cls=Commands)
@click.version_option(package_name="foldline")
@click.option("--debug", is_flag=True, help="Show a failure's traceback, not just what went wrong.")
def main(debug: bool) -> None:
    """Foldline: transcripts of coding agents, served light."""


__all__ = ["main"]
