"""Writing a parsed session through the write door, adding only what is new or changed.

The bookkeeping (``Transcripts.import_state``) is two records per workspace. One per main file
holds the size and modification time of each file of its session, so an untouched file is not
even parsed again. One per session (its agent's key, whatever path it was read from) holds a
short hash of each message written, so a grown session puts only its new messages and the ones
that changed (an assistant message whose tool result arrived since), and the same session read
from a copy elsewhere puts nothing. Stores written before the session record read the hashes
from the file's record.

After its messages are written, each conversation is dated by its source
(``Transcripts.date_agent``): created at its first line's timestamp, updated at its last line's.
An agent's activity includes its subagents', as in the store: its ``updated_at`` is the latest of theirs and its own.
"""

from __future__ import annotations

import hashlib
import os
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from ..errors import NotFound
from ..store import MessageWrite
from .formats import Group
from .session import Conversation, Json, Session, is_idle, short_title
from .summary import Summary

if TYPE_CHECKING:
    from ..service import Transcripts

# Bumped when the importer changes what it makes of a log: a session saved by an older importer is
# parsed again (and only its changed messages written), even if its files are untouched.
IMPORTER_VERSION = 6  # 6: undated messages dated by the log's times or its file's, never the import's
# A session's new messages go to the write door in batches of one transaction each
# (``Transcripts.put_messages``): at most this many messages, or this many bytes of their JSON.
BATCH_MESSAGES = 500
BATCH_BYTES = 4 * 2**20


def agent_id(workspace_id: str, key: str) -> str:
    """The stable id of the agent for a session in a workspace."""
    return str(uuid.uuid5(uuid.UUID(workspace_id), key))


def group_key(group: Group) -> str:
    if group.orphan:
        return f"{group.format}:{group.session_id}:{group.main.stem}"
    return f"{group.format}:{group.session_id}"


def fingerprint(group: Group) -> dict[str, list[int]]:
    """Each file's size, mtime and whether it is idle: a session that went quiet since it was
    imported is read again, so the calls it left open are closed."""
    found = {}
    for path in group.files:
        stat = os.stat(path)
        found[str(path)] = [stat.st_size, stat.st_mtime_ns, int(is_idle(path))]
    return found


def session_source(key: str) -> str:
    """The bookkeeping key of a session's own record; a main file's key is its absolute path."""
    return f"session:{key}"


def decode_state(raw: str | None) -> Json:
    try:
        state = orjson.loads(raw) if raw else {}
    except orjson.JSONDecodeError:
        state = {}
    return state if isinstance(state, dict) else {}


def marked(message: Json) -> tuple[str, int]:
    """A message's short hash, and the size of its JSON. A time taken from the file
    (``metadata.timestampFrom: "file"``) is not hashed: it moves each time the file is written,
    so a message keeps the time it was first imported with (about when it was written)."""
    text = orjson.dumps(message, option=orjson.OPT_SORT_KEYS)
    meta = message.get("metadata")
    if isinstance(meta, dict) and meta.get("timestampFrom") == "file":
        kept = {**message, "metadata": {k: v for k, v in meta.items() if k != "timestamp"}}
        hashed = orjson.dumps(kept, option=orjson.OPT_SORT_KEYS)
        return hashlib.blake2b(hashed, digest_size=8).hexdigest(), len(text)
    return hashlib.blake2b(text, digest_size=8).hexdigest(), len(text)


class Writer:
    """Writes sessions for one account into one workspace."""

    def __init__(self, transcripts: Transcripts, account_id: str, workspace_id: str):
        self.t = transcripts
        self.account = account_id
        self.workspace = workspace_id

    def write(self, session: Session, agent: str, hashes: dict[str, dict[str, str]]) -> Summary:
        """Put the session's new and changed messages; ``hashes`` (per call, per message) is updated."""
        done = Summary()
        title = short_title(session.title) if session.title else None
        before = self.dates(agent)
        created = self.t.create_agent(self.account, self.workspace, title, agent_id=agent, brief=True)
        if title and created["title"] != title and session.main.title:
            self.t.rename_agent(self.account, agent, title)
        self.put_all(agent, None, session.main, hashes.setdefault("", {}), done, session, "")
        for call, conv in session.subagents.items():
            self.put_all(agent, call, conv, hashes.setdefault(call, {}), done, session, call)
        # last: a subagent's write stamps its parent with the time of the import
        lasts = [c.last_at for c in (session.main, *session.subagents.values()) if c.last_at]
        if session.main.first_at and lasts:
            self.date(agent, session.main.first_at, max(lasts), before=before)
        done.agents = 1 if done.messages else 0
        return done

    def write_under(self, session: Session, parent: str, call: str, hashes: dict[str, dict[str, str]]) -> Summary:
        """A subagent rollout, as the conversation under its parent thread's agent."""
        done = Summary()
        session.main.title = session.main.title or session.title
        before = self.t.find_agent(self.account, parent)
        self.put_all(parent, call, session.main, hashes.setdefault(call, {}), done, session, "")
        if before is not None and session.main.last_at:  # the parent's own dates, stretched to this thread's end
            updated = max(before["updated_at"], session.main.last_at)
            if done.messages or updated != before["updated_at"]:  # a write stamped it with the time of the import
                self.t.date_agent(self.account, parent, before["created_at"], updated)
        done.agents = 1 if done.messages else 0
        return done

    def put_all(
        self, agent: str, call: str | None, conv: Conversation, seen: dict[str, str], done: Summary,
        session: Session | None = None, key: str = "",
    ) -> None:  # fmt: skip
        """Write a conversation's new and changed messages in batches (``session.writes`` and
        ``session.marks`` under ``key``: their writes and marks made ahead, by message id)."""
        before = None if call is None else self.dates(agent, call)
        made = session.writes.get(key) if session is not None else None
        marks = session.marks.get(key, {}) if session is not None else {}
        batch: list[tuple[Json, str]] = []
        size = 0
        for message in conv.messages:
            mark, length = marks.get(message["id"]) or marked(message)
            if seen.get(message["id"]) == mark:
                continue
            if batch and (len(batch) >= BATCH_MESSAGES or size + length > BATCH_BYTES):
                self.put_batch(agent, call, batch, seen, done, made)
                batch, size = [], 0
            batch.append((message, mark))
            size += length
        self.put_batch(agent, call, batch, seen, done, made)
        if call is None or not conv.messages:
            return
        found = self.t.find_agent(self.account, agent, call)
        if found is None:
            return
        title = short_title(conv.title) if conv.title else None
        renamed = title if title and found["title"] != title else None
        if conv.first_at and conv.last_at:
            self.date(agent, conv.first_at, conv.last_at, call, found, before, renamed)
        elif renamed:
            self.t.rename_agent(self.account, agent, renamed, call=call)

    def put_batch(
        self, agent: str, call: str | None, batch: list[tuple[Json, str]], seen: dict[str, str], done: Summary,
        made: dict[str, MessageWrite] | None = None,
    ) -> None:  # fmt: skip
        """Write some messages of a conversation in one transaction; each is then known by its hash."""
        if not batch:
            return
        writes = [made.get(m["id"]) for m, _ in batch] if made else []
        if writes and all(w is not None for w in writes):
            self.t.put_ready(self.account, agent, [w for w in writes if w is not None], call=call)
        else:  # checked and made ready here (a refusal is reported as the write door's)
            self.t.put_messages(self.account, agent, [(m["id"], m) for m, _ in batch], call=call)
        for message, mark in batch:
            seen[message["id"]] = mark
            done.messages += 1
            done.parts += len(message["parts"])

    def dates(self, agent: str, call: str | None = None) -> tuple[str, str] | None:
        """A conversation's (created_at, updated_at) before this import writes to it, if it holds
        any message yet."""
        try:
            conv = self.t.conversation(self.account, agent, call)
        except NotFound:
            return None
        return (conv.created_at, conv.updated_at) if conv.seq else None

    def date(
        self, agent: str, first: str, last: str, call: str | None = None, found: Json | None = None,
        before: tuple[str, str] | None = None, title: str | None = None,
    ) -> None:
        """Date a conversation by its source, unless it already is (a date written wakes followers),
        and give it ``title`` in the same write. One that held messages ``before`` this import
        keeps what lies outside its source's span: a message written through the API after the
        session's last line stays its last activity, however often the session is imported again."""
        if before is not None:
            first, last = min(first, before[0]), max(last, before[1])
        found = found or self.t.find_agent(self.account, agent, call)
        if found is None or (found["created_at"], found["updated_at"]) != (first, last) or title:
            self.t.date_agent(self.account, agent, first, last, call=call, title=title)

    def file_record(self, main: Path) -> Json:
        """What the last import from the file ``main`` saved of it (``files``, ``version``, ``key``)."""
        return decode_state(self.t.import_state(self.account, self.workspace, str(main)))

    def load_state(self, main: Path, key: str, record: Json | None = None, session: Json | None = None) -> Json:
        """What the last imports saved: ``files`` and ``version`` of the file ``main`` (the last
        import from that path), ``hashes`` and ``source`` of the session ``key`` (from whatever
        path; ``source`` is the main file it was first imported from). ``record`` and
        ``session``: those records, if already read."""
        state = dict(self.file_record(main) if record is None else record)
        if session is None:
            session = decode_state(self.t.import_state(self.account, self.workspace, session_source(key)))
        if isinstance(session.get("hashes"), dict):
            state["hashes"] = session["hashes"]
        state.pop("source", None)
        if isinstance(session.get("source"), str):
            state["source"] = session["source"]
        return state

    def file_key(self, main: Path, key: str, record: Json | None = None) -> str:
        """The session key the last import from ``main`` wrote under: ``key``, or the key derived
        from it when ``main`` claimed a session first imported from another file."""
        found = (self.file_record(main) if record is None else record).get("key")
        return found if isinstance(found, str) and found.startswith(f"{key}@") else key

    def save_state(self, main: Path, key: str, files: Any, hashes: Any, source: str) -> None:
        """Save the session's hashes and source and the file's record, in one transaction."""
        session = {"hashes": hashes, "version": IMPORTER_VERSION, "source": source}
        self.t.save_import_states(self.account, self.workspace, {
            session_source(key): orjson.dumps(session).decode(), str(main): self.file_state(key, files)})  # fmt: skip

    def save_file_state(self, main: Path, key: str, files: Any) -> None:
        self.t.save_import_state(self.account, self.workspace, str(main), self.file_state(key, files))

    @staticmethod
    def file_state(key: str, files: Any) -> str:
        return orjson.dumps({"files": files, "version": IMPORTER_VERSION, "key": key}).decode()
