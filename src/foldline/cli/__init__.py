"""The ``foldline`` command: each command parses its options, calls the service and prints.

One module per command group; none of them holds logic of its own.
"""

from __future__ import annotations

import click

from .accounts import account
from .agents import agent
from .common import Group
from .export import export_command
from .imports import import_command
from .mcp import mcp_command
from .redact import redact
from .samples import samples
from .search import search_command
from .serve import serve
from .shares import share
from .stamps import maintenance, restamp
from .status import status
from .usage import usage_command
from .workspaces import workspace


@click.group(cls=Group)
@click.version_option(package_name="foldline")
@click.option("--debug", is_flag=True, help="Show a failure's traceback, not just what went wrong.")
def main(debug: bool) -> None:
    """Foldline: transcripts of coding agents, served light."""


main.add_command(account)
main.add_command(workspace)
main.add_command(agent)
main.add_command(import_command, "import")
main.add_command(serve)
main.add_command(mcp_command)
main.add_command(search_command)
main.add_command(export_command)
main.add_command(maintenance)
# The old name, kept working for scripts; not listed.
main.add_command(click.Command("restamp", callback=restamp.callback, params=restamp.params, hidden=True,
                               help=restamp.help))  # fmt: skip
main.add_command(status)
main.add_command(redact)
main.add_command(usage_command)
main.add_command(samples)
main.add_command(share)

__all__ = ["main"]
