"""Every failure of the ``foldline`` command, as a person meets it: the real command in a process
of its own, against real SQLite files and the real PostgreSQL. Each says in a line or two what
failed (the file, the URL without its password, the address, the thing not found) and the likely
fix, exits non-zero and prints no traceback; ``--debug`` prints one."""

from __future__ import annotations

import os
import socket
import sqlite3
import subprocess
import sys
import uuid
from pathlib import Path

import psycopg
import pytest
from click.testing import CliRunner
from conftest import BACKENDS, PG_ADMIN, make_url
from servers import free_port

from foldline.cli import main
from foldline.store import StoreError, explain, open_store

pytestmark = pytest.mark.slow  # the real command in a process of its own, each time

ZERO = "00000000-0000-0000-0000-000000000000"
DATA = Path(__file__).parent / "data" / "transcripts"
SAMPLE = str(DATA / "claude-code" / "jnarowski__agentcmd" / "full-session.jsonl")
SERVER = PG_ADMIN.rsplit("/", 1)[0]  # postgresql://postgres@127.0.0.1:5432


def foldline(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The ``foldline`` command as typed, in ``tmp_path`` with a home of its own."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {**os.environ, "HOME": str(home), "FOLDLINE_DB": "", "CODEX_HOME": str(home / ".codex")}
    command = [sys.executable, "-m", "foldline.cli", *args]
    return subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)


def refused(done: subprocess.CompletedProcess[str], *named: str, code: int = 1) -> str:
    """The failure's text, checked: the exit code, no traceback, at most two lines, ``named`` in it."""
    said = done.stdout + done.stderr
    assert done.returncode == code, said
    assert "Traceback" not in said, said
    assert said.startswith("Error: ") and len(said.strip().splitlines()) <= 2, said
    for name in named:
        assert name in said, said
    return said


def test_a_sqlite_file_in_a_missing_folder_names_the_folder(tmp_path: Path) -> None:
    db = tmp_path / "missing" / "dir" / "x.db"
    said = refused(foldline(tmp_path, "account", "list", "--db", str(db)), str(db), f"mkdir -p {db.parent}")
    assert "does not exist" in said


def test_a_file_that_is_not_a_database_is_named_and_left_as_it_was(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n" * 100)
    refused(foldline(tmp_path, "account", "create", "ada", "--db", str(notes)), str(notes), "not a SQLite database")
    assert notes.read_text() == "my notes\n" * 100


def test_a_folder_given_as_the_database_says_so(tmp_path: Path) -> None:
    refused(foldline(tmp_path, "workspace", "list", "--db", str(tmp_path)), f"{tmp_path} is a folder")


def test_a_read_only_sqlite_file_says_who_needs_write_access(tmp_path: Path) -> None:
    """As root every file is writable, so the driver's own error is given to the one mapping."""
    db = tmp_path / "ro.db"
    error = sqlite3.OperationalError("attempt to write a readonly database")
    found = explain(error, str(db))
    assert found is not None and str(db) in found.problem and "read-only" in found.problem
    assert "write access" in found.fix and "ro.db-wal" in found.fix
    if os.geteuid() != 0:  # and for real, where permissions hold
        open_store(str(db)).close()
        db.chmod(0o444)
        tmp_path.chmod(0o555)
        try:
            refused(foldline(tmp_path, "account", "create", "ada", "--db", str(db)), str(db))
        finally:
            tmp_path.chmod(0o755)


def test_postgres_down_names_the_url_and_the_port(tmp_path: Path) -> None:
    url = f"postgresql://postgres@127.0.0.1:{free_port()}/foldline"
    said = refused(foldline(tmp_path, "account", "list", "--db", url), url, "connection refused")
    assert "is the server running" in said


def test_a_missing_postgres_database_says_how_to_create_it(tmp_path: Path) -> None:
    url = f"{SERVER}/foldline_no_such_database"
    refused(foldline(tmp_path, "account", "list", "--db", url), url, "createdb", "foldline_no_such_database")


def test_a_wrong_role_is_named_and_its_password_never_printed(tmp_path: Path) -> None:
    url = SERVER.replace("://postgres@", "://nobody_here:s3cret-pw@", 1) + "/test"
    said = refused(foldline(tmp_path, "account", "list", "--db", url), "no role nobody_here")
    assert "s3cret-pw" not in said and url.replace(":s3cret-pw", "") in said


def test_a_role_that_may_not_make_tables_is_told_to_own_the_database(tmp_path: Path) -> None:
    suffix = uuid.uuid4().hex[:10]
    role, name = f"foldline_weak_{suffix}", f"foldline_notmine_{suffix}"
    with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
        admin.execute(f'CREATE ROLE "{role}" LOGIN')
        admin.execute(f'CREATE DATABASE "{name}"')
        try:
            url = f"{SERVER}/{name}".replace("://postgres@", f"://{role}@", 1)
            said = refused(foldline(tmp_path, "account", "list", "--db", url), url, "permission denied")
            assert f"ALTER DATABASE {name} OWNER TO {role}" in said
        finally:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            admin.execute(f'DROP ROLE IF EXISTS "{role}"')


def test_a_setting_that_makes_no_sense_is_named(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = {**os.environ, "HOME": str(home), "FOLDLINE_BOUND": "many"}
    for args in (["account", "list"], ["serve", "--port", str(free_port())]):
        command = [sys.executable, "-m", "foldline.cli", *args, "--db", str(tmp_path / "x.db")]
        done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
        refused(done, "FOLDLINE_BOUND must be a number, not 'many'")


@pytest.mark.parametrize(
    ("db", "says"),
    [
        ("postgresql:/oops", "malformed database URL: postgresql:/oops"),
        ("postgres:oops", "malformed database URL"),
        ("postgresql://postgres@127.0.0.1:notaport/x", "malformed database URL"),
        ("mysql://root:hunter2@db/app", "not mysql: mysql://root@db/app"),
        ("http:foldline.db", "looks like a URL"),
    ],
)
def test_a_malformed_url_is_refused_not_taken_for_a_file(tmp_path: Path, db: str, says: str) -> None:
    said = refused(foldline(tmp_path, "account", "list", "--db", db), says, "postgresql://USER@HOST:PORT/DATABASE")
    assert "hunter2" not in said
    assert sorted(p.name for p in tmp_path.iterdir()) == ["home"], "no file was made of the URL"


def test_serve_on_a_busy_port_says_so_before_printing_or_importing(tmp_path: Path) -> None:
    home = tmp_path / "home" / ".claude" / "projects" / "p"
    home.mkdir(parents=True)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        said = refused(foldline(tmp_path, "serve", "--port", str(port)), f"127.0.0.1:{port}", "--port")
    assert "signin" not in said and "already in use" in said
    assert not (tmp_path / "foldline.db").exists(), "nothing was opened or imported"


@pytest.mark.parametrize("port", ["99999", "0", "-1"])
def test_serve_refuses_a_port_out_of_range(tmp_path: Path, port: str) -> None:
    said = (done := foldline(tmp_path, "serve", "--port", port)).stdout + done.stderr
    assert done.returncode == 2 and "Traceback" not in said and port in said and "1<=x<=65535" in said


def test_serve_on_an_address_that_is_not_this_machines(tmp_path: Path) -> None:
    refused(foldline(tmp_path, "serve", "--host", "192.0.2.7", "--port", "8765"), "192.0.2.7", "0.0.0.0")


def test_import_of_a_folder_without_session_logs_exits_1(tmp_path: Path) -> None:
    folder = tmp_path / "not-logs"
    folder.mkdir()
    (folder / "notes.jsonl").write_text('{"hello": "world"}\n')
    said = refused(foldline(tmp_path, "import", str(folder)), f"no session logs of an agent Foldline reads in {folder}")
    assert "~/.claude/projects" in said


def test_import_of_a_missing_path_names_it_and_makes_no_store(tmp_path: Path) -> None:
    refused(foldline(tmp_path, "import", "gone", "--db", "x.db"), "no such file or folder: gone")
    (tmp_path / "empty").mkdir()
    refused(foldline(tmp_path, "import", "empty", "--db", "x.db"), "no session logs of an agent Foldline reads in")
    assert not (tmp_path / "x.db").exists()


def test_debug_shows_the_traceback(tmp_path: Path) -> None:
    done = foldline(tmp_path, "--debug", "account", "list", "--db", str(tmp_path / "no" / "x.db"))
    assert done.returncode == 1 and "Traceback" in done.stderr and "StoreError" in done.stderr


def test_a_store_error_says_its_fix_in_python_too(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="mkdir -p"):
        open_store(str(tmp_path / "no" / "x.db"))


@pytest.fixture(params=BACKENDS)
def cli_db(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return make_url(request.param, tmp_path, request)


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["account", "token", ZERO], f"not found: account {ZERO}"),
        (["account", "tokens", "nobody"], "not found: account nobody"),
        (["account", "revoke", "abcdef123456"], "not found: token abcdef123456"),
        (["workspace", "create", "w", "--member", "not-an-id"], "not found: account not-an-id"),
        (["workspace", "add", ZERO, "not-an-account"], "not found: account not-an-account"),
        (["workspace", "remove", ZERO, ZERO], f"not found: membership of account {ZERO} in workspace {ZERO}"),
        (["search", "x", "--agent", ZERO], f"not found: agent {ZERO}"),
        (["search", "x", "--workspace", ZERO], f"not found: workspace {ZERO}"),
        (["import", "--workspace", ZERO, SAMPLE], f"not found: workspace {ZERO}"),
    ],
)
def test_not_found_says_what_with_its_id_and_where(cli_db: str, args: list[str], says: str) -> None:
    open_store(cli_db).close()  # `search` reads a store; it makes none
    result = CliRunner().invoke(main, [*args, "--db", cli_db])
    assert result.exit_code == 1, result.output
    said = result.output[result.output.find("Error: ") :]  # after import's note of a store it made
    assert said.startswith(f"Error: {says}"), result.output
    assert "Traceback" not in result.output and len(said.strip().splitlines()) <= 2
    where = cli_db if "://" in cli_db else str(Path(cli_db).resolve())
    assert f" in {where}" in said
