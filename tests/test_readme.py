"""The README's "Use it", run as typed: the one-person path on a SQLite file, the team path on a
fresh PostgreSQL database, then the Python example against the server each path runs.

Each path runs in a folder of its own that looks like this repository (its ``.venv`` and
``scripts``), with a home of its own holding one Claude Code session. Only the placeholders the
README names are replaced: the database URL, and ``ACCOUNT_ID`` by the id the command before it
printed. The servers listen on a free port, given by ``FOLDLINE_PORT`` (docs/configuration.md).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import orjson
import psycopg
import pytest
from conftest import pg_database
from servers import free_port
from test_serve import read_until

pytestmark = pytest.mark.slow  # the README's commands in real shells and servers

ROOT = Path(__file__).resolve().parent.parent
SESSION = ROOT / "tests" / "data" / "transcripts" / "claude-code" / "jnarowski__agentcmd" / "full-session.jsonl"
TEAM_URL = "postgresql://USER@HOST/foldline"  # the placeholder the README asks to replace


def use_it() -> tuple[list[str], list[str], str]:
    """The one-person commands, the team commands and the Python example, as the README has them."""
    section = (ROOT / "README.md").read_text().split("## Use it", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", section, re.S)
    assert len(blocks) == 2, "Use it has a one-person block and a team block"
    one, team = ([line for line in block.splitlines() if line.strip()] for block in blocks)
    return one, team, section.split("```python\n", 1)[1].split("```", 1)[0]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A folder like this repository's, and a home with one Claude Code session in it."""
    (tmp_path / ".venv").symlink_to(ROOT / ".venv")
    (tmp_path / "scripts").symlink_to(ROOT / "scripts")
    projects = tmp_path / "home" / ".claude" / "projects" / "-home-ada-work"
    projects.mkdir(parents=True)
    shutil.copy(SESSION, projects / SESSION.name)
    return tmp_path


def shell_env(folder: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FOLDLINE_")}
    home = folder / "home"
    return {**env, "HOME": str(home), "CODEX_HOME": str(home / ".codex"), "FOLDLINE_PORT": str(free_port())}


def run_line(line: str, folder: Path, env: dict[str, str]) -> str:
    """One README line in bash, as typed; what it exports is kept for the next one."""
    script = f"set -e\n{line}\nprintf '\\0'\nenv -0"
    done = subprocess.run(["bash", "-c", script], cwd=folder, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"{line}\n{done.stdout}{done.stderr}"
    out, _, exported = done.stdout.partition("\0")
    env.clear()
    env.update(item.split("=", 1) for item in exported.split("\0") if "=" in item)
    return out


def start(line: str, folder: Path, env: dict[str, str]) -> tuple[subprocess.Popen[str], str]:
    """A serve line, as typed, in the background; what it printed up to the spec's address."""
    proc = subprocess.Popen(
        ["bash", "-c", line], cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True,
    )  # fmt: skip
    assert proc.stdout is not None
    try:
        printed = read_until(proc.stdout, "spec", seconds=60)
    except BaseException:
        stop(proc)
        raise
    base = f"http://127.0.0.1:{env['FOLDLINE_PORT']}"
    deadline = time.monotonic() + 60
    while True:
        try:
            httpx.get(base + "/api/openapi.json", timeout=1).raise_for_status()
            return proc, printed
        except httpx.HTTPError:
            if time.monotonic() > deadline:
                stop(proc)
                raise
            time.sleep(0.1)


def stop(proc: subprocess.Popen[str]) -> None:
    os.killpg(proc.pid, signal.SIGTERM)  # the server this test started, and its workers
    proc.wait(15)
    if proc.stdout is not None:
        proc.stdout.close()


def run_python(example: str, folder: Path, env: dict[str, str], url: str, token: str) -> str:
    environment = {**env, "FOLDLINE_URL": url, "FOLDLINE_TOKEN": token}
    command = [sys.executable, "-c", example]
    done = subprocess.run(command, cwd=folder, env=environment, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_one_person_path_as_typed(folder: Path) -> None:
    one, _, example = use_it()
    env = shell_env(folder)
    outputs = [run_line(line, folder, env) for line in one]
    summary = orjson.loads(outputs[0])
    assert summary["messages"] > 0 and summary["skipped"] == [], "the home's session was imported"
    assert (folder / "foldline.db").exists() and env["FOLDLINE_TOKEN"].startswith("fl_")
    proc, printed = start("scripts/serve", folder, env)  # the README's first command, as the path says
    try:
        assert "First run" not in printed, "the workspace already had the imported session"
        base = f"http://127.0.0.1:{env['FOLDLINE_PORT']}"
        assert "the page: " in run_python(example, folder, env, base, env["FOLDLINE_TOKEN"])
    finally:
        stop(proc)


@pytest.fixture
def team_db() -> Iterator[str]:
    with pg_database("foldline_readme") as url:
        yield url


def test_team_path_as_typed(folder: Path, team_db: str) -> None:
    _, team, example = use_it()
    assert TEAM_URL in team[0] and "--host 0.0.0.0" in team[-1]
    env = shell_env(folder)
    account: dict[str, str] = {}
    for line in team[:-1]:
        line = line.replace(TEAM_URL, team_db).replace("ACCOUNT_ID", account.get("id", "ACCOUNT_ID"))
        out = run_line(line, folder, env)
        if "account create" in line:
            account = orjson.loads(out)
    assert env["FOLDLINE_DB"] == team_db, "every command after the export used PostgreSQL"
    proc, printed = start(team[-1], folder, env)
    try:
        assert "First run" not in printed and "every network interface" in printed
        base = f"http://127.0.0.1:{env['FOLDLINE_PORT']}"
        me = httpx.get(base + "/api/me", headers={"Authorization": f"Bearer {account['token']}"})
        assert me.status_code == 200 and [w["name"] for w in me.json()["workspaces"]] == ["team"]
        # No "local" account in a team's database: the operator's own sessions stay out of it.
        assert "Bearer" not in printed and "foldline account create NAME" in printed
        with psycopg.connect(team_db) as conn:
            assert [name for (name,) in conn.execute("SELECT name FROM accounts")] == ["ada"]
        assert "the page: " in run_python(example, folder, env, base, account["token"])
    finally:
        stop(proc)
