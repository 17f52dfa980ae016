"""Importing again, a session that grows, a broken file, a whole output saved beside a session.

These run on both backends: each test imports a few real files into its own workspace.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from typing import Any

import orjson
import pytest

from foldline.errors import NotFound
from foldline.importers import import_paths
from foldline.importers.detect import find_groups
from foldline.importers.writer import group_key, session_source
from foldline.service import Transcripts

DATA = Path(__file__).parent / "data" / "transcripts"
CLAUDE_FILE = DATA / "claude-code" / "jnarowski__agentcmd" / "full-session.jsonl"
CODEX_FILE = (
    DATA / "codex" / "jnarowski__agentcmd" / "rollout-2025-09-25T08-02-05-0199812e-64f0-7f73-91fc-095dda01c36e.jsonl"
)
SUBAGENTS = DATA / "claude-code" / "codemie-ai__codemie-code" / "incremental-subagents"
PERSISTED_CALL = "toolu_bdrk_01CaTZ658VzFpoM9YptVLjGg"
Json = dict[str, Any]


@pytest.fixture
def owner(transcripts: Transcripts) -> tuple[str, str]:
    account = transcripts.create_account("importer")["id"]
    return account, transcripts.create_workspace("sessions", [account])["id"]


def everything(t: Transcripts, account: str, workspace: str) -> dict[str, Json]:
    """Every stored message of the workspace, by id (subagents included)."""
    found = {}
    for agent in t.list_agents(account, workspace)["agents"]:
        for call in [None, *t.agent(account, agent["id"])["subagents"]]:
            for m in t.messages(account, agent["id"], call=call)["messages"]:
                found[m["id"]] = m
    return found


@pytest.mark.parametrize("source", [CLAUDE_FILE, CODEX_FILE], ids=["claude-code", "codex"])
def test_a_grown_session_adds_only_what_is_new(
    transcripts: Transcripts, owner: tuple[str, str], tmp_path: Path, source: Path
) -> None:
    account, workspace = owner
    raw = source.read_bytes().splitlines(keepends=True)
    log = tmp_path / source.name
    log.write_bytes(b"".join(raw[: len(raw) // 2]))
    first = import_paths(transcripts, [tmp_path], account_id=account, workspace_id=workspace)
    before = everything(transcripts, account, workspace)
    assert first.agents == 1 and first.messages == len(before) > 0
    with log.open("ab") as f:
        f.write(b"".join(raw[len(raw) // 2 :]))
    grown = import_paths(transcripts, [log], account_id=account, workspace_id=workspace)
    after = everything(transcripts, account, workspace)
    changed = [mid for mid, m in after.items() if before.get(mid) != m]
    assert grown.messages == len(changed) < len(after)
    assert set(before) <= set(after)
    assert len(transcripts.list_agents(account, workspace)["agents"]) == 1
    # the grown import stores what a fresh import of the whole file stores
    fresh_account = transcripts.create_account("fresh")["id"]
    fresh_space = transcripts.create_workspace("fresh", [fresh_account])["id"]
    import_paths(transcripts, [log], account_id=fresh_account, workspace_id=fresh_space)
    fresh = everything(transcripts, fresh_account, fresh_space)
    strip = lambda ms: [{k: v for k, v in m.items() if k != "id"} for m in ms.values()]  # noqa: E731
    assert strip(fresh) == strip(after)
    again = import_paths(transcripts, [log], account_id=account, workspace_id=workspace)
    assert again.messages == 0 and everything(transcripts, account, workspace) == after


def test_a_broken_file_is_skipped_with_a_reason_and_the_rest_imported(
    transcripts: Transcripts, owner: tuple[str, str], tmp_path: Path
) -> None:
    account, workspace = owner
    shutil.copy(CLAUDE_FILE, tmp_path / CLAUDE_FILE.name)
    (tmp_path / "garbage.jsonl").write_bytes(b"\x00\xff not json at all\n")
    (tmp_path / "foreign.jsonl").write_text('{"hello": "world"}\n')
    (tmp_path / "empty.jsonl").write_text("")
    summary = import_paths(transcripts, [tmp_path], account_id=account, workspace_id=workspace)
    reasons = {Path(path).name: reason for path, reason in summary.skipped}
    assert set(reasons) == {"garbage.jsonl", "foreign.jsonl"}
    assert all("not a session log of a known agent" in r for r in reasons.values())
    assert summary.agents == 1 and summary.messages > 0


def test_a_torn_last_line_waits_for_the_rest(transcripts: Transcripts, owner: tuple[str, str], tmp_path: Path) -> None:
    account, workspace = owner
    raw = CLAUDE_FILE.read_bytes()
    log = tmp_path / CLAUDE_FILE.name
    log.write_bytes(raw[: len(raw) - 200])  # a line being written
    first = import_paths(transcripts, [log], account_id=account, workspace_id=workspace)
    assert first.skipped == [] and first.messages > 0
    log.write_bytes(raw)
    import_paths(transcripts, [log], account_id=account, workspace_id=workspace)
    fresh_account = transcripts.create_account("fresh")["id"]
    fresh_space = transcripts.create_workspace("fresh", [fresh_account])["id"]
    import_paths(transcripts, [log], account_id=fresh_account, workspace_id=fresh_space)
    assert len(everything(transcripts, account, workspace)) == len(everything(transcripts, fresh_account, fresh_space))


def test_a_saved_tool_result_replaces_its_preview(
    transcripts: Transcripts, owner: tuple[str, str], tmp_path: Path
) -> None:
    """Claude Code 2.1 layout: <session>.jsonl, <session>/subagents/, <session>/tool-results/<call>.txt."""
    account, workspace = owner
    session = tmp_path / "e9fb405b-169f-40eb-9396-7e75076f045d"
    shutil.copy(SUBAGENTS / "turn-2.jsonl", session.with_suffix(".jsonl"))
    (session / "subagents").mkdir(parents=True)
    shutil.copy(SUBAGENTS / "turn-2" / "subagents" / "agent-a485154.jsonl", session / "subagents")
    (session / "tool-results").mkdir()
    whole = "the whole output, as saved beside the session\n" * 4000
    (session / "tool-results" / f"{PERSISTED_CALL}.txt").write_text(whole)
    summary = import_paths(
        transcripts, [session / "subagents" / "agent-a485154.jsonl"], account_id=account, workspace_id=workspace
    )
    assert summary.agents == 1  # the agent file brought its session along
    agent = transcripts.list_agents(account, workspace)["agents"][0]["id"]
    (call,) = transcripts.agent(account, agent)["subagents"]
    parts = [p for m in transcripts.messages(account, agent, call=call)["messages"] for p in m["parts"]]
    assert next(p for p in parts if p.get("toolCallId") == PERSISTED_CALL)["output"] == whole
    page = transcripts.messages(account, agent, call=call, cut=True)["messages"]
    assert any(c["bytes"] == len(whole) for m in page for c in m.get("cutParts", []))


def test_an_account_outside_the_workspace_imports_nothing(transcripts: Transcripts, owner: tuple[str, str]) -> None:
    _, workspace = owner
    stranger = transcripts.create_account("stranger")["id"]
    with pytest.raises(NotFound):
        import_paths(transcripts, [CLAUDE_FILE], account_id=stranger, workspace_id=workspace)


def claude_lines(session_id: str, call_id: str, result: str, extra: Json) -> bytes:
    """A tiny Claude Code session: a prompt, one Bash call, its result (and the CLI's ``toolUseResult``)."""
    base = {"sessionId": session_id, "cwd": "/home/user/project", "version": "2.1.0"}
    lines = [
        {**base, "type": "user", "uuid": "u-1", "message": {"role": "user", "content": "run it"}},
        {
            **base,
            "type": "assistant",
            "uuid": "u-2",
            "message": {
                "id": "msg_1",
                "role": "assistant",
                "model": "claude-test",
                "content": [{"type": "tool_use", "id": call_id, "name": "Bash", "input": {"command": "ls"}}],
            },
        },
        {
            **base,
            "type": "user",
            "uuid": "u-3",
            "message": {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": call_id, "content": result}],
            },
            "toolUseResult": extra,
        },
        {**base, "type": "user", "uuid": "u-4", "message": {"role": "user", "content": "thanks"}},
    ]
    return b"".join(orjson.dumps(line) + b"\n" for line in lines)


@pytest.mark.parametrize("escape", ["relative", "absolute"])
def test_a_call_id_never_reads_a_file_outside_tool_results(
    transcripts: Transcripts, owner: tuple[str, str], tmp_path: Path, escape: str
) -> None:
    account, workspace = owner
    secret = "the secret outside tool-results"
    (tmp_path / "secret.txt").write_text(secret)
    project = tmp_path / "projects" / "p"
    session_id = "0b6f1d7e-5c1a-4b7e-9a55-3f0f4b1d2c3e"
    results = project / session_id / "tool-results"
    results.mkdir(parents=True)
    # from tool-results/: ../../../../secret is tmp_path/secret; an absolute id names it outright
    call_id = "../../../../secret" if escape == "relative" else str(tmp_path / "secret")
    assert (results / f"{call_id}.txt").resolve() == (tmp_path / "secret.txt").resolve()
    preview = "<persisted-output>\nOutput too large (2MB). Preview:\nfirst lines\n</persisted-output>"
    log = project / f"{session_id}.jsonl"
    log.write_bytes(claude_lines(session_id, call_id, preview, {"stdout": "what the CLI drew", "stderr": ""}))
    summary = import_paths(transcripts, [tmp_path / "projects"], account_id=account, workspace_id=workspace)
    assert summary.skipped == [] and summary.agents == 1
    stored = everything(transcripts, account, workspace)
    assert secret not in orjson.dumps(list(stored.values())).decode()
    (part,) = [p for m in stored.values() for p in m["parts"] if p.get("toolCallId") == call_id]
    assert part["output"] == "what the CLI drew"  # the fallback, as when the saved file is missing


def test_a_dangling_agent_file_is_skipped_and_its_neighbour_imported(
    transcripts: Transcripts, owner: tuple[str, str], tmp_path: Path
) -> None:
    account, workspace = owner
    shutil.copy(CLAUDE_FILE, tmp_path / CLAUDE_FILE.name)
    (tmp_path / "agent-x.jsonl").symlink_to(tmp_path / "gone.jsonl")  # a link to a file that is not there
    for paths in ([tmp_path], [tmp_path / CLAUDE_FILE.name]):
        summary = import_paths(transcripts, paths, account_id=account, workspace_id=workspace)
        assert [(Path(path).name, reason.split(":")[0]) for path, reason in summary.skipped] == [
            ("agent-x.jsonl", "cannot be read")
        ]
    (agent,) = transcripts.list_agents(account, workspace)["agents"]
    assert agent["title"] == "Hey" and transcripts.messages(account, agent["id"])["messages"]



def conversations(t: Transcripts, account: str, workspace: str) -> dict[tuple[str, str | None], Json]:
    """Every conversation of the workspace (agents and subagents), with its write counter and dates."""
    found = {}
    for agent in t.list_agents(account, workspace)["agents"]:
        for call in [None, *t.agent(account, agent["id"])["subagents"]]:
            conv = t.conversation(account, agent["id"], call)
            found[(agent["id"], call)] = {"seq": conv.seq, "created": conv.created_at, "updated": conv.updated_at}
    return found


@pytest.mark.parametrize(
    "sources",
    [[SUBAGENTS / "turn-2.jsonl", SUBAGENTS / "turn-2"], [CODEX_FILE]],
    ids=["claude-code-with-subagent", "codex"],
)
def test_an_unchanged_session_imported_from_another_path_writes_nothing(
    transcripts: Transcripts, owner: tuple[str, str], tmp_path: Path, sources: list[Path]
) -> None:
    account, workspace = owner
    main = sources[0]
    raw = main.read_bytes().splitlines(keepends=True)
    here, elsewhere = tmp_path / "here", tmp_path / "a copy elsewhere"
    for folder in (here, elsewhere):
        folder.mkdir()
        for source in sources[1:]:
            shutil.copytree(source, folder / source.name)
        (folder / main.name).write_bytes(b"".join(raw[: len(raw) // 2]))  # the session so far
    first = import_paths(transcripts, [here], account_id=account, workspace_id=workspace)
    assert first.agents == 1 and first.messages > 0
    before, stored = conversations(transcripts, account, workspace), everything(transcripts, account, workspace)
    told: list[str] = []
    transcripts.listeners.append(told.append)  # each write wakes live followers through these
    again = import_paths(transcripts, [elsewhere], account_id=account, workspace_id=workspace)
    assert (again.agents, again.messages, again.parts, again.unchanged, again.skipped) == (0, 0, 0, 1, [])
    assert told == []  # no message, title or date written: no follower receives anything
    assert conversations(transcripts, account, workspace) == before  # the same agent; no write counted
    assert everything(transcripts, account, workspace) == stored
    # the copy elsewhere grows: it is no longer what was imported, so it is a session of its own
    # (a derived id), told in the summary; the first session is left as it was
    (elsewhere / main.name).write_bytes(b"".join(raw))
    grown = import_paths(transcripts, [elsewhere], account_id=account, workspace_id=workspace)
    assert grown.agents == 1 and grown.messages > 0
    assert [(path, reason.split(",")[0]) for path, _, reason in grown.foreign] == [
        (str((elsewhere / main.name).resolve()), f"claims session {grown.foreign[0][1]}")
    ]
    now = conversations(transcripts, account, workspace)
    assert {k: now[k] for k in before} == before and len(now) > len(before)  # the first: not written, not redated
    assert {mid: m for mid, m in everything(transcripts, account, workspace).items() if mid in stored} == stored
    assert len(transcripts.list_agents(account, workspace)["agents"]) == 2
    # importing both again writes nothing, and the first copy still writes nothing
    told.clear()
    for folder in (elsewhere, here):
        again = import_paths(transcripts, [folder], account_id=account, workspace_id=workspace)
        assert (again.messages, again.foreign) == (0, [])
    assert told == []


FORGED = {"claude-code": (CLAUDE_FILE, b" the "), "codex": (CODEX_FILE, b" the ")}


@pytest.mark.parametrize("name", list(FORGED))
def test_a_log_claiming_another_sessions_id_never_rewrites_it(
    transcripts: Transcripts, owner: tuple[str, str], tmp_path: Path, name: str
) -> None:
    """The red team's case: a real log copied to another path with some text changed (same
    session id, same line ids) is imported after the real one. The real session is untouched;
    the forged one is a session of its own, and the summary says which file claimed what."""
    account, workspace = owner
    source, word = FORGED[name]
    real, forged = tmp_path / "mine" / source.name, tmp_path / "theirs" / source.name
    for path in (real, forged):
        path.parent.mkdir()
    shutil.copy(source, real)
    raw = source.read_bytes()
    assert raw.count(word) > 0
    forged.write_bytes(raw.replace(word, b" forgedtext "))
    first = import_paths(transcripts, [real], account_id=account, workspace_id=workspace)
    assert first.agents == 1 and first.foreign == []
    (agent,) = transcripts.list_agents(account, workspace)["agents"]
    stored, dates = everything(transcripts, account, workspace), conversations(transcripts, account, workspace)
    second = import_paths(transcripts, [forged], account_id=account, workspace_id=workspace)
    assert second.agents == 1 and second.messages > 0
    ((path, claimed, reason),) = second.foreign
    assert path == str(forged.resolve()) and claimed == group_key(find_groups([real])[0][0])
    assert "first imported from another file" in reason
    after = everything(transcripts, account, workspace)
    assert {mid: after[mid] for mid in stored} == stored  # every message of the first as it was
    now = conversations(transcripts, account, workspace)
    assert {k: now[k] for k in dates} == dates
    others = [a for a in transcripts.list_agents(account, workspace)["agents"] if a["id"] != agent["id"]]
    assert len(others) == 1
    theirs = transcripts.messages(account, others[0]["id"])["messages"]
    assert any("forgedtext" in orjson.dumps(m).decode() for m in theirs)
    assert not any("forgedtext" in orjson.dumps(m).decode() for m in stored.values())
    # again, both: nothing written, nothing claimed again
    for path in (forged, real):
        again = import_paths(transcripts, [path], account_id=account, workspace_id=workspace)
        assert (again.messages, again.foreign) == (0, [])
    assert everything(transcripts, account, workspace) == after


def test_hashes_an_older_importer_kept_with_the_file_are_still_read(
    transcripts: Transcripts, owner: tuple[str, str], tmp_path: Path
) -> None:
    """Before the session's own record, a file's record held the hashes: a store written then,
    imported again from the same path, still writes nothing it already holds."""
    account, workspace = owner
    log = tmp_path / CODEX_FILE.name
    shutil.copy2(CODEX_FILE, log)
    assert import_paths(transcripts, [log], account_id=account, workspace_id=workspace).messages > 0
    ((group,), _) = find_groups([log])
    session = session_source(group_key(group))
    file_state = orjson.loads(transcripts.import_state(account, workspace, str(log.resolve())) or "{}")
    hashes = orjson.loads(transcripts.import_state(account, workspace, session) or "{}")["hashes"]
    older = {**file_state, "hashes": hashes}  # as importers before the session record saved it
    transcripts.save_import_state(account, workspace, str(log.resolve()), orjson.dumps(older).decode())
    transcripts.save_import_state(account, workspace, session, "{}")
    os.utime(log, ns=(time.time_ns(), time.time_ns()))  # touched: parsed again
    told: list[str] = []
    transcripts.listeners.append(told.append)
    again = import_paths(transcripts, [log], account_id=account, workspace_id=workspace)
    assert (again.messages, again.unchanged, told) == (0, 1, [])
