"""What an import takes from the source beyond the messages: when each session ran, whether an
old session is over, the exit codes of shell calls, and what the CLI tells the user.

The dates and outcomes run on both backends; each test imports into its own workspace.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner

from foldline.cli import main
from foldline.cli.serve import watchers
from foldline.importers import import_paths, session
from foldline.importers.session import IDLE_SECONDS
from foldline.local_account import ensure_local
from foldline.service import TURN_ENDED, Transcripts
from foldline.settings import Settings
from foldline.store import open_store

DATA = Path(__file__).parent / "data" / "transcripts"
HEY = DATA / "claude-code" / "jnarowski__agentcmd" / "full-session.jsonl"  # 2025-10-21, ends with open calls
CODEX_2025 = (
    DATA / "codex" / "jnarowski__agentcmd" / "rollout-2025-09-25T08-02-05-0199812e-64f0-7f73-91fc-095dda01c36e.jsonl"
)
SUBAGENTS = DATA / "claude-code" / "codemie-ai__codemie-code" / "incremental-subagents"  # 2026-01-07
SUBAGENT_FILE = SUBAGENTS / "turn-2" / "subagents" / "agent-a485154.jsonl"
Json = dict[str, Any]


@pytest.fixture
def owner(transcripts: Transcripts) -> tuple[str, str]:
    account = transcripts.create_account("importer")["id"]
    return account, transcripts.create_workspace("sessions", [account])["id"]


def raw_lines(path: Path) -> Iterator[Json]:
    for raw in path.read_bytes().splitlines():
        if raw.strip():
            yield orjson.loads(raw)


def store_form(stamp: str) -> str:
    """A timestamp as the store writes one: UTC, milliseconds, ``Z``."""
    moment = datetime.fromisoformat(stamp.replace("Z", "+00:00")).astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def span(path: Path) -> tuple[str, str]:
    """The first and last line's timestamps of a log, read from the file."""
    stamps = [d["timestamp"] for d in raw_lines(path) if isinstance(d.get("timestamp"), str)]
    return store_form(stamps[0]), store_form(stamps[-1])


def all_parts(t: Transcripts, account: str, agent: str) -> list[Json]:
    found = []
    for call in [None, *t.agent(account, agent)["subagents"]]:
        for m in t.messages(account, agent, call=call)["messages"]:
            found += m["parts"]
    return found


def make_idle(path: Path) -> None:
    old = time.time() - IDLE_SECONDS - 60
    os.utime(path, (old, old))


def restamped(source: Path, target: Path, last: float) -> Path:
    """A copy of a log whose line timestamps are moved so that its last line was written at ``last``."""

    def seconds(stamp: str) -> float:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()

    lines = [orjson.loads(line) for line in source.read_bytes().splitlines() if line.strip()]
    shift = last - max(seconds(d["timestamp"]) for d in lines if isinstance(d.get("timestamp"), str))
    for d in lines:
        if isinstance(d.get("timestamp"), str):
            moment = datetime.fromtimestamp(seconds(d["timestamp"]) + shift, UTC)
            d["timestamp"] = moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    target.write_bytes(b"".join(orjson.dumps(d) + b"\n" for d in lines))
    return target


# -- 1. dated by the source ----------------------------------------------------------------


def test_agents_are_dated_by_their_own_lines_and_ordered_by_last_activity(
    transcripts: Transcripts, owner: tuple[str, str], tmp_path: Path
) -> None:
    account, workspace = owner
    # the 2026 session first, the 2025 ones after: import order must not be the list's order
    for paths in ([SUBAGENTS], [HEY], [CODEX_2025]):
        assert import_paths(transcripts, paths, account_id=account, workspace_id=workspace).skipped == []
    agents = transcripts.list_agents(account, workspace)["agents"]
    spans = [span(SUBAGENTS / "turn-2.jsonl"), span(HEY), span(CODEX_2025)]
    assert [(a["created_at"], a["updated_at"]) for a in agents] == spans  # newest activity first
    assert spans[0][0].startswith("2026-") and spans[1][0].startswith("2025-10-")
    # a subagent conversation is dated by its own file
    (agent,) = [a for a in agents if a["created_at"].startswith("2026-")]
    (call,) = transcripts.agent(account, agent["id"])["subagents"]
    sub = transcripts.find_agent(account, agent["id"], call)
    assert sub is not None and (sub["created_at"], sub["updated_at"]) == span(SUBAGENT_FILE)
    # the agent read through the API says the same
    assert transcripts.agent(account, agent["id"])["updated_at"] == spans[0][1]


def test_a_grown_session_moves_its_last_activity(
    transcripts: Transcripts, owner: tuple[str, str], tmp_path: Path
) -> None:
    account, workspace = owner
    raw = HEY.read_bytes().splitlines(keepends=True)
    log = tmp_path / HEY.name
    log.write_bytes(b"".join(raw[: len(raw) // 2]))
    import_paths(transcripts, [log], account_id=account, workspace_id=workspace)
    (agent,) = transcripts.list_agents(account, workspace)["agents"]
    assert (agent["created_at"], agent["updated_at"]) == span(log)
    with log.open("ab") as f:
        f.write(b"".join(raw[len(raw) // 2 :]))
    assert import_paths(transcripts, [log], account_id=account, workspace_id=workspace).messages > 0
    (agent,) = transcripts.list_agents(account, workspace)["agents"]
    assert (agent["created_at"], agent["updated_at"]) == span(HEY)


def claude_session(session_id: str, lines: list[Json]) -> bytes:
    base = {"sessionId": session_id, "cwd": "/home/user/project", "version": "2.1.0"}
    return b"".join(orjson.dumps({**base, **line}) + b"\n" for line in lines)


def bash_call(uuid: str, message_id: str, call_id: str, stamp: str, command: str = "make") -> Json:
    block = {"type": "tool_use", "id": call_id, "name": "Bash", "input": {"command": command}}
    body = {"id": message_id, "role": "assistant", "model": "claude-test", "content": [block]}
    return {"type": "assistant", "uuid": uuid, "timestamp": stamp, "message": body}


def bash_result(uuid: str, call_id: str, stamp: str, text: str, error: bool, extra: Any) -> Json:
    block = {"type": "tool_result", "tool_use_id": call_id, "content": text, "is_error": error}
    return {
        "type": "user",
        "uuid": uuid,
        "timestamp": stamp,
        "message": {"role": "user", "content": [block]},
        "toolUseResult": extra,
    }


def prompt(uuid: str, stamp: str, text: str) -> Json:
    return {"type": "user", "uuid": uuid, "timestamp": stamp, "message": {"role": "user", "content": text}}


def test_timestamps_with_an_offset_are_stored_in_utc_milliseconds(
    transcripts: Transcripts, owner: tuple[str, str], tmp_path: Path
) -> None:
    account, workspace = owner
    lines = [
        {"type": "summary", "summary": "no timestamp on this line"},
        prompt("u-1", "2026-03-01T12:00:00.123456+02:00", "build it"),
        prompt("u-2", "2026-03-01T13:30:05Z", "and test it"),
    ]
    (tmp_path / "s.jsonl").write_bytes(claude_session("5d1c3b8e-0000-4000-8000-000000000001", lines))
    import_paths(transcripts, [tmp_path], account_id=account, workspace_id=workspace)
    (agent,) = transcripts.list_agents(account, workspace)["agents"]
    assert (agent["created_at"], agent["updated_at"]) == ("2026-03-01T10:00:00.123Z", "2026-03-01T13:30:05.000Z")


# -- 2. an old session's last calls are over ---------------------------------------------------


def open_calls(t: Transcripts, account: str, workspace: str) -> tuple[list[Json], list[Json]]:
    """The last message's tool parts still open, and those closed by the turn's end."""
    (agent,) = t.list_agents(account, workspace)["agents"]
    last = t.messages(account, agent["id"])["messages"][-1]
    tools = [p for p in last["parts"] if p["type"] == "dynamic-tool" or p["type"].startswith("tool-")]
    return [p for p in tools if p["state"] == "input-available"], [p for p in tools if p.get("errorText") == TURN_ENDED]


def test_a_session_idle_for_long_closes_the_calls_of_its_last_message(
    transcripts: Transcripts, owner: tuple[str, str], tmp_path: Path
) -> None:
    account, workspace = owner
    log = tmp_path / HEY.name
    shutil.copy(HEY, log)
    make_idle(log)
    import_paths(transcripts, [log], account_id=account, workspace_id=workspace)
    still_open, closed = open_calls(transcripts, account, workspace)
    assert still_open == [] and len(closed) == 3
    assert all(p["state"] == "output-error" and p["input"] for p in closed)  # inputs kept


def test_a_live_session_keeps_the_calls_of_its_last_message_open(
    transcripts: Transcripts, owner: tuple[str, str], tmp_path: Path
) -> None:
    account, workspace = owner
    # its last line just written, as by an agent still running (what a --watch import sees)
    log = restamped(HEY, tmp_path / HEY.name, time.time() - 5)
    import_paths(transcripts, [log], account_id=account, workspace_id=workspace)
    still_open, closed = open_calls(transcripts, account, workspace)
    assert len(still_open) == 3 and closed == []


def test_a_month_old_session_copied_today_is_not_running(
    transcripts: Transcripts, owner: tuple[str, str], tmp_path: Path
) -> None:
    """A fresh clone gives every sample a fresh file: the session's own last line says it is over."""
    account, workspace = owner
    log = tmp_path / HEY.name
    shutil.copy(HEY, log)
    os.utime(log)  # the file is new (a clone, a copy); its lines are from 2025-10-21
    import_paths(transcripts, [log], account_id=account, workspace_id=workspace)
    still_open, closed = open_calls(transcripts, account, workspace)
    assert still_open == [] and len(closed) == 3
    assert all(p["input"] for p in closed)  # inputs kept


def test_a_session_that_goes_quiet_after_its_import_has_its_calls_closed_next_time(
    transcripts: Transcripts, owner: tuple[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its file does not change again; only the clock moves past the idle time."""
    account, workspace = owner
    written = time.time() - 120
    log = restamped(HEY, tmp_path / HEY.name, written)
    os.utime(log, (written, written))  # two minutes ago: still live for a 10-minute idle time
    import_paths(transcripts, [log], account_id=account, workspace_id=workspace)
    assert len(open_calls(transcripts, account, workspace)[0]) == 3
    monkeypatch.setattr(session, "IDLE_SECONDS", 60)  # as if eight more minutes had passed
    import_paths(transcripts, [log], account_id=account, workspace_id=workspace)
    still_open, closed = open_calls(transcripts, account, workspace)
    assert still_open == [] and len(closed) == 3


def test_an_idle_codex_rollout_closes_its_last_calls_too(
    transcripts: Transcripts, owner: tuple[str, str], tmp_path: Path
) -> None:
    account, workspace = owner
    log = tmp_path / "rollout.jsonl"
    log.write_bytes(rollout([call_line("shell", "c1", {"command": ["sleep", "600"]})]))
    make_idle(log)
    import_paths(transcripts, [log], account_id=account, workspace_id=workspace)
    still_open, closed = open_calls(transcripts, account, workspace)
    assert still_open == [] and len(closed) == 1


# -- 3. exit codes ------------------------------------------------------------------------------

STAMP = "2026-02-02T10:00:00.000Z"


def envelope(kind: str, payload: Json) -> Json:
    return {"timestamp": STAMP, "type": kind, "payload": payload}


def call_line(name: str, call_id: str, args: Json) -> Json:
    item = {"type": "function_call", "name": name, "arguments": orjson.dumps(args).decode(), "call_id": call_id}
    return envelope("response_item", item)


def output_line(call_id: str, output: str) -> Json:
    return envelope("response_item", {"type": "function_call_output", "call_id": call_id, "output": output})


def exec_end(call_id: str, code: int) -> Json:
    return envelope("event_msg", {"type": "exec_command_end", "call_id": call_id, "exit_code": code})


def rollout(lines: list[Json]) -> bytes:
    meta = envelope("session_meta", {"id": "0199812e-0000-7000-8000-00000000abcd", "cwd": "/w", "cli_version": "0.1"})
    ask = envelope(
        "response_item",
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "check the build"}]},
    )
    return b"".join(orjson.dumps(line) + b"\n" for line in [meta, ask, *lines])


def stored_tools(t: Transcripts, account: str, workspace: str) -> dict[str, Json]:
    (agent,) = t.list_agents(account, workspace)["agents"]
    return {p["toolCallId"]: p for p in all_parts(t, account, agent["id"]) if "toolCallId" in p}


def codex_exit(part: Json) -> Any:
    return part.get("toolMetadata", {}).get("codex", {}).get("exit_code")


def test_codex_shell_exit_codes_are_kept_whatever_form_the_log_gives(
    transcripts: Transcripts, owner: tuple[str, str], tmp_path: Path
) -> None:
    account, workspace = owner
    denied = (
        "failed in sandbox MacosSeatbelt with execution error: sandbox denied exec error, exit code: 1, "
        "stdout: , stderr: Operation not permitted\n"
    )
    lines = [
        call_line("shell", "json-meta", {"command": ["ls", "x"]}),
        output_line("json-meta", orjson.dumps({"output": "no such file\n", "metadata": {"exit_code": 1}}).decode()),
        call_line("shell", "sandbox", {"command": ["brew", "shellenv"]}),
        output_line("sandbox", denied),
        call_line("shell_command", "heading", {"command": "make"}),
        output_line("heading", "Exit code: 2\nWall time: 0.1 seconds\nOutput:\nboom\n"),
        call_line("shell_command", "printed", {"command": "echo"}),
        output_line("printed", "Exit code: 0\nWall time: 0 seconds\nOutput:\nExit code: 9\n"),
        call_line("exec_command", "ended", {"cmd": "pytest"}),
        exec_end("ended", 3),
        output_line("ended", "Chunk ID: ab\nWall time: 0.2 seconds\nProcess exited with code 3\nOutput:\nF\n"),
        call_line("exec_command", "long", {"cmd": "npm test"}),
        output_line("long", "Chunk ID: cd\nWall time: 10 seconds\nProcess running with session ID 7\nOutput:\n"),
        call_line("write_stdin", "poll", {"session_id": 7, "chars": ""}),
        output_line("poll", "Chunk ID: ef\nWall time: 1 seconds\nProcess exited with code 4\nOutput:\nfail\n"),
        exec_end("long", 4),
        call_line("update_plan", "plan", {"plan": []}),
        output_line("plan", "Exit code: 5\n"),  # not a shell: its text is not an exit status
    ]
    (tmp_path / "rollout.jsonl").write_bytes(rollout(lines))
    import_paths(transcripts, [tmp_path], account_id=account, workspace_id=workspace)
    tools = stored_tools(transcripts, account, workspace)
    codes = {call: codex_exit(part) for call, part in tools.items()}
    assert codes == {
        "json-meta": 1,
        "sandbox": 1,
        "heading": 2,
        "printed": 0,
        "ended": 3,
        "long": 4,
        "poll": 4,
        "plan": None,
    }
    # a failed call keeps the output the model saw
    assert tools["sandbox"]["state"] == "output-available" and tools["sandbox"]["output"] == denied
    assert tools["heading"]["output"].startswith("Exit code: 2")


def test_a_real_sandbox_denial_keeps_its_exit_code(
    transcripts: Transcripts, owner: tuple[str, str], tmp_path: Path
) -> None:
    account, workspace = owner
    import_paths(transcripts, [CODEX_2025], account_id=account, workspace_id=workspace)
    denied = [
        p
        for p in stored_tools(transcripts, account, workspace).values()
        if isinstance(p.get("output"), str) and "sandbox denied exec error, exit code: " in p["output"]
    ]
    assert denied
    for part in denied:
        said = int(part["output"].split("exit code: ", 1)[1].split(",", 1)[0])
        assert part["state"] == "output-available" and codex_exit(part) == said != 0


def test_claude_bash_results_keep_their_exit_status_and_interruption(
    transcripts: Transcripts, owner: tuple[str, str], tmp_path: Path
) -> None:
    account, workspace = owner
    failed = "Exit code 127\n/bin/bash: line 1: pytest: command not found"
    quiet = {"stdout": "", "stderr": "", "interrupted": False, "isImage": False}
    lines = [
        prompt("u-1", STAMP, "run the tests"),
        bash_call("u-2", "m-1", "failed", STAMP, "pytest"),
        bash_result("u-3", "failed", STAMP, failed, True, "Error: " + failed),
        bash_call("u-4", "m-2", "stopped", STAMP, "sleep 100"),
        bash_result("u-5", "stopped", STAMP, "", False, {**quiet, "interrupted": True}),
        bash_call("u-6", "m-3", "fine", STAMP, "echo 'Exit code 3'"),
        bash_result("u-7", "fine", STAMP, "Exit code 3\n", False, {**quiet, "stdout": "Exit code 3\n"}),
        prompt("u-8", STAMP, "thanks"),
    ]
    (tmp_path / "s.jsonl").write_bytes(claude_session("5d1c3b8e-0000-4000-8000-000000000002", lines))
    import_paths(transcripts, [tmp_path], account_id=account, workspace_id=workspace)
    tools = stored_tools(transcripts, account, workspace)
    facts = {call: part.get("toolMetadata", {}).get("claudeCode", {}) for call, part in tools.items()}
    assert tools["failed"]["state"] == "output-error" and tools["failed"]["errorText"] == failed
    assert facts["failed"] == {"exitCode": 127}
    assert facts["stopped"] == {"interrupted": True, "isImage": False}
    assert "exitCode" not in facts["fine"]  # a success's own output is not an exit status


# -- 4. what --watch follows, 5. a new store -----------------------------------------------------


def test_serve_watch_names_the_folders_it_follows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "foldline.db")
    t = Transcripts(open_store(db), settings=Settings(db=db))
    local = ensure_local(t, db)
    monkeypatch.setenv("HOME", str(tmp_path / "empty-home"))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "empty-home" / ".codex"))
    assert len(watchers(t, local)) == 1  # it waits for folders to appear
    assert "no agent's session folder on this machine yet" in capsys.readouterr().out
    claude, codex = tmp_path / "home" / ".claude" / "projects", tmp_path / "codex" / "sessions"
    claude.mkdir(parents=True)
    codex.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    assert len(watchers(t, local)) == 1
    said = f"watching {claude}, {codex} for new session lines (and agents' folders made later)\n"
    assert capsys.readouterr().out == said


def test_import_watch_names_the_folders_it_follows_on_stderr(tmp_path: Path) -> None:
    folder = tmp_path / "projects"
    folder.mkdir()
    shutil.copy(HEY, folder)
    env = {**os.environ, "FOLDLINE_DB": str(tmp_path / "foldline.db")}
    command = [sys.executable, "-m", "foldline.cli", "import", "--watch", str(folder)]
    with subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as child:
        try:
            assert child.stderr is not None and child.stdout is not None
            told = [child.stderr.readline() for _ in range(2)]
            summary = child.stdout.readline()
        finally:
            child.terminate()  # the watch runs until stopped: this test's own child, by its handle
            child.wait(10)
    assert told[0].startswith("created a new store at ")
    assert told[1] == f"watching {folder.resolve()} for new session lines (Ctrl-C to stop)\n"
    assert summary.startswith("imported ")


def test_import_says_when_it_creates_a_new_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("FOLDLINE_DB", raising=False)
    runner = CliRunner()
    first = runner.invoke(main, ["import", "--json", str(HEY)])
    assert first.exit_code == 0, first.output
    made = tmp_path / "foldline.db"
    assert made.is_file()
    assert first.stderr == f"created a new store at {made}; pass --db or set FOLDLINE_DB to use another\n"
    assert orjson.loads(first.stdout)["agents"] == 1  # stdout stays the summary alone
    again = runner.invoke(main, ["import", "--json", "--db", str(made), str(HEY)])
    assert again.exit_code == 0 and again.stderr == ""


# -- 4. file changes ----------------------------------------------------------------------------

DEEP_MANIFEST = (
    DATA
    / "claude-code"
    / "daaain__claude-code-log"
    / "-src-deep-manifest"
    / "a7da6a22-facc-4fcd-8bab-f83c87862004.jsonl"
)


def test_a_write_over_a_file_keeps_its_patch_and_an_edit_does_not_repeat_its_input(
    transcripts: Transcripts, owner: tuple[str, str]
) -> None:
    account, workspace = owner
    import_paths(transcripts, [DEEP_MANIFEST], account_id=account, workspace_id=workspace)
    parts = [
        p
        for a in transcripts.list_agents(account, workspace)["agents"]
        for p in all_parts(transcripts, account, a["id"])
    ]
    writes = [p for p in parts if p["type"] == "tool-Write"]
    patched = [p for p in writes if "structuredPatch" in p.get("toolMetadata", {}).get("claudeCode", {})]
    logged = [
        d["toolUseResult"]["structuredPatch"]
        for d in raw_lines(DEEP_MANIFEST)
        if isinstance(d.get("toolUseResult"), dict) and d["toolUseResult"].get("type") == "update"
    ]
    assert len(patched) == len(logged) == 2  # the two writes over an existing file; the third made a new one
    assert [p["toolMetadata"]["claudeCode"]["structuredPatch"] for p in patched] == logged
    edits = [p for p in parts if p["type"] == "tool-Edit"]
    assert edits and not any("structuredPatch" in p.get("toolMetadata", {}).get("claudeCode", {}) for p in edits)


# -- 5. titles ----------------------------------------------------------------------------------

VIEWER = DATA / "claude-code" / "d-kimuson__claude-code-viewer" / "fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"


def main_title(transcripts: Transcripts, owner: tuple[str, str], path: Path) -> str | None:
    account, workspace = owner
    import_paths(transcripts, [path], account_id=account, workspace_id=workspace)
    (agent,) = transcripts.list_agents(account, workspace)["agents"]
    title: str | None = agent["title"]
    return title


def test_a_summary_of_another_session_is_not_the_title(transcripts: Transcripts, owner: tuple[str, str]) -> None:
    """Claude Code copies other sessions' summary lines into a file: their leafUuid is not one of its lines."""
    lines = list(raw_lines(VIEWER))
    (other,) = [d for d in lines if d.get("type") == "summary"]
    assert other["leafUuid"] not in {d.get("uuid") for d in lines}
    title = main_title(transcripts, owner, VIEWER)
    assert title != other["summary"]
    # The session opens with a slash command (/orchestrator); the first prompt typed after it is the title.
    assert title == "Thanks! Please update CLAUDE.md for current changes"


def test_a_summary_of_this_session_is_its_title(
    transcripts: Transcripts, owner: tuple[str, str], tmp_path: Path
) -> None:
    lines = list(raw_lines(VIEWER))
    leaf = [d["uuid"] for d in lines if d.get("type") == "assistant" and not d.get("isSidechain")][-1]
    own = {"type": "summary", "summary": "Viewer setup, summed up", "leafUuid": leaf}
    log = tmp_path / VIEWER.name
    log.write_bytes(b"".join(orjson.dumps(d) + b"\n" for d in [own, *lines]))
    assert main_title(transcripts, owner, log) == "Viewer setup, summed up"


def test_importing_a_session_again_keeps_a_later_write_as_the_last_activity(
    transcripts: Transcripts, owner: tuple[str, str], tmp_path: Path
) -> None:
    """A message written through the API after the session's last line is the agent's last
    activity; importing the same session again (from a copy elsewhere) writes nothing and
    must not date the agent back to the session's end."""
    account, workspace = owner
    import_paths(transcripts, [HEY], account_id=account, workspace_id=workspace)
    (agent,) = transcripts.list_agents(account, workspace)["agents"]
    message = {"id": "8f0e7c2a-1b3d-4e5f-9a6b-7c8d9e0f1a2b", "role": "user", "parts": [{"type": "text", "text": "hi"}]}
    transcripts.put_message(account, agent["id"], message["id"], message)
    written = transcripts.agent(account, agent["id"])
    assert written["updated_at"] > span(HEY)[1] and written["live"]

    copy = tmp_path / "again"
    copy.mkdir()
    shutil.copy(HEY, copy / HEY.name)
    assert import_paths(transcripts, [copy], account_id=account, workspace_id=workspace).messages == 0
    again = transcripts.agent(account, agent["id"])
    assert (again["created_at"], again["updated_at"], again["live"]) == (span(HEY)[0], written["updated_at"], True)
