"""What the tests of the agents' SQLite stores (Crush, Go opencode) read from the raw rows: a copy
of the db and its WAL opened here with the standard library, independently of the importer."""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

Json = dict[str, Any]


def copy_store(db: Path, into: Path) -> Path:
    """The db and its WAL copied into ``into`` (never opened where they lie: that would checkpoint)."""
    into.mkdir(parents=True, exist_ok=True)
    for path in db.parent.glob(db.name + "*"):
        shutil.copyfile(path, into / path.name)
    return into / db.name


def raw_rows(db: Path, tmp: Path) -> tuple[dict[str, Json], list[Json]]:
    """The sessions (by id) and messages (in order, ``parts`` decoded) the store holds."""
    conn = sqlite3.connect(copy_store(db, tmp / "raw"))
    conn.row_factory = sqlite3.Row
    sessions = {r["id"]: dict(r) for r in conn.execute("SELECT * FROM sessions")}
    messages = [{**dict(r), "parts": json.loads(r["parts"])} for r in conn.execute("SELECT * FROM messages")]
    conn.close()
    return sessions, messages


def parts_of(messages: list[Json], kind: str) -> list[Json]:
    return [p["data"] for m in messages for p in m["parts"] if p["type"] == kind]


def raw_counts(sessions: dict[str, Json], messages: list[Json], session_ids: set[str]) -> Json:
    mine = [m for m in messages if m["session_id"] in session_ids]
    calls = {c["id"] for c in parts_of(mine, "tool_call")}
    results = {r["tool_call_id"] for r in parts_of(mine, "tool_result")}
    prompts = [m for m in mine if m["role"] == "user" and parts_of([m], "text")]
    return {"prompts": len(prompts), "calls": len(calls), "outputs": len(calls & results)}


def roots(sessions: dict[str, Json], messages: list[Json]) -> list[str]:
    spoken = {m["session_id"] for m in messages}
    return [sid for sid, s in sessions.items() if s["parent_session_id"] not in sessions and sid in spoken]


def children(sessions: dict[str, Json], sid: str) -> set[str]:
    return {k for k, s in sessions.items() if s["parent_session_id"] == sid}


def snapshot(folder: Path) -> dict[str, str]:
    """Every file of a folder and a hash of its bytes: what reading must leave as it was."""
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}
