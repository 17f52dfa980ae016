"""`foldline serve` as a user runs it: a fresh folder, one command, a URL and a token that work."""

from __future__ import annotations

import os
import queue
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import httpx
import psycopg
import pytest
from conftest import pg_database
from servers import free_port

from foldline import Client

pytestmark = pytest.mark.slow  # the real command in a process of its own


def read_until(stream: IO[str], marker: str, seconds: float) -> str:
    """What the server prints up to the line holding ``marker``; fails after ``seconds``."""
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in stream], daemon=True).start()
    printed, deadline = "", time.monotonic() + seconds
    while marker not in printed:
        try:
            printed += lines.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            pytest.fail(f"foldline serve never printed {marker!r}; it printed:\n{printed}")
    return printed


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, str, Path]]:
    yield from serve(tmp_path)


def serve(tmp_path: Path, *options: str) -> Iterator[tuple[str, str, Path]]:
    port = free_port()
    env = {**os.environ, "HOME": str(tmp_path / "home"), "FOLDLINE_DB": ""}
    command = [sys.executable, "-m", "foldline.cli", "serve", "--port", str(port), "--no-import", *options]
    proc = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    try:
        printed = read_until(proc.stdout, "spec", seconds=30)
        found = re.search(r"(http://127\.0\.0\.1:\d+)/signin#token=(\S+)", printed)
        assert found, printed
        base, token = found.groups()
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(base + "/api/openapi.json", timeout=1).raise_for_status()
                break
            except httpx.HTTPError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        yield base, token, tmp_path
    finally:
        proc.terminate()
        proc.wait(10)
        proc.stdout.close()


def test_serve_makes_a_local_account_and_prints_a_working_token(served: tuple[str, str, Path]) -> None:
    base, token, folder = served
    me = httpx.get(base + "/api/me", headers={"Authorization": f"Bearer {token}"}).json()
    assert me["name"] == "local"
    assert [w["name"] for w in me["workspaces"]] == ["local"]
    assert (folder / "foldline.db").exists()
    token_file = folder / "foldline.db.token"
    assert token_file.read_text().strip() == token
    assert token_file.stat().st_mode & 0o077 == 0, "the token file must be readable by its owner only"


def test_serve_without_a_token_is_401(served: tuple[str, str, Path]) -> None:
    base, _, _ = served
    response = httpx.get(base + "/api/me")
    assert response.status_code == 401
    assert response.json() == {"error": {"code": "unauthorized", "message": "a valid bearer token is required"}}


def test_workers_share_one_port_and_follow_each_others_writes(tmp_path: Path) -> None:
    """Two worker processes on SQLite: every write, whichever worker takes it, reaches a follower
    on either worker well before the stream's 15 s heartbeat would look again by itself."""
    for base, token, _ in serve(tmp_path, "--workers", "2"):
        with Client(base, token) as client:
            workspace = client.me()["workspaces"][0]["id"]
            agent = client.create_agent(workspace, title="two workers")["id"]
            with client.events(agent) as events:
                for n in range(6):  # each write on a new connection, so the kernel spreads them
                    with Client(base, token) as writer:
                        writer.put_message(agent, {"role": "user", "parts": [{"type": "text", "text": f"w{n}"}]})
                    started = time.monotonic()
                    seq, message = next(events)
                    assert message["parts"] == [{"type": "text", "text": f"w{n}"}]
                    assert time.monotonic() - started < 10, "a write reached the follower only by polling"


def test_serve_on_a_team_database_makes_no_local_account(tmp_path: Path) -> None:
    """On PostgreSQL (a team's database) `serve` makes no "local" account unless this machine's
    sessions go into it (--import, --watch), and says how to make the first account."""
    with pg_database("foldline_serve") as url:
        port = free_port()
        env = {**os.environ, "HOME": str(tmp_path / "home"), "FOLDLINE_DB": url}
        command = [sys.executable, "-m", "foldline.cli", "serve", "--port", str(port)]
        proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        assert proc.stdout is not None
        try:
            printed = read_until(proc.stdout, "spec", seconds=30)
        finally:
            proc.terminate()
            proc.wait(10)
            proc.stdout.close()
        assert "token=" not in printed and "Bearer" not in printed
        assert "foldline account create NAME" in printed
        with psycopg.connect(url) as conn:
            assert conn.execute("SELECT count(*) FROM accounts").fetchone() == (0,)
