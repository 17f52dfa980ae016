"""`foldline search` on a SQLite file and on PostgreSQL: hits with snippets and panel addresses."""

from __future__ import annotations

import uuid
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner
from conftest import BACKENDS, make_url
from core_helpers import assistant, bash, new_id, user

from foldline.cli import main
from foldline.local_account import ensure_local
from foldline.service import Transcripts
from foldline.settings import Settings
from foldline.store import open_store


@pytest.fixture(params=BACKENDS)
def cli_db(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("HOME", str(tmp_path))  # the local token of a PostgreSQL store is kept under ~
    return make_url(request.param, tmp_path, request)


def written(db: str, word: str) -> tuple[str, str, str]:
    """An agent of the local account with a word in a message and in a subagent's cut middle."""
    store = open_store(db)
    try:
        t = Transcripts(store, settings=Settings(db=db))
        local = ensure_local(t, db)
        agent = t.create_agent(local.account_id, local.workspace_id, "cli agent")["id"]
        first, second = new_id(), new_id()
        t.put_message(local.account_id, agent, first, user(f"look for {word}\tplease", first))
        big = "x" * 10_000 + word + "y" * 10_000
        t.put_message(local.account_id, agent, second, assistant([bash(big)], second), call="toolu:1")
        return agent, first, second
    finally:
        store.close()


def run(*args: str) -> str:
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 0, result.output
    return result.stdout


def test_search_prints_each_hit_with_its_snippet_and_panel_address(
    cli_db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("FOLDLINE_URL", raising=False)
    word = "cli" + uuid.uuid4().hex[:8]
    agent, first, second = written(cli_db, word)
    out = run("search", word, "--db", cli_db)
    assert out.splitlines()[:3] == [
        "cli agent · subagent toolu:1 · assistant · bash · output 10000–10011 (in the cut middle)",
        "  " + "x" * 80 + f"[[{word}]]" + "y" * 80,
        f"  http://127.0.0.1:8765/agents/{agent}?call=toolu%3A1#msg={second}&part=0&field=output&at=10000",
    ]
    assert out.splitlines()[3:] == [
        "cli agent · user · text 9–20",
        f"  look for [[{word}]] please",
        f"  http://127.0.0.1:8765/agents/{agent}#msg={first}&part=0&field=text&at=9",
    ]
    monkeypatch.setenv("FOLDLINE_URL", "https://foldline.example/")  # the team's server
    assert run("search", word, "--db", cli_db).splitlines()[5] == (
        f"  https://foldline.example/agents/{agent}#msg={first}&part=0&field=text&at=9"
    )


def test_search_json_limit_cursor_and_narrowing(cli_db: str) -> None:
    word = "cli" + uuid.uuid4().hex[:8]
    agent, first, _ = written(cli_db, word)
    page = orjson.loads(run("search", word, "--db", cli_db, "--json", "--limit", "1", "--agent", agent))
    assert len(page["hits"]) == 1 and page["hits"][0]["call"] == "toolu:1" and page["next"]
    more = orjson.loads(run("search", word, "--db", cli_db, "--json", "--cursor", page["next"]))
    assert [h["message_id"] for h in more["hits"]] == [first] and more["next"] is None
    assert "more: --cursor " in run("search", word, "--db", cli_db, "--limit", "1")


def test_another_account_finds_nothing_and_bad_input_is_a_clean_error(cli_db: str) -> None:
    word = "cli" + uuid.uuid4().hex[:8]
    written(cli_db, word)
    other = orjson.loads(run("account", "create", "other", "--db", cli_db, "--json"))
    assert run("search", word, "--db", cli_db, "--account", other["id"]).strip() == "no hits"
    for args, where in ((["--cursor", "x"], "(cursor)"), (["--agent", "nope"], "not found")):
        result = CliRunner().invoke(main, ["search", word, "--db", cli_db, *args])
        assert result.exit_code == 1 and "Traceback" not in result.output
        assert where in result.output
    for limit in ("0", "500"):  # a misused option is a usage error, exit 2, as docs/cli.md says
        result = CliRunner().invoke(main, ["search", word, "--db", cli_db, "--limit", limit])
        assert result.exit_code == 2 and "--limit" in result.output
    assert "(q)" in CliRunner().invoke(main, ["search", "  ", "--db", cli_db]).output


def test_an_imported_session_is_searchable(tmp_path: Path) -> None:
    # SQLite only: `foldline import` does not close its store yet, which PostgreSQL's driver reports.
    cli_db = str(tmp_path / "imported.db")
    data = Path(__file__).parent / "data" / "transcripts" / "claude-code" / "jnarowski__agentcmd"
    run("import", "--db", cli_db, str(data / "full-session.jsonl"))
    # A quote that opens no phrase is an ordinary character: the word is `"codebase`.
    hits = orjson.loads(run("search", '"changed chat" "codebase', "--db", cli_db, "--json"))["hits"]
    with Transcripts.open(Settings(db=cli_db)) as t:  # each match's text, read back by its offsets
        who = ensure_local(t, cli_db).account_id
        found = {
            t.part_slice(who, h["agent_id"], h["message_id"], str(h["part"]), h["field"], m["start"], m["end"])["text"]
            for h in hits for m in h["matches"]
        }  # fmt: skip
    assert found == {"changed chat", '"Codebase'}
    assert all(h["count"] == len(h["matches"]) for h in hits)
    assert {h["role"] for h in hits} <= {"assistant", "user"} and all(h["title"] for h in hits)


def test_search_fills_its_page_when_the_server_side_search_runs_out_of_time(
    cli_db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A word too short for a trigram, only in the oldest of 200 messages, with no time at all
    # per page: each page the store gives ends early; the command follows them to a full answer.
    monkeypatch.setenv("FOLDLINE_SEARCH_SECONDS", "0")
    store = open_store(cli_db)
    try:
        t = Transcripts(store, settings=Settings(db=cli_db))
        local = ensure_local(t, cli_db)
        agent = t.create_agent(local.account_id, local.workspace_id, "old word")["id"]
        ids = [new_id() for _ in range(200)]
        for n, message_id in enumerate(ids):
            t.put_message(local.account_id, agent, message_id, user(f"{n}: {'ꙮ7' if n < 3 else 'nothing'}", message_id))
        assert t.search(local.account_id, "ꙮ7", agent=agent)["partial"] is True
    finally:
        store.close()
    page = orjson.loads(run("search", "ꙮ7", "--db", cli_db, "--json", "--agent", agent))
    assert [h["message_id"] for h in page["hits"]] == ids[2::-1]
    assert (page["next"], page["partial"]) == (None, False)


@pytest.mark.parametrize("command", [["search", "anything"], ["usage"]])
def test_a_reading_command_makes_no_store_where_there_is_none(
    command: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("FOLDLINE_DB", raising=False)
    result = CliRunner().invoke(main, command)
    assert result.exit_code == 1
    assert f"no Foldline store at {tmp_path / 'foldline.db'}" in result.output and "--db" in result.output
    assert list(tmp_path.iterdir()) == []  # no file, no token


def test_two_words_in_one_field_print_as_one_result_with_every_match_marked(
    cli_db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("FOLDLINE_URL", raising=False)
    a, b = "one" + uuid.uuid4().hex[:6], "two" + uuid.uuid4().hex[:6]
    store = open_store(cli_db)
    try:
        t = Transcripts(store, settings=Settings(db=cli_db))
        local = ensure_local(t, cli_db)
        agent = t.create_agent(local.account_id, local.workspace_id, "two words")["id"]
        message = user(f"{a} then {b} and {a} again")
        t.put_message(local.account_id, agent, message["id"], message)
    finally:
        store.close()
    lines = run("search", f"{a} {b}", "--db", cli_db).splitlines()
    assert len(lines) == 3  # one result, not one per word
    assert lines[0] == f"two words · user · text 0–{len(a)} · 3 matches in this text"
    assert lines[1] == f"  [[{a}]] then [[{b}]] and [[{a}]] again"
