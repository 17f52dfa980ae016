"""``foldline redact``: a store written without redaction is redacted in place, and keeps no copy
of a secret in its messages, cut heads and tails, search index or database file."""

from __future__ import annotations

import uuid
from pathlib import Path

import orjson
from click.testing import CliRunner
from fake_secrets import in_context, make
from test_redaction_stored import KINDS, assert_gone, raw_database, secret_message

from foldline.cli import main
from foldline.service import Transcripts
from foldline.settings import Settings
from foldline.store import open_store


def test_redact_rewrites_an_old_store_and_leaves_no_copy(fresh_url: str, tmp_path: Path) -> None:
    secrets = make(seed=999)
    with Transcripts(open_store(fresh_url), settings=Settings(db=fresh_url, redact=False)) as t:
        account = t.create_account("old")["id"]
        workspace = t.create_workspace("w", [account])["id"]
        agent = t.create_agent(account, workspace, title=in_context("npm-token", secrets["npm-token"]))["id"]
        message = secret_message(secrets, t.settings.bound)
        t.put_message(account, agent, message["id"], message)
        clean = {"id": str(uuid.uuid4()), "role": "user", "parts": [{"type": "text", "text": "no secret here"}]}
        t.put_message(account, agent, clean["id"], clean)
        assert secrets["github-token"].encode() in raw_database(fresh_url)  # stored as written

    result = CliRunner().invoke(main, ["redact", "--db", fresh_url, "--json"])
    assert result.exit_code == 0, result.output
    assert orjson.loads(result.output) == {"messages": 2, "rewritten": 1, "secrets": len(KINDS) + 1}

    with Transcripts(open_store(fresh_url), settings=Settings(db=fresh_url)) as t:
        whole = orjson.dumps(t.messages(account, agent))
        cut = orjson.dumps(t.messages(account, agent, cut=True))
        title = orjson.dumps(t.agent(account, agent))
        hits = b"".join(orjson.dumps(t.search(account, secrets[k][:30])) for k in KINDS if k != "private-key")
        assert b"[REDACTED:npm-token]" in title and b"no secret here" in whole
        assert t.search(account, "REDACTED:github-token")["hits"]
    assert_gone(secrets, whole, cut, title, hits, raw_database(fresh_url))
    again = CliRunner().invoke(main, ["redact", "--db", fresh_url, "--json"])
    assert orjson.loads(again.output)["secrets"] == 0


def test_redact_is_refused_when_redaction_is_off(tmp_path: Path) -> None:
    db = str(tmp_path / "x.db")
    result = CliRunner(env={"FOLDLINE_REDACT": "off"}).invoke(main, ["redact", "--db", db])
    assert result.exit_code != 0 and "redaction is off" in result.output
