"""The CLI on a SQLite file and on PostgreSQL: created objects as JSON, clean errors."""

from __future__ import annotations

from pathlib import Path

import click
import orjson
import pytest
from click.testing import CliRunner
from conftest import BACKENDS, make_url

from foldline.cli import main
from foldline.service import Transcripts
from foldline.settings import Settings
from foldline.store import open_store


@pytest.fixture(params=BACKENDS)
def cli_db(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return make_url(request.param, tmp_path, request)


def run(*args: str) -> dict[str, str]:
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 0, result.output
    created: dict[str, str] = orjson.loads(result.stdout)
    return created


def test_account_create_gives_a_working_token(cli_db: str) -> None:
    account = run("account", "create", "dana", "--db", cli_db, "--json")
    assert set(account) == {"id", "name", "token"} and account["name"] == "dana"
    store = open_store(cli_db)
    try:
        assert Transcripts(store).authenticate(account["token"]) == account["id"]
    finally:
        store.close()


def test_workspace_create_with_members_and_add(cli_db: str) -> None:
    a = run("account", "create", "a", "--db", cli_db, "--json")
    b = run("account", "create", "b", "--db", cli_db, "--json")
    space = run("workspace", "create", "crew", "--member", a["id"], "--db", cli_db, "--json")
    assert set(space) == {"id", "name"} and space["name"] == "crew"
    run("workspace", "add", space["id"], b["id"], "--db", cli_db, "--json")
    store = open_store(cli_db)
    try:
        assert store.is_member(space["id"], a["id"]) and store.is_member(space["id"], b["id"])
    finally:
        store.close()


@pytest.mark.parametrize(
    "args",
    [
        ["workspace", "create", "w", "--member", "not-an-id"],
        ["workspace", "create", "w", "--member", "00000000-0000-0000-0000-000000000000"],
        ["workspace", "add", "not-a-workspace", "00000000-0000-0000-0000-000000000000"],
    ],
)
def test_errors_are_clean_messages_with_a_non_zero_exit(cli_db: str, args: list[str]) -> None:
    result = CliRunner().invoke(main, [*args, "--db", cli_db])
    assert result.exit_code != 0
    assert "Error: not found" in result.output
    assert "Traceback" not in result.output and result.exception is None or isinstance(result.exception, SystemExit)


def test_adding_an_account_to_an_unknown_workspace_is_not_found(cli_db: str) -> None:
    account = run("account", "create", "e", "--db", cli_db, "--json")
    result = CliRunner().invoke(
        main, ["workspace", "add", "00000000-0000-0000-0000-000000000000", account["id"], "--db", cli_db]
    )
    assert result.exit_code != 0 and "not found" in result.output


def test_lists_and_a_new_token_for_a_lost_one(cli_db: str) -> None:
    a = run("account", "create", "erin", "--db", cli_db, "--json")
    space = run("workspace", "create", "night shift", "--member", a["id"], "--db", cli_db, "--json")
    accounts = CliRunner().invoke(main, ["account", "list", "--db", cli_db, "--json"])
    assert {"id": a["id"], "name": "erin"}.items() <= next(
        x for x in orjson.loads(accounts.stdout) if x["id"] == a["id"]
    ).items()
    spaces = orjson.loads(CliRunner().invoke(main, ["workspace", "list", "--db", cli_db, "--json"]).stdout)
    assert {"id": space["id"], "name": "night shift", "members": [a["id"]]} in spaces
    made = run("account", "token", a["id"], "--db", cli_db, "--json")
    assert made["token"] != a["token"]
    store = open_store(cli_db)
    try:
        t = Transcripts(store)
        assert t.authenticate(made["token"]) == t.authenticate(a["token"]) == a["id"]
    finally:
        store.close()
    unknown = CliRunner().invoke(main, ["account", "token", "00000000-0000-0000-0000-000000000000", "--db", cli_db])
    assert unknown.exit_code != 0 and "not found" in unknown.output


NO_JSON = {("serve",), ("mcp",), ("export",)}  # serve prints addresses, mcp speaks MCP on stdio (both run until
# stopped); export writes the export itself (tests/test_exports.py)
SAMPLE = Path(__file__).parent / "data" / "transcripts" / "claude-code" / "jnarowski__agentcmd" / "full-session.jsonl"


def leaf_commands(group: click.Group, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every command under ``group`` by its words, read from the group itself: a new one is in."""
    found: list[tuple[str, ...]] = []
    ctx = click.Context(group)
    for name in group.list_commands(ctx):  # as click finds them (the top group loads each by name)
        command = group.get_command(ctx, name)
        assert command is not None, name
        if isinstance(command, click.Group):
            found += leaf_commands(command, (*path, name))
        else:
            found.append((*path, name))
    return found


def test_every_command_prints_json_that_parses(cli_db: str) -> None:
    a = run("account", "create", "fay", "--db", cli_db, "--json")
    b = run("account", "create", "gus", "--db", cli_db, "--json")
    space = run("workspace", "create", "crew", "--member", a["id"], "--db", cli_db, "--json")
    token = run("account", "token", a["id"], "--db", cli_db, "--json")
    with Transcripts.open(Settings(db=cli_db)) as t:  # b stays in the workspace (a is taken out below)
        t.add_member(space["id"], b["id"])
        agent = t.create_agent(b["id"], space["id"], "shared")["id"]
        to_revoke = t.create_share(b["id"], agent)["id"]
        to_delete = t.create_agent(b["id"], space["id"], "deleted")["id"]
    arguments = {
        ("account", "create"): ["hal"],
        ("account", "list"): [],
        ("account", "token"): [a["id"]],
        ("account", "tokens"): [a["id"]],
        ("account", "revoke"): [token["token_id"]],
        ("workspace", "list"): [],
        ("workspace", "create"): ["night", "--member", b["id"]],
        ("workspace", "add"): [space["id"], b["id"]],
        ("workspace", "remove"): [space["id"], a["id"]],
        ("import",): [str(SAMPLE)],
        ("search",): ["build"],
        ("restamp",): [],
        ("maintenance", "restamp"): [],
        ("status",): [],
        ("redact",): [],
        ("usage",): [],
        ("agent", "delete"): [to_delete, "--account", b["id"]],
        ("samples", "remove"): [],
        ("share", "create"): [agent, "--expires", "7d", "--account", b["id"]],
        ("share", "list"): ["--account", b["id"]],
        ("share", "revoke"): [to_revoke, "--account", b["id"]],
    }
    commands = [c for c in leaf_commands(main) if c not in NO_JSON]
    assert sorted(commands) == sorted(arguments), "a command without a case here: give it its arguments"
    for words in commands:
        result = CliRunner().invoke(main, [*words, *arguments[words], "--db", cli_db, "--json"])
        assert result.exit_code == 0, (words, result.output)
        orjson.loads(result.stdout)
