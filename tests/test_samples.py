"""The sample sessions of a first run (issue 23, item 9): imported into a workspace of their own,
marked as the samples, and removed all at once by `foldline samples remove` or `DELETE
/api/samples`; a later first run does not bring them back."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner
from servers import ServerThread

from foldline.cli import main
from foldline.errors import NotFound
from foldline.importers import first_run
from foldline.importers.first_run import import_on_first_run
from foldline.local_account import Local, ensure_local
from foldline.service import Transcripts
from foldline.settings import Settings
from foldline.store import open_store

SAMPLE_WORD = "matchesSessionPattern"  # in the largest sample only


@pytest.fixture
def no_sessions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A machine with no agent sessions of its own, and the samples as new as a fresh clone."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name in ("CODEX_HOME", "CLAUDE_CONFIG_DIR", "XDG_CONFIG_HOME", "XDG_DATA_HOME"):
        monkeypatch.delenv(name, raising=False)
    fresh = tmp_path / "samples"
    shutil.copytree(first_run.samples_dir(), fresh)
    for path in fresh.rglob("*"):
        os.utime(path)
    monkeypatch.setattr(first_run, "samples_dir", lambda: fresh)


def first_run_of(db: str) -> tuple[Transcripts, Local]:
    t = Transcripts(open_store(db), settings=Settings(db=db))
    local = ensure_local(t, db)
    first = import_on_first_run(t, local)
    assert first is not None and first.samples and first.summary.agents == 5
    return t, local


def hits(t: Transcripts, account: str) -> int:
    return len(t.search(account, SAMPLE_WORD)["hits"])


@pytest.mark.usefixtures("no_sessions")
def test_the_samples_sit_in_their_own_workspace_and_go_all_at_once(fresh_url: str) -> None:
    t, local = first_run_of(fresh_url)
    try:
        me = t.me(local.account_id)["workspaces"]
        samples = t.samples_workspace(local.account_id)
        assert {(w["name"], w["samples"]) for w in me} == {("local", False), ("Samples", True)}
        assert samples == next(w["id"] for w in me if w["samples"])
        agents = [a["id"] for a in t.list_agents(local.account_id, samples)["agents"]]
        assert len(agents) == 5
        assert t.list_agents(local.account_id, local.workspace_id)["agents"] == []  # the user's own, untouched
        mine = t.create_agent(local.account_id, local.workspace_id, title="my own")["id"]
        assert hits(t, local.account_id) > 0

        done = t.remove_samples(local.account_id)

        assert done == {"removed": 5, "workspace_id": samples}
        assert [w["name"] for w in t.me(local.account_id)["workspaces"]] == ["local"]
        for agent in agents:
            with pytest.raises(NotFound):
                t.agent(local.account_id, agent)
        assert hits(t, local.account_id) == 0
        assert t.agent(local.account_id, mine)["title"] == "my own"
        # Nothing is left to remove, and a later first run does not import them again.
        assert t.remove_samples(local.account_id) == {"removed": 0, "workspace_id": None}
        t.delete_agent(local.account_id, mine)  # the local workspace is empty again: a "first run"
        assert import_on_first_run(t, local) is None
        assert t.samples_workspace(local.account_id) is None
    finally:
        t.close()


@pytest.mark.usefixtures("no_sessions")
def test_foldline_samples_remove_as_a_user_types_it(tmp_path: Path) -> None:
    db = str(tmp_path / "foldline.db")
    t, local = first_run_of(db)
    t.close()
    runner = CliRunner()
    result = runner.invoke(main, ["samples", "remove", "--db", db])
    assert result.exit_code == 0, result.output
    assert result.stdout == "removed 5 sample sessions\n"
    again = runner.invoke(main, ["samples", "remove", "--db", db, "--json"])
    assert again.exit_code == 0 and again.stdout.strip() == '{"removed":0,"workspace_id":null}'
    t = Transcripts(open_store(db), settings=Settings(db=db))
    try:
        assert [w["name"] for w in t.me(local.account_id)["workspaces"]] == ["local"]
        assert hits(t, local.account_id) == 0
    finally:
        t.close()
    # No store here: it says so, and makes none.
    missing = runner.invoke(main, ["samples", "remove", "--db", str(tmp_path / "none.db")])
    assert missing.exit_code == 1 and "no Foldline store" in missing.output
    assert not (tmp_path / "none.db").exists()


@pytest.mark.usefixtures("no_sessions")
def test_delete_api_samples_takes_a_bearer_token(tmp_path: Path) -> None:
    db = str(tmp_path / "foldline.db")
    t, local = first_run_of(db)
    other = t.create_account("someone else")
    try:
        with ServerThread(t) as server:
            url = f"{server.url}/api/samples"
            assert httpx.delete(url).status_code == 401
            # Another account has no samples: nothing of the local account's is touched.
            theirs = httpx.delete(url, headers={"Authorization": f"Bearer {other['token']}"})
            assert theirs.status_code == 200 and theirs.json() == {"removed": 0, "workspace_id": None}
            assert t.samples_workspace(local.account_id) is not None
            mine = httpx.delete(url, headers={"Authorization": f"Bearer {local.token}"})
            assert mine.status_code == 200 and mine.json()["removed"] == 5
            me = httpx.get(f"{server.url}/api/me", headers={"Authorization": f"Bearer {local.token}"}).json()
            assert [(w["name"], w["samples"]) for w in me["workspaces"]] == [("local", False)]
    finally:
        t.close()
