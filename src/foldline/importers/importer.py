"""``import_paths``: find the sessions under some paths and write what is new of each."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from ..errors import FoldlineError
from ..service import Transcripts
from .detect import find_groups
from .formats import Group, by_name
from .session import Session
from .summary import Summary
from .writer import IMPORTER_VERSION, Writer, agent_id, fingerprint, group_key

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
    return by_name(group.format).parse(group, transcripts.registry, namespace)


def import_group(writer: Writer, group: Group) -> Summary:
    """One session: parsed whole first, then written; skipped with a reason if it cannot be."""
    t = writer.t
    key = group_key(group)
    agent = agent_id(writer.workspace, key)
    if t.forgotten(writer.account, writer.workspace, agent):  # deleted with --forget: passed over
        return Summary(forgotten=1)
    try:
        files = fingerprint(group)
        state = writer.load_state(group.record, key)
        current = state.get("version") == IMPORTER_VERSION
        if current and state.get("files") == files and t.find_agent(writer.account, agent) is not None:
            return Summary(unchanged=1)
        session = parse(group, t, uuid.UUID(agent))
    except OSError as exc:
        return Summary(skipped=[(str(group.main), f"cannot be read: {exc.strerror or exc}")])
    except Exception as exc:  # a shape no importer foresaw: this session is passed over, the rest go on
        return Summary(skipped=[(str(group.main), f"cannot be parsed: {type(exc).__name__}: {exc}")])
    if not any(conv.messages for conv in (session.main, *session.subagents.values())):
        return Summary(skipped=[(str(group.main), NO_CONVERSATION)])
    if session.parent and t.forgotten(writer.account, writer.workspace, codex_agent(writer, session.parent[0])):
        return Summary(forgotten=1)  # a subagent rollout of a thread deleted with --forget
    found = state.get("hashes")
    hashes: dict[str, dict[str, str]] = found if isinstance(found, dict) else {}
    parent = session.parent and parent_agent(writer, session.parent[0])
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
    writer.save_state(group.record, key, files, hashes)
    if not done.messages:  # parsed again (another path, a touched file), nothing new: up to date
        done.unchanged = 1
    return done


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
