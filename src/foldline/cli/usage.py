"""``foldline usage``: tokens and estimated cost, summed by day, model or agent."""

from __future__ import annotations

from typing import Any

import click

from ..local_account import ensure_local
from .common import db_option, emit, existing_service, json_option

Json = dict[str, Any]


def money(row: Json) -> str:
    """The estimate; when some messages' model has no price, what the others cost and "+ ?"."""
    if row["cost_usd"] is not None:
        return f"${row['cost_usd']:,.2f}"
    return f"${row['priced_cost_usd']:,.2f} + ?" if row["priced_cost_usd"] else "unknown"


def short(name: str, most: int = 60) -> str:
    return name if len(name) <= most else name[: most - 1] + "…"


def cells(name: str, row: Json) -> tuple[str, ...]:
    counts = ("messages", "input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens")
    return (name, *(f"{row[key]:,}" for key in counts), money(row))


def usage_text(found: Json) -> str:
    """A table: one row per day, model or agent, then the total and the price table."""
    by = found["by"]
    head = (by, "messages", "input", "cache read", "cache write", "output", "cost")
    rows = [cells(short(str((row.get("title") or row[by]) if by == "agent" else (row[by] or "(no model)"))), row)
            for row in found["rows"]]  # fmt: skip
    rows.append(cells("total", found["total"]))
    widths = [max(len(r[i]) for r in (head, *rows)) for i in range(len(head))]
    lines = []
    for r in (head, *rows):
        padded = [c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))]
        lines.append("  ".join(padded))
    prices = found["prices"]
    lines.append(f"estimated with {prices['source']} {prices['version'] or '(version unknown)'}; input counts cache "
                 "reads and writes; \"+ ?\" and unknown: messages of a model without a known price, "
                 "not in the sum")  # fmt: skip
    return "\n".join(lines)


@click.command("usage")
@click.option("--by", type=click.Choice(["day", "model", "agent"]), default="day", show_default=True,
              help="Sum by UTC day, by model or by agent.")  # fmt: skip
@click.option("--workspace", help="Only this workspace (an id).")
@click.option("--account", "account_id", help="As this account (default: the local account).")
@db_option
@json_option
def usage_command(by: str, workspace: str | None, account_id: str | None, db: str, as_json: bool) -> None:
    """Tokens (input, cache reads and writes, output) and their estimated cost in every
    workspace the account is in, from genai-prices' table."""
    with existing_service(db) as transcripts:
        who = account_id or ensure_local(transcripts, db).account_id
        found = transcripts.usage(who, by, workspace)
    emit(found, as_json, usage_text(found))
