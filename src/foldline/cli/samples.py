"""``foldline samples``: the sample sessions a first run imported."""

from __future__ import annotations

import click

from ..indexer import Indexer
from ..local_account import ensure_local
from .common import db_option, emit, existing_service, json_option


@click.group()
def samples() -> None:
    """The sample sessions a first run imports (into the workspace "Samples") on a machine with
    no sessions of its own."""


@samples.command("remove")
@click.option("--account", "account_id", help="Remove this account's samples (default: the local account's).")
@db_option
@json_option
def samples_remove(account_id: str | None, db: str, as_json: bool) -> None:
    """Remove the sample sessions, all of them: every agent of the Samples workspace is deleted
    (subagents, search text and usage with it) and the account leaves that workspace. A later
    first run does not import them again."""
    with existing_service(db) as transcripts:
        who = account_id or ensure_local(transcripts, db).account_id
        done = transcripts.remove_samples(who)
        Indexer(transcripts).catch_up()  # the index's rows of their text go now, not at the next serve
    text = f"removed {done['removed']} sample sessions" if done["workspace_id"] else "no sample sessions to remove"
    emit(done, as_json, text)
