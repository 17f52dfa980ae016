"""The SQLite store Crush and the Go opencode keep in a project (``.crush/crush.db``,
``.opencode/opencode.db``), read as the agent left it, and its sessions as Foldline messages.

The store is in WAL mode: recent writes live in ``<db>-wal`` until a checkpoint. Opening the
store in place would checkpoint it (and delete the WAL); opening it immutable would miss the WAL.
So the db and its WAL are copied into a temporary folder and the copy is opened: the agent's
files are only ever read. One copy is read whole, once per state of the files, for every session.

A store holds many sessions. Each session whose parent is not in the store is one agent; a
session the ``agent`` tool started (its id is the call's id, its ``parent_session_id`` the
caller) is the conversation under that call. A row of ``messages`` is one message; its ``parts``
are ``{type, data}``: ``text``, ``reasoning`` (``thinking``), ``image_url`` and ``binary`` (file
parts), ``tool_call`` (a tool part; ``input`` is a JSON string, empty when the call was cut
off), ``finish`` (``metadata.finishReason``; an error's message and details become a system
note). A ``tool`` row's ``tool_result`` parts give the outcome of the calls with their
``tool_call_id`` (``is_error``: an error). Usage is kept only per session (``prompt_tokens``,
``completion_tokens``): it is given to the session's last assistant message. Times are Unix
seconds, or milliseconds, or ISO text in the oldest opencode schema: told per value.
"""

from __future__ import annotations

import functools
import os
import shutil
import sqlite3
import tempfile
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from ..registry import Registry
from .formats import Finding, Group, Head
from .session import (
    Conversation,
    Json,
    Session,
    is_idle,
    iso_time,
    set_output,
    settle_conversation,
    short_title,
    tool_part,
    usage_of,
)

MAGIC = b"SQLite format 3\x00"
NEEDED = {"sessions": {"id", "parent_session_id", "title"}, "messages": {"id", "session_id", "role", "parts"}}
PLACEHOLDER_TITLES = {"New Session", "New Agent Session"}
MS_FROM = 10**11  # a number of seconds this big would be past the year 5000: it counts milliseconds
FAILED_FINISH = {"error", "permission_denied", "canceled", "content_filter"}


@dataclass
class Store:
    """What a store holds: its schema, its sessions and their messages in order."""

    columns: dict[str, set[str]]
    version: int | None  # the last goose migration applied
    sessions: dict[str, Json] = field(default_factory=dict)
    messages: dict[str, list[Json]] = field(default_factory=dict)

    @property
    def crush(self) -> bool:
        """Crush's stores have ``messages.provider`` (its first migration of its own added it)."""
        return "provider" in self.columns.get("messages", set())

    def roots(self) -> list[str]:
        """The sessions that are agents: those whose parent is not in the store, holding messages."""
        return [
            sid for sid, s in self.sessions.items()
            if s.get("parent_session_id") not in self.sessions and self.messages.get(sid)
        ]  # fmt: skip

    def children(self, sid: str) -> list[str]:
        return [k for k, s in self.sessions.items() if s.get("parent_session_id") == sid and k != sid]


def wal_of(db: Path) -> list[Path]:
    wal = db.with_name(db.name + "-wal")
    return [wal] if wal.is_file() else []


def stamp(db: Path) -> tuple[tuple[str, int, int], ...]:
    found = []
    for path in [db, *wal_of(db)]:
        st = path.stat()
        found.append((str(path), st.st_size, st.st_mtime_ns))
    return tuple(found)


def read_store(db: Path) -> Store | None:
    """The store in ``db`` with its WAL, read from a copy; None if it is not an agent's store."""
    return read_copy(db, stamp(db))


@functools.lru_cache(maxsize=4)
def read_copy(db: Path, _stamp: tuple[tuple[str, int, int], ...]) -> Store | None:
    with tempfile.TemporaryDirectory(prefix="foldline-store-") as tmp:
        copy = Path(tmp) / "store.db"
        shutil.copyfile(db, copy)  # the db first, then its WAL: frames written since are ignored whole
        for wal in wal_of(db):
            shutil.copyfile(wal, Path(tmp) / "store.db-wal")
        conn = sqlite3.connect(copy)
        try:
            return load(conn)
        except sqlite3.DatabaseError:
            return None
        finally:
            conn.close()


def load(conn: sqlite3.Connection) -> Store | None:
    conn.row_factory = sqlite3.Row
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    columns = {t: {r[1] for r in conn.execute(f'PRAGMA table_info("{t}")')} for t in tables if t in NEEDED}
    if any(not need <= columns.get(t, set()) for t, need in NEEDED.items()) or "goose_db_version" not in tables:
        return None
    version = conn.execute("SELECT max(version_id) FROM goose_db_version WHERE is_applied").fetchone()[0]
    store = Store(columns, version if isinstance(version, int) else None)
    for row in conn.execute("SELECT * FROM sessions ORDER BY created_at, rowid"):
        store.sessions[str(row["id"])] = dict(row)
    for row in conn.execute("SELECT * FROM messages ORDER BY created_at, rowid"):
        store.messages.setdefault(str(row["session_id"]), []).append(dict(row))
    return store


def is_store(head: Head) -> bool:
    return head.data.startswith(MAGIC)


def tables_alone(db: Path) -> set[str] | None:
    """The tables of the db without its WAL, read in place without a lock or a write (immutable);
    None if it cannot be read so (the agent may be checkpointing it)."""
    try:
        conn = sqlite3.connect(f"{db.as_uri()}?immutable=1", uri=True)
        try:
            return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        finally:
            conn.close()
    except sqlite3.Error:
        return None


def store_of(head: Head) -> Store | None:
    """The agent's store in this file, if it is one. Another SQLite file (Foldline's own store) is
    told by its tables, read in place, and never copied; a store is copied with its WAL and read."""
    if not is_store(head):
        return None
    alone = tables_alone(head.path)
    if alone and not {*NEEDED, "goose_db_version"} <= alone:
        return None
    try:
        return read_store(head.path)
    except (OSError, sqlite3.Error):
        return None


def groups_for(name: str) -> Any:
    def groups(head: Head, finding: Finding) -> None:
        store = store_of(head)
        roots = store.roots() if store else []
        if not roots:
            from .importer import NO_CONVERSATION

            finding.skipped.append((str(head.path), NO_CONVERSATION))
        for sid in roots:
            finding.add(Group(name, head.path, sid, wal_of(head.path), shared=True))

    return groups


def moment(value: Any) -> str | None:
    """A column's or a part's time in the store's form: Unix seconds or milliseconds, or ISO text."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float) and value > 0:
        seconds = value / 1000 if value >= MS_FROM else value
        try:
            return iso_time(datetime.fromtimestamp(seconds, UTC).isoformat())
        except (OverflowError, OSError, ValueError):
            return None
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return moment(int(value))
    return iso_time(value)


def decode(raw: Any) -> Any:
    if not isinstance(raw, str | bytes):
        return raw
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None


def call_input(raw: Any) -> Json:
    if not isinstance(raw, str) or not raw.strip():
        return {}
    found = decode(raw)
    return found if isinstance(found, dict) else {"input": raw}


def file_part(kind: str, data: Json) -> Json | None:
    if kind == "image_url" and isinstance(data.get("url"), str) and data["url"]:
        url = data["url"]
        media = url[5:].split(";", 1)[0] if url.startswith("data:") else "image/*"
        return {"type": "file", "mediaType": media or "image/*", "url": url}
    if kind == "binary" and isinstance(data.get("Data"), str) and data["Data"]:
        media = data.get("MIMEType") if isinstance(data.get("MIMEType"), str) else "application/octet-stream"
        part: Json = {"type": "file", "mediaType": media, "url": f"data:{media};base64,{data['Data']}"}
        if isinstance(data.get("Path"), str) and data["Path"]:
            part["filename"] = os.path.basename(data["Path"])
        return part
    return None


@dataclass
class Reader:
    """One session's rows as a conversation."""

    name: str
    db: Store  # the agent's own SQLite store (read from a copy), not Foldline's
    registry: Registry
    conv: Conversation
    calls: dict[str, Json] = field(default_factory=dict)

    def rows(self, sid: str) -> None:
        for row in self.db.messages.get(sid, []):
            self.row(row)
        session = self.db.sessions.get(sid, {})
        title = session.get("title")
        self.conv.title = short_title(title) if isinstance(title, str) and title not in PLACEHOLDER_TITLES else None
        self.conv.title = self.conv.title or self.first_prompt()
        self.session_usage(session)

    def first_prompt(self) -> str | None:
        for m in self.conv.messages:
            if m["role"] == "user":
                text = " ".join(p["text"] for p in m["parts"] if p["type"] == "text")
                if text.strip():
                    return short_title(text)
        return None

    def session_usage(self, session: Json) -> None:
        given = [session.get(k) for k in ("prompt_tokens", "completion_tokens")]
        counts = [n for n in given if isinstance(n, int) and not isinstance(n, bool) and n >= 0]
        if len(counts) != len(given) or not any(counts):
            return
        last = next((m for m in reversed(self.conv.messages) if m["role"] == "assistant" and m["parts"]), None)
        if last is not None:
            last["metadata"]["usage"] = usage_of(counts[0], counts[1])
            last["metadata"]["usageOf"] = "session"

    def meta(self, row: Json) -> Json:
        meta: Json = {"source": self.name, "lineType": str(row.get("role"))}
        when = moment(row.get("created_at"))
        if when:
            meta["timestamp"] = when
        if self.db.version:
            meta["schema"] = self.db.version
        for key, out in (("model", "model"), ("provider", "provider")):
            if isinstance(row.get(key), str) and row[key]:
                meta[out] = row[key]
        return meta

    def row(self, row: Json) -> None:
        parts = decode(row.get("parts"))
        role = row.get("role")
        self.conv.saw(moment(row.get("created_at")))
        if not isinstance(parts, list):
            return
        items: list[tuple[Any, Json]] = [
            (p.get("type"), p["data"]) for p in parts if isinstance(p, dict) and isinstance(p.get("data"), dict)
        ]
        if role == "tool":
            for kind, data in items:
                if kind == "tool_result":
                    self.result(data)
            return
        kept = role if role in ("user", "assistant", "system") else "system"
        message, _ = self.conv.message(str(row.get("id")), kept, self.meta(row))
        for kind, data in items:
            self.part(message, str(row.get("id")), kind, data)

    def part(self, message: Json, row_id: str, kind: Any, data: Json) -> None:
        text = data.get("text")
        if kind == "text" and isinstance(text, str) and text:
            message["parts"].append({"type": "text", "text": text, "state": "done"})
        elif kind == "reasoning" and isinstance(data.get("thinking"), str) and data["thinking"].strip():
            message["parts"].append({"type": "reasoning", "text": data["thinking"], "state": "done"})
        elif kind in ("image_url", "binary"):
            found = file_part(kind, data)
            if found:
                message["parts"].append(found)
        elif kind == "tool_call":
            call_id = str(data.get("id") or f"{row_id}:{len(message['parts'])}")
            part = tool_part(self.registry, str(data.get("name") or "unknown"), call_id, call_input(data.get("input")))
            self.calls[call_id] = part
            message["parts"].append(part)
        elif kind == "finish":
            self.finish(message, row_id, data)

    def finish(self, message: Json, row_id: str, data: Json) -> None:
        reason = data.get("reason")
        if isinstance(reason, str) and reason:
            message["metadata"]["finishReason"] = reason
        said = [data[k] for k in ("message", "details") if isinstance(data.get(k), str) and data[k].strip()]
        if reason in FAILED_FINISH and said:
            meta = {**message["metadata"], "lineType": "finish", "finishReason": reason}
            note, _ = self.conv.message(f"{row_id}:finish", "system", meta)
            note["parts"] = [{"type": "text", "text": "\n".join(said), "state": "done"}]

    def result(self, data: Json) -> None:
        part = self.calls.get(str(data.get("tool_call_id")))
        if part is None:
            return
        content = data.get("content")
        set_output(part, content if content is not None else "", error=data.get("is_error") is True)


def parse_for(name: str) -> Any:
    def parse(group: Group, registry: Registry, namespace: uuid.UUID) -> Session:
        store = read_store(group.main)
        idle = all(is_idle(p) for p in group.files)
        conv = Conversation(namespace, idle=idle)
        session = Session(str(group.main), name, group.session_id, conv, files=[str(p) for p in group.files])
        if store is None:
            return session
        Reader(name, store, registry, conv).rows(group.session_id)
        settle_conversation(conv, registry)
        for child in store.children(group.session_id):
            sub = Conversation(namespace, idle=idle)
            Reader(name, store, registry, sub).rows(child)
            settle_conversation(sub, registry)
            if sub.messages:
                session.subagents[child] = sub
        return session

    return parse
