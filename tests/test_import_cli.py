"""``foldline import`` from the command line, the first run of ``foldline serve``, and watching."""

from __future__ import annotations

import os
import pty
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner
from waits import eventually

from foldline.cli import main
from foldline.importers import first_run
from foldline.importers.first_run import import_on_first_run
from foldline.importers.watch import follow
from foldline.local_account import ensure_local
from foldline.service import Transcripts
from foldline.settings import Settings
from foldline.store import open_store

DATA = Path(__file__).parent / "data" / "transcripts"
CLAUDE_FILE = DATA / "claude-code" / "jnarowski__agentcmd" / "full-session.jsonl"
CODEX_DIR = DATA / "codex" / "jnarowski__agentcmd"


def local_transcripts(db: str) -> Transcripts:
    return Transcripts(open_store(db), settings=Settings(db=db))


def test_import_json_prints_the_summary_and_a_second_run_adds_nothing(tmp_path: Path) -> None:
    db = str(tmp_path / "foldline.db")
    broken = tmp_path / "broken.jsonl"
    broken.write_text("this is not a session\n")
    runner = CliRunner()
    result = runner.invoke(main, ["import", "--db", db, "--json", str(CODEX_DIR), str(CLAUDE_FILE), str(broken)])
    assert result.exit_code == 0, result.output
    summary = orjson.loads(result.stdout)
    assert set(summary) == {"agents", "messages", "parts", "skipped", "foreign", "forgotten", "unchanged"}
    assert summary["agents"] == 3 and summary["messages"] > 0 and summary["parts"] >= summary["messages"]
    assert summary["skipped"] == [{"path": str(broken.resolve()), "reason": "not a session log of a known agent"}]
    again = orjson.loads(runner.invoke(main, ["import", "--db", db, "--json", str(CODEX_DIR)]).stdout)
    assert (again["agents"], again["messages"], again["unchanged"]) == (0, 0, 2)  # the two Codex sessions
    t = local_transcripts(db)
    local = ensure_local(t, db)
    assert len(t.list_agents(local.account_id, local.workspace_id)["agents"]) == 3


def test_import_text_output_and_an_explicit_workspace(tmp_path: Path) -> None:
    db = str(tmp_path / "foldline.db")
    t = local_transcripts(db)
    account = t.create_account("me")["id"]
    workspace = t.create_workspace("mine", [account])["id"]
    args = ["import", "--db", db, "--account", account, "--workspace", workspace, str(CLAUDE_FILE)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("imported ") and "into 1 agents" in result.stdout
    assert len(t.list_agents(account, workspace)["agents"]) == 1


def fake_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    return home


def test_first_run_imports_the_samples_when_the_machine_has_no_sessions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_home(tmp_path, monkeypatch)
    # A fresh clone: the sample files are as new as the clone (their lines are months old).
    fresh = tmp_path / "samples"
    shutil.copytree(first_run.samples_dir(), fresh)
    for path in fresh.rglob("*"):
        os.utime(path)
    monkeypatch.setattr(first_run, "samples_dir", lambda: fresh)
    db = str(tmp_path / "foldline.db")
    t = local_transcripts(db)
    local = ensure_local(t, db)
    first = import_on_first_run(t, local)
    assert first is not None and first.samples and first.summary.skipped == [] and first.summary.agents == 5
    assert "sample sessions" in first.line()
    assert import_on_first_run(t, local) is None  # not the first run any more
    # They sit in a workspace of their own, marked as the samples; the local one stays the user's.
    samples = t.samples_workspace(local.account_id)
    assert samples is not None and samples != local.workspace_id
    assert t.list_agents(local.account_id, local.workspace_id)["agents"] == []
    assert [w["name"] for w in t.me(local.account_id)["workspaces"] if w["samples"]] == ["Samples"]
    # The samples' files are as new as the clone, but their lines are months old: nothing runs.
    running, subagents, cut_thoughts = [], [], []
    for agent in t.list_agents(local.account_id, samples)["agents"]:
        calls = t.agent(local.account_id, agent["id"])["subagents"]
        subagents += calls
        for call in [None, *calls]:
            for message in t.messages(local.account_id, agent["id"], call=call)["messages"]:
                running += [p for p in message["parts"] if p.get("state") in ("input-available", "input-streaming")]
            for message in t.messages(local.account_id, agent["id"], call=call, cut=True)["messages"]:
                cut = [c["index"] for c in message.get("cutParts", [])]
                cut_thoughts += [i for i in cut if message["parts"][i]["type"] == "reasoning"]
    assert running == []
    # what the README's pictures show can be seen on a first run: a subagent, a thought cut
    assert subagents and cut_thoughts


def test_first_run_imports_the_samples_when_the_agents_folders_hold_no_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A fresh install of an agent makes its folder before any session: that is no session to show.
    home = fake_home(tmp_path, monkeypatch)
    (home / ".claude" / "projects").mkdir(parents=True)
    (home / ".codex" / "sessions").mkdir(parents=True)
    db = str(tmp_path / "foldline.db")
    t = local_transcripts(db)
    first = import_on_first_run(t, ensure_local(t, db))
    assert first is not None and first.samples and first.summary.agents == 5


def test_first_run_imports_the_users_own_sessions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = fake_home(tmp_path, monkeypatch)
    project = home / ".claude" / "projects" / "-work-app"
    project.mkdir(parents=True)
    shutil.copy(CLAUDE_FILE, project)
    codex_home = tmp_path / "codex-home"
    (codex_home / "sessions" / "2025" / "09" / "25").mkdir(parents=True)
    for rollout in CODEX_DIR.glob("*.jsonl"):
        shutil.copy(rollout, codex_home / "sessions" / "2025" / "09" / "25")
    monkeypatch.setenv("CODEX_HOME", str(codex_home))
    db = str(tmp_path / "foldline.db")
    t = local_transcripts(db)
    local = ensure_local(t, db)
    first = import_on_first_run(t, local)
    assert first is not None and not first.samples and first.summary.agents == 3


def poke_until(poke: Callable[[], None], check: Callable[[], bool]) -> None:
    """Make a change the watcher reacts to, and again every half second, until ``check`` holds.

    No guess at when the watcher has started watching: a change made before it did is made
    again. Bounded, so a broken watcher fails the test.
    """
    deadline = time.monotonic() + 30
    while True:
        poke()
        again = time.monotonic() + 0.5
        while time.monotonic() < again:
            if check():
                return
            assert time.monotonic() < deadline, "the watcher did not import the change"
            time.sleep(0.05)


def test_watch_imports_new_lines_as_they_are_written(tmp_path: Path) -> None:
    db = str(tmp_path / "foldline.db")
    t = local_transcripts(db)
    local = ensure_local(t, db)
    folder = tmp_path / "projects"
    folder.mkdir()
    stop = threading.Event()
    watcher = threading.Thread(target=follow, args=(t, [str(folder)], local.account_id, local.workspace_id, None, stop))
    watcher.start()
    try:
        raw = CLAUDE_FILE.read_bytes().splitlines(keepends=True)
        log = folder / CLAUDE_FILE.name

        def count() -> int:
            agents = t.list_agents(local.account_id, local.workspace_id)["agents"]
            return len(t.messages(local.account_id, agents[0]["id"])["messages"]) if agents else 0

        poke_until(lambda: log.write_bytes(b"".join(raw[:10])), lambda: count() > 0)
        partial = count()
        with log.open("ab") as f:
            f.write(b"".join(raw[10:]))
        fresh = local_transcripts(str(tmp_path / "fresh.db"))
        fresh_local = ensure_local(fresh, str(tmp_path / "fresh.db"))
        from foldline.importers import import_paths

        whole = import_paths(fresh, [log], account_id=fresh_local.account_id, workspace_id=fresh_local.workspace_id)
        eventually(lambda: count() == whole.messages, 30, "the watcher did not import the change")
        assert partial < whole.messages
    finally:
        stop.set()
        watcher.join(10)


def test_serve_watch_follows_the_folders_while_the_app_runs(tmp_path: Path) -> None:
    import httpx
    import uvicorn
    from servers import free_port

    from foldline.app import create_app
    from foldline.importers.watch import Watcher

    db = str(tmp_path / "foldline.db")
    t = local_transcripts(db)
    local = ensure_local(t, db)
    folder = tmp_path / "sessions"
    folder.mkdir()
    watcher = Watcher(t, local, [str(folder)])
    app = create_app(t, [watcher])
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error"))
    running = threading.Thread(target=server.run, daemon=True)
    running.start()
    try:
        eventually(lambda: server.started, 30, "the server did not start")
        poke_until(
            lambda: shutil.copy(CLAUDE_FILE, folder),
            lambda: bool(t.list_agents(local.account_id, local.workspace_id)["agents"]),
        )
        headers = {"Authorization": f"Bearer {local.token}"}
        agents = httpx.get(
            f"http://127.0.0.1:{port}/api/agents", params={"workspace_id": local.workspace_id}, headers=headers
        ).json()["agents"]
        assert [a["title"] for a in agents] == ["Hey"]
    finally:
        server.should_exit = True
        running.join(10)
    assert not watcher.thread.is_alive()  # stopped with the app


def test_a_failing_batch_is_logged_and_the_watch_goes_on(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A batch that raises (here: the workspace is not the account's) is told, and the thread lives on."""
    db = str(tmp_path / "foldline.db")
    t = local_transcripts(db)
    local = ensure_local(t, db)
    stranger_space = t.create_workspace("not mine", [t.create_account("someone else")["id"]])["id"]
    folder = tmp_path / "projects"
    folder.mkdir()
    stop = threading.Event()
    watcher = threading.Thread(target=follow, args=(t, [str(folder)], local.account_id, stranger_space, None, stop))
    caplog.set_level("WARNING", logger="foldline")
    watcher.start()
    try:
        told = lambda: any("importing" in r.getMessage() for r in caplog.records)  # noqa: E731
        poke_until(lambda: shutil.copy(CLAUDE_FILE, folder / "first.jsonl"), told)
        assert watcher.is_alive()
        caplog.clear()  # a batch told from now on was read after the failed one: the watch went on
        poke_until(lambda: shutil.copy(CLAUDE_FILE, folder / "second.jsonl"), told)
        assert watcher.is_alive()
    finally:
        stop.set()
        watcher.join(10)
    assert not watcher.is_alive()


def run_import(db: str, stderr_on_terminal: bool) -> tuple[bytes, bytes]:
    """``foldline import`` in a process of its own, its stderr a terminal or a pipe: (stdout, stderr)."""
    args = [str(Path(sys.executable).parent / "foldline"), "import", "--db", db, str(DATA / "codex")]
    env = {**os.environ, "COLUMNS": "200", "TERM": "xterm"}
    if not stderr_on_terminal:
        done = subprocess.run(args, capture_output=True, env=env, timeout=120, check=True)
        return done.stdout, done.stderr
    leader, follower = pty.openpty()
    with subprocess.Popen(args, stdout=subprocess.PIPE, stderr=follower, env=env) as child:
        os.close(follower)
        shown = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            shown += chunk
        out = child.stdout.read() if child.stdout else b""
        assert child.wait(120) == 0
    os.close(leader)
    return out, shown


@pytest.mark.slow
def test_import_shows_its_progress_on_a_terminal_and_nothing_on_a_pipe(tmp_path: Path) -> None:
    out, shown = run_import(str(tmp_path / "terminal.db"), stderr_on_terminal=True)
    assert b"imported" in out
    # the rate is kB/s or MB/s, as the machine goes
    assert re.search(rb"\d+/\d+ sessions", shown) and b" files" in shown and b"B/s" in shown
    out, err = run_import(str(tmp_path / "pipe.db"), stderr_on_terminal=False)
    assert b"imported" in out
    assert b"sessions" not in err and b"MB" not in err


WORKERS_DIE = """
import multiprocessing, os, signal, sys
import orjson
from foldline.importers import import_paths
from foldline.importers.ahead import Ahead
from foldline.service import Transcripts
from foldline.settings import Settings
from foldline.store import open_store

db, killed, sources = sys.argv[1], sys.argv[2] == "killed", sys.argv[3:]
settings = Settings(db=db, import_workers=2)
pool = Ahead(settings, 2) if killed else None  # forked before the store is opened
if pool is not None:
    for child in multiprocessing.active_children():
        os.kill(child.pid, signal.SIGKILL)
with Transcripts(open_store(db), settings=settings) as t:
    account = t.create_account("importer")["id"]
    workspace = t.create_workspace("w", [account])["id"]
    summary = import_paths(t, sources, account_id=account, workspace_id=workspace, pool=pool)
if pool is not None:
    pool.close()
print(orjson.dumps({**summary.to_json(), "broken": pool is not None and pool.broken}).decode())
"""


def test_an_import_goes_on_in_its_own_process_when_its_workers_die(tmp_path: Path) -> None:
    """Workers killed before the import asks them anything: the import says so in its log, parses
    every session itself, and stores what an import without workers stores (in a process of its
    own, which forks its workers with one thread, as ``foldline import`` does)."""
    sources = [str(DATA / "claude-code" / "jnarowski__agentcmd"), str(CODEX_DIR)]
    found = {}
    for how in ("whole", "killed"):
        args = [sys.executable, "-c", WORKERS_DIE, str(tmp_path / f"{how}.db"), how, *sources]
        done = subprocess.run(args, capture_output=True, timeout=120, check=True)
        found[how] = orjson.loads(done.stdout)
        assert not found[how]["skipped"]
    assert found["killed"]["broken"] and b"a worker process failed" in done.stderr
    count = ("agents", "messages", "parts")
    assert [found["killed"][k] for k in count] == [found["whole"][k] for k in count]
    assert found["whole"]["messages"] > 0


FIRST_IMPORT = """
import sys
from foldline.cli import main
from foldline.importers import importer
from foldline.importers.ahead import Ahead
from foldline.service import transcripts

said = []
asked, opened, parsed = Ahead.ask, transcripts.Transcripts.open, importer.parse
Ahead.ask = lambda self, group, *a: said.append("ask") or asked(self, group, *a)
transcripts.Transcripts.open = classmethod(lambda cls, *a, **k: said.append("open") or opened.__func__(cls, *a, **k))
importer.parse = lambda group, *a: said.append("parsed here") or parsed(group, *a)
try:
    main(sys.argv[1:])
finally:
    print(" ".join(said), file=sys.stderr)
"""


def test_a_first_import_into_a_new_store_parses_while_the_store_is_made(tmp_path: Path) -> None:
    """Into a new SQLite file, the workers are asked for the first sessions before the store is
    opened (its local workspace's id chosen first), and what they parse is what is written: the
    importing process parses nothing itself. The store holds what a one-process import stores,
    and a second import finds every session unchanged."""
    sources = [str(DATA / "claude-code")]
    found = {}
    for workers in ("2", "0"):
        db = str(tmp_path / f"workers-{workers}.db")
        env = {**os.environ, "FOLDLINE_IMPORT_WORKERS": workers}
        args = [sys.executable, "-c", FIRST_IMPORT, "import", "--json", "--db", db, *sources]
        done = subprocess.run(args, capture_output=True, timeout=180, check=True, env=env)
        found[workers] = orjson.loads(done.stdout)
        said = done.stderr.decode().split()
        if workers == "2":
            assert said[: said.index("open")].count("ask") == 4 and "here" not in said  # the pool's window
        again = subprocess.run(args, capture_output=True, timeout=180, check=True, env=env)
        assert orjson.loads(again.stdout)["unchanged"] == found[workers]["agents"] > 0
        t = local_transcripts(db)
        local = ensure_local(t, db)
        agents = t.list_agents(local.account_id, local.workspace_id)["agents"]
        found[workers]["titles"] = sorted(a["title"] for a in agents)
        t.close()
    assert found["2"] == found["0"] and not found["2"]["skipped"]
