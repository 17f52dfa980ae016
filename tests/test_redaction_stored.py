"""The goal of issue 21, section 1: a secret written through the door, or imported, survives in
no read, search, log line or byte of the database, on both backends."""

from __future__ import annotations

import logging
import uuid
from pathlib import Path
from typing import Any

import orjson
import psycopg
import pytest
from conftest import World
from fake_secrets import in_context, make

from foldline.importers import import_paths
from foldline.redaction import marker
from foldline.service import Transcripts
from foldline.settings import Settings
from foldline.store import open_store

# A held-out set: made with a seed no other test uses, 13 kinds spread over every stored field.
HELD_OUT = make(seed=1321)
KINDS = [
    "aws-access-key", "google-api-key", "github-token", "github-fine-grained-token", "gitlab-token",
    "npm-token", "pypi-token", "slack-token", "stripe-key", "openai-key", "anthropic-key", "jwt", "private-key",
]  # fmt: skip


def secret_message(secrets: dict[str, str], bound: int) -> dict[str, Any]:
    lines = [in_context(kind, secrets[kind]) for kind in KINDS]
    filler = "x" * bound * 2  # the 11th secret sits in the cut middle of a long output
    long_output = "\n".join([lines[9], filler, lines[10], filler, *lines[11:]])
    return {
        "id": str(uuid.uuid4()),
        "role": "assistant",
        "metadata": {"note": lines[0]},
        "parts": [
            {"type": "text", "text": f"Here: {lines[1]} and {lines[2]}"},
            {"type": "reasoning", "text": f"thinking about {lines[3]}"},
            {"type": "tool-bash", "toolCallId": "c1", "state": "output-available",
             "input": {"command": lines[4], "env": [{"name": "X", "value": lines[5]}]}, "output": long_output},
            {"type": "tool-bash", "toolCallId": "c2", "state": "output-error",
             "input": {"command": "deploy"}, "errorText": f"refused {lines[6]} {lines[7]} {lines[8]}"},
        ],
    }  # fmt: skip


def raw_database(url: str) -> bytes:
    """Every byte the database holds: a SQLite file and its log, or PostgreSQL's rows as text."""
    if "://" not in url:
        return b"".join(p.read_bytes() for p in Path(url).parent.glob(Path(url).name + "*"))
    with psycopg.connect(url) as conn:
        tables = [r[0] for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")]
        return b"".join(
            str(row).encode() + bytes(b for v in row if isinstance(v, bytes | memoryview) for b in bytes(v))
            for table in tables
            for row in conn.execute(f'SELECT * FROM "{table}"')
        )


def assert_gone(secrets: dict[str, str], *where: bytes) -> None:
    for kind in KINDS:
        secret = secrets[kind].split("\n")[1] if kind == "private-key" else secrets[kind]
        for i, blob in enumerate(where):
            assert secret.encode() not in blob, (kind, i)


def test_no_secret_survives_the_write_door(world: World, settings: Settings, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    message = secret_message(HELD_OUT, settings.bound)
    world.alice.put_message(world.agent, message)
    whole = orjson.dumps(world.alice.messages(world.agent))
    cut = orjson.dumps(world.alice.messages(world.agent, cut=True))
    output = orjson.dumps(world.alice.part(world.agent, message["id"], 2))
    hits = b""
    for kind in KINDS:
        probe = HELD_OUT[kind].split("\n")[1] if kind == "private-key" else HELD_OUT[kind]
        found = world.alice.search(probe[:40], agent=world.agent)
        assert found["hits"] == [], kind
        hits += orjson.dumps(found)
    # What the service logged (the test's own client logs the searches it was asked to make).
    logs = "\n".join(r.getMessage() for r in caplog.records if r.name != "httpx").encode()
    assert_gone(HELD_OUT, whole, cut, output, hits, logs, raw_database(settings.db))
    stored = next(m for m in world.alice.messages(world.agent)["messages"] if m["id"] == message["id"])
    assert stored["metadata"]["foldline"] == {"redacted": len(KINDS)}
    assert stored["parts"][0]["text"].startswith(f"Here: export VALUE='{marker('google-api-key')}'")
    assert world.alice.search("REDACTED:openai-key", agent=world.agent)["hits"]  # the marker is what is found


def test_a_subagent_and_a_title_are_redacted_too(world: World, settings: Settings) -> None:
    token = HELD_OUT["github-token"]
    agent = world.alice.create_agent(world.workspace, title=f"rotate {token}")
    message = {"id": str(uuid.uuid4()), "role": "user", "parts": [{"type": "text", "text": f"use {token}"}]}
    world.alice.put_message(agent["id"], message, call="task-1")
    assert token not in orjson.dumps(world.alice.agent(agent["id"])).decode()
    assert token not in orjson.dumps(world.alice.messages(agent["id"], call="task-1")).decode()
    assert token.encode() not in raw_database(settings.db)


def test_an_imported_log_with_secrets(db_url: str, tmp_path: Path) -> None:
    secrets = make(seed=4242)
    session = str(uuid.uuid4())
    lines = []
    for i, kind in enumerate(KINDS):
        lines.append({
            "type": "user" if i % 2 == 0 else "assistant", "uuid": str(uuid.uuid4()), "sessionId": session,
            "timestamp": f"2026-01-01T00:00:{i:02d}.000Z", "cwd": "/repo", "parentUuid": None,
            "message": {"role": "user", "content": in_context(kind, secrets[kind])} if i % 2 == 0 else
            {"role": "assistant", "id": f"msg_{i}", "model": "claude-x", "content": [
                {"type": "text", "text": in_context(kind, secrets[kind])}]},
        })  # fmt: skip
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / f"{session}.jsonl").write_bytes(b"\n".join(orjson.dumps(line) for line in lines) + b"\n")
    url = db_url if "://" in db_url else str(tmp_path / "imported.db")
    with Transcripts(open_store(url), settings=Settings(db=url)) as t:
        account = t.create_account("importer")["id"]
        workspace = t.create_workspace("imports", [account])["id"]
        summary = import_paths(t, [folder], account_id=account, workspace_id=workspace)
        assert summary.messages >= len(KINDS) - 1
        agents = t.list_agents(account, workspace)["agents"]
        read = b"".join(orjson.dumps(t.messages(account, a["id"])) for a in agents)
    assert b"[REDACTED:" in read
    assert_gone(secrets, read, raw_database(url))


def test_redaction_off_keeps_the_text(tmp_path: Path) -> None:
    url = str(tmp_path / "off.db")
    token = HELD_OUT["npm-token"]
    with Transcripts(open_store(url), settings=Settings(db=url, redact=False)) as t:
        account = t.create_account("a")["id"]
        agent = t.create_agent(account, t.create_workspace("w", [account])["id"])["id"]
        message = {"id": str(uuid.uuid4()), "role": "user", "parts": [{"type": "text", "text": token}]}
        t.put_message(account, agent, message["id"], message)
        assert t.messages(account, agent)["messages"][0]["parts"][0]["text"] == token
