"""``import_paths``: find the sessions under some paths and write what is new of each."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from ..errors import FoldlineError
from ..service import Transcripts
from .detect import find_groups
from .formats import Group, by_name
from .jsonl import bounded
from .session import Json, Session
from .summary import Summary
from .writer import IMPORTER_VERSION, Writer, agent_id, fingerprint, group_key, marked

# Why a log that holds only bookkeeping (summaries, file snapshots) makes no agent.
NO_CONVERSATION = "holds no conversation (no prompt, reply or tool call)"

@dataclass(frozen=True, slots=True)
class Step:
    """How far an import is: told before each session (``path`` its main file) and at the end
    (``path`` empty)."""

    sessions: int  # sessions done
    all_sessions: int
    files: int  # their files
    all_files: int
    bytes: int  # their bytes
    all_bytes: int
    path: str


Progress = Callable[[Step], None]


def parse(group: Group, transcripts: Transcripts, namespace: uuid.UUID) -> Session:
    """One session parsed by its format, what its log left undated dated by its file (``Session.date_untimed``)."""
    session = by_name(group.format).parse(group, transcripts.registry, namespace)
    session.date_untimed()
    return session


def import_group(writer: Writer, group: Group) -> Summary:
    """One session: parsed whole first, then written; skipped with a reason if it cannot be.

    A session belongs to the file it was first imported from (its record's ``source``). Another
    file claiming the same session id (a copy elsewhere, or a forged log) is the same session only
    while it changes nothing stored; one that would add or change a message is imported as a
    session of its own, under a key derived from its path (``Claim``), and the summary says so."""
    t = writer.t
    key = writer.file_key(group.record, group_key(group))
    agent = agent_id(writer.workspace, key)
    if t.forgotten(writer.account, writer.workspace, agent):  # deleted with --forget: passed over
        return Summary(forgotten=1)
    try:
        files = fingerprint(group)
        state = writer.load_state(group.record, key)
        current = state.get("version") == IMPORTER_VERSION
        if current and state.get("files") == files and t.find_agent(writer.account, agent) is not None:
            return Summary(unchanged=1)
        read = claimed(writer, group, Parsed(key, agent, state, parse(group, t, uuid.UUID(agent))), files)
    except OSError as exc:
        return Summary(skipped=[(str(group.main), f"cannot be read: {exc.strerror or exc}")])
    except Exception as exc:  # a shape no importer foresaw: this session is passed over, the rest go on
        return Summary(skipped=[(str(group.main), f"cannot be parsed: {type(exc).__name__}: {exc}")])
    if read is None:
        return Summary(unchanged=1)
    return write_parsed(writer, group, read, files)


@dataclass
class Parsed:
    """A session parsed, with the key it is written under and what the last imports saved of it."""

    key: str
    agent: str
    state: Json
    session: Session
    claim: Claim | None = None


def claimed(writer: Writer, group: Group, read: Parsed, files: Json) -> Parsed | None:
    """The session as it is to be written: under its own key; or, when another file was its first
    source, nothing if it changes nothing stored (a copy), else parsed again under a derived key."""
    owner = read.state.get("source")
    if not isinstance(owner, str) or same_source(owner, group.main) or read.key != group_key(group):
        return read
    if not changes(read.session, read.state.get("hashes")):  # a copy of what is stored: nothing to write
        writer.save_file_state(group.record, read.key, files)
        return None
    claim = Claim(read.key, derived_key(read.key, group.main))
    agent = agent_id(writer.workspace, claim.derived)
    state = writer.load_state(group.record, claim.derived)
    return Parsed(claim.derived, agent, state, parse(group, writer.t, uuid.UUID(agent)), claim)


def write_parsed(writer: Writer, group: Group, read: Parsed, files: Json) -> Summary:
    t, session, agent = writer.t, read.session, read.agent
    if not any(conv.messages for conv in (session.main, *session.subagents.values())):
        return Summary(skipped=[(str(group.main), NO_CONVERSATION)])
    if read.claim is not None and t.forgotten(writer.account, writer.workspace, agent):
        return Summary(forgotten=1)
    if session.parent and t.forgotten(writer.account, writer.workspace, codex_agent(writer, session.parent[0])):
        return Summary(forgotten=1)  # a subagent rollout of a thread deleted with --forget
    found = read.state.get("hashes")
    hashes: dict[str, dict[str, str]] = found if isinstance(found, dict) else {}
    # a claim is never hung under another session's thread either
    parent = session.parent and read.claim is None and parent_agent(writer, session.parent[0])
    target = (parent, session.parent[1]) if parent and session.parent else (agent, None)
    if t.find_agent(writer.account, *target) is None:
        hashes = {}  # its conversation is not there (deleted since): every message is written again
    try:
        if parent and session.parent:
            done = writer.write_under(session, parent, session.parent[1], hashes)
        else:
            done = writer.write(session, agent, hashes)
    except FoldlineError as exc:  # the write door refused: an importer bug, reported, never bypassed
        return Summary(skipped=[(str(group.main), f"refused by the write door: {exc.message} at {exc.where}")])
    source = read.state.get("source")
    writer.save_state(group.record, read.key, files, hashes, source if isinstance(source, str) else str(group.main))
    if read.claim is not None:
        done.foreign.append((str(group.main), read.claim.session, read.claim.reason))
    if not done.messages:  # parsed again (another path, a touched file), nothing new: up to date
        done.unchanged = 1
    return done


@dataclass(frozen=True, slots=True)
class Claim:
    """A file claiming a session another file was first imported from, imported apart."""

    session: str  # the key it claims (``format:session id``)
    derived: str  # the key it is imported under

    @property
    def reason(self) -> str:
        return (
            f"claims session {self.session}, first imported from another file: imported as a session "
            "of its own, the first left as it was"
        )


def derived_key(key: str, main: Path) -> str:
    """The key of a session claimed by a second file: the claimed key and a hash of that file's path."""
    return f"{key}@{hashlib.blake2b(str(main).encode(), digest_size=8).hexdigest()}"


def same_source(owner: str, main: Path) -> bool:
    """Whether ``main`` is the file a session was first imported from, or its other form beside it
    (Gemini CLI and VS Code go on in ``<name>.jsonl`` beside ``<name>.json``)."""
    first = Path(owner)
    return first == main or (first.parent == main.parent and first.stem == main.stem)


def changes(session: Session, found: object) -> bool:
    """Whether writing ``session`` would add or change a message of what is stored (``found``, the
    session's hashes per conversation)."""
    hashes = found if isinstance(found, dict) else {}
    seen = {mid: mark for marks in hashes.values() if isinstance(marks, dict) for mid, mark in marks.items()}
    convs = (session.main, *session.subagents.values())
    return any(seen.get(m["id"]) != marked(m)[0] for conv in convs for m in conv.messages)


def parent_agent(writer: Writer, parent_session: str) -> str | None:
    """The agent of a Codex parent thread, if it was imported into this workspace."""
    found = codex_agent(writer, parent_session)
    return found if writer.t.find_agent(writer.account, found) is not None else None


def codex_agent(writer: Writer, session_id: str) -> str:
    """The agent id a Codex thread is imported as in this workspace."""
    return agent_id(writer.workspace, f"codex:{session_id}")


def ordered(groups: list[Group]) -> list[Group]:
    """Parents before the subagent rollouts that may hang under them (Codex children start later)."""
    return sorted(groups, key=lambda g: (g.format != "claude-code", g.main.name))


def import_paths(
    transcripts: Transcripts,
    paths: Iterable[str | Path],
    *,
    account_id: str,
    workspace_id: str,
    progress: Progress | None = None,
) -> Summary:
    """Import every session of a known agent found under ``paths`` (files or folders)."""
    # checked before anything is read: no session belongs nowhere
    workspace_id = transcripts.check_member(account_id, workspace_id)
    with bounded(transcripts.settings.import_max_line) as bound:
        summary = import_found(transcripts, paths, account_id, workspace_id, progress)
    summary.skipped.extend((long.path, long.reason) for long in bound.long.values())
    return summary


def import_found(
    transcripts: Transcripts, paths: Iterable[str | Path], account_id: str, workspace_id: str,
    progress: Progress | None,
) -> Summary:  # fmt: skip
    groups, skipped = find_groups(paths)
    summary = Summary(skipped=list(skipped))
    writer = Writer(transcripts, account_id, workspace_id)
    sizes = {id(g): size(g) for g in groups}
    files = sum(len(g.files) for g in groups)
    total = sum(sizes.values())
    done = done_files = 0
    with transcripts.batched():  # on disk together at the end, not commit by commit
        for n, group in enumerate(ordered(groups)):
            if progress:
                progress(Step(n, len(groups), done_files, files, done, total, str(group.main)))
            summary.add(import_group(writer, group))
            done += sizes[id(group)]
            done_files += len(group.files)
    if progress:
        progress(Step(len(groups), len(groups), files, files, total, total, ""))
    return summary


def size(group: Group) -> int:
    total = 0
    for path in group.files:
        try:
            total += path.stat().st_size
        except OSError:
            pass
    return total
