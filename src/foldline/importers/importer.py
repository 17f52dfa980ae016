"""``import_paths``: find the sessions under some paths and write what is new of each."""

from __future__ import annotations

import hashlib
import uuid
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import FoldlineError
from ..service.agents import forgotten_source
from .ahead import Ahead, failure, parse_session
from .detect import find_groups
from .formats import Group
from .jsonl import bounded, current_bound
from .session import Json, Session
from .summary import Summary
from .writer import IMPORTER_VERSION, Writer, agent_id, decode_state, fingerprint, group_key, marked, session_source

if TYPE_CHECKING:
    from ..service import Transcripts

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
Found = tuple[list[Group], list[tuple[str, str]]]  # what find_groups found: the sessions, the files passed over


def parse(group: Group, transcripts: Transcripts, namespace: uuid.UUID) -> Session:
    """One session parsed by its format, what its log left undated dated by its file (``Session.date_untimed``)."""
    return parse_session(group, transcripts.registry, namespace)


@dataclass(frozen=True, slots=True)
class Plan:
    """What an import will do with a session that is to be parsed: the key and agent it is
    written under, its files' fingerprint, and what the last imports saved of it."""

    key: str
    agent: str
    files: Json
    state: Json


def plan(writer: Writer, group: Group) -> Plan | Summary:
    """The plan for one session, or its summary if it is not to be parsed at all (forgotten,
    unchanged since the last import, or unreadable)."""
    t = writer.t
    record = writer.file_record(group.record)
    key = writer.file_key(group.record, group_key(group), record)
    agent = agent_id(writer.workspace, key)
    # The session's record, and whether it was deleted with --forget (then passed over), in one read.
    records = t.import_states(writer.account, writer.workspace, [session_source(key), forgotten_source(agent)])
    if records[forgotten_source(agent)] is not None:
        return Summary(forgotten=1)
    try:
        files = fingerprint(group)
    except OSError as exc:
        return Summary(skipped=[(str(group.main), failure(exc))])
    state = writer.load_state(group.record, key, record, decode_state(records[session_source(key)]))
    current = state.get("version") == IMPORTER_VERSION
    if current and state.get("files") == files and t.find_agent(writer.account, agent) is not None:
        return Summary(unchanged=1)
    return Plan(key, agent, files, state)


def import_group(writer: Writer, group: Group, pool: Ahead | None = None, planned: Plan | None = None) -> Summary:
    """One session: parsed whole first (by ``pool``'s workers, if they did), then written;
    skipped with a reason if it cannot be.

    A session belongs to the file it was first imported from (its record's ``source``). Another
    file claiming the same session id (a copy elsewhere, or a forged log) is the same session only
    while it changes nothing stored; one that would add or change a message is imported as a
    session of its own, under a key derived from its path (``Claim``), and the summary says so.
    ``planned``: its plan, made when it was given to the pool and still the one."""
    found = planned or plan(writer, group)
    if isinstance(found, Summary):
        return found
    key, agent, files, state = found.key, found.agent, found.files, found.state
    try:
        session = parsed_ahead(group, uuid.UUID(agent), pool) or parse(group, writer.t, uuid.UUID(agent))
        read = claimed(writer, group, Parsed(key, agent, state, session), files)
    except SessionFailed as exc:
        return Summary(skipped=[(str(group.main), exc.reason)])
    except Exception as exc:  # a shape no importer foresaw: this session is passed over, the rest go on
        return Summary(skipped=[(str(group.main), failure(exc))])
    if read is None:
        return Summary(unchanged=1)
    return write_parsed(writer, group, read, files)


class SessionFailed(Exception):
    """A session a worker could not parse (:attr:`reason` as the summary says it)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def parsed_ahead(group: Group, namespace: uuid.UUID, pool: Ahead | None) -> Session | None:
    """The session ``pool`` parsed ahead under ``namespace``, its messages' writes made ready
    (``Session.writes``) and its long lines noted in this import's bound; None if it was not."""
    ready = pool.take(group, namespace) if pool is not None else None
    if ready is None:
        return None
    current_bound().long.update({(long.path, long.number): long for long in ready.long})
    if ready.session is None:
        raise SessionFailed(ready.failure or "cannot be parsed")
    ready.session.writes, ready.session.marks = ready.writes, ready.marks
    return ready.session


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
    pool: Ahead | None = None,
    found: Found | None = None,
) -> Summary:
    """Import every session of a known agent found under ``paths`` (files or folders); ``pool``'s
    workers parse sessions ahead of the writes (:mod:`.ahead`). ``found``: what
    :func:`~.detect.find_groups` found under them, if it was asked already (:func:`parse_first`)."""
    # checked before anything is read: no session belongs nowhere
    workspace_id = transcripts.check_member(account_id, workspace_id)
    with bounded(transcripts.settings.import_max_line) as bound:
        summary = import_found(transcripts, found or find_groups(paths), account_id, workspace_id, progress, pool)
    summary.skipped.extend((long.path, long.reason) for long in bound.long.values())
    return summary


def import_found(
    transcripts: Transcripts, found: Found, account_id: str, workspace_id: str, progress: Progress | None,
    pool: Ahead | None = None,
) -> Summary:  # fmt: skip
    groups, skipped = found
    summary = Summary(skipped=list(skipped))
    writer = Writer(transcripts, account_id, workspace_id)
    sizes = {id(g): size(g) for g in groups}
    files = sum(len(g.files) for g in groups)
    total = sum(sizes.values())
    done = done_files = 0
    order = ordered(groups)
    asked = 0  # the groups up to here were given to the pool (or found not to need parsing)
    # A session's plan changes only by the write of another session of the same key (a claim):
    # the plan of one whose key is its own in this import is not made twice.
    keys = Counter(group_key(g) for g in order)
    with transcripts.batched():  # on disk together at the end, not commit by commit
        for n, group in enumerate(order):
            if progress:
                progress(Step(n, len(groups), done_files, files, done, total, str(group.main)))
            if pool is not None and len(order) > 1:
                asked = ask_ahead(writer, pool, order, max(asked, n))
            kept = pool.plan_of(group) if pool is not None and keys[group_key(group)] == 1 else None
            summary.add(import_group(writer, group, pool, kept if isinstance(kept, Plan) else None))
            if pool is not None:
                pool.drop(group)  # asked for, but not taken (its plan changed): not waited for
            done += sizes[id(group)]
            done_files += len(group.files)
    if progress:
        progress(Step(len(groups), len(groups), files, files, total, total, ""))
    return summary


def ask_ahead(writer: Writer, pool: Ahead, order: list[Group], start: int) -> int:
    """Give the pool the next sessions to parse from ``order[start]`` on, up to its window; the
    index of the first not asked. A session is asked for under the key its plan has now; if an
    earlier session's write changes that (a claim), the importer parses it again itself."""
    while not pool.broken and start < len(order) and pool.in_flight < pool.window:
        if not pool.asked(order[start]):  # asked by parse_first: its plan is made when it is taken
            planned = plan(writer, order[start])
            if isinstance(planned, Plan):
                pool.ask(order[start], uuid.UUID(planned.agent), planned)
        start += 1
    return start


def parse_first(pool: Ahead, found: Found, workspace_id: str) -> None:
    """Before a new store is made: have the pool parse the first sessions as a first import into
    it writes them, each under its own key (a new store holds no record that says otherwise) in
    the workspace that will be made as ``workspace_id``. Each is taken only if its plan, made
    once the store is open, is the one (:meth:`Ahead.take` checks the agent's id)."""
    order = ordered(found[0])
    for group in order[: pool.window]:
        pool.ask(group, uuid.UUID(agent_id(workspace_id, group_key(group))))


def size(group: Group) -> int:
    total = 0
    for path in group.files:
        try:
            total += path.stat().st_size
        except OSError:
            pass
    return total
