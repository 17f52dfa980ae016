"""What a check on real logs found missing in the Claude Code and Codex importers (issue 19).

Each test imports real files (tests/data/transcripts, see its SOURCES.md) or lines shaped as
Claude Code writes them, into a workspace of its own, on both backends, and compares what is
stored with a reading of the raw file made here.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest

from foldline.importers import import_paths
from foldline.importers.importer import NO_CONVERSATION
from foldline.service import Transcripts

DATA = Path(__file__).parent / "data" / "transcripts"
ENTIRE = DATA / "claude-code" / "entireio__cli"
MCP_IMAGE = ENTIRE / "ad" / "a8171575ce" / "0" / "full.jsonl"  # an MCP image, an agent_progress-only subagent
API_ERRORS = ENTIRE / "b0" / "2936744f3b" / "0" / "full.jsonl"
MICROCOMPACT = ENTIRE / "d5" / "99f72ee73a" / "0" / "full.jsonl"
VIEW_IMAGE = DATA / "codex" / "EntityProcess__agentv" / "f4" / "771ece9d37" / "0" / "full.jsonl"
TOOL_SEARCH = DATA / "codex" / "EntityProcess__agentv" / "1f" / "4427577930" / "1" / "full.jsonl"
AGENT_MESSAGES = DATA / "codex" / "entireio__entire-graph" / "37" / "05cde00da0" / "0" / "full.jsonl"
SHORT = DATA / "claude-code" / "jnarowski__agentcmd" / "full-session.jsonl"
VIEW_CODEX = "rollout-2025-09-25T08-02-05-0199812e-64f0-7f73-91fc-095dda01c36e.jsonl"
NOTE = "<task-notification><status>completed</status></task-notification>"
Json = dict[str, Any]


@pytest.fixture
def owner(transcripts: Transcripts) -> tuple[str, str]:
    account = transcripts.create_account("importer")["id"]
    return account, transcripts.create_workspace("sessions", [account])["id"]


def raw_lines(path: Path) -> list[Json]:
    return [orjson.loads(raw) for raw in path.read_bytes().splitlines() if raw.strip()]


def imported(t: Transcripts, owner: tuple[str, str], path: Path) -> tuple[Json, dict[str | None, list[Json]]]:
    """Import one file; its only agent, and its messages by subagent call (None: the agent's own)."""
    account, workspace = owner
    summary = import_paths(t, [path], account_id=account, workspace_id=workspace)
    assert summary.skipped == []
    (agent,) = t.list_agents(account, workspace)["agents"]
    calls = [None, *t.agent(account, agent["id"])["subagents"]]
    return agent, {call: t.messages(account, agent["id"], call=call)["messages"] for call in calls}


def parts(messages: list[Json]) -> list[Json]:
    return [p for m in messages for p in m["parts"]]


def tool(messages: list[Json], call_id: str) -> tuple[Json, list[Json]]:
    """A call's part and the parts after it in its message."""
    for m in messages:
        for i, p in enumerate(m["parts"]):
            if p.get("toolCallId") == call_id:
                return p, m["parts"][i + 1 :]
    raise AssertionError(f"no call {call_id}")


# -- Codex -------------------------------------------------------------------------------------


def test_codex_compactions_are_marked_once_each(transcripts: Transcripts, owner: tuple[str, str]) -> None:
    raw = raw_lines(VIEW_IMAGE)
    compacted = [d for d in raw if d["type"] == "compacted"]
    assert len(compacted) == 2 and all(d["payload"]["message"] == "" for d in compacted)
    _, convs = imported(transcripts, owner, VIEW_IMAGE)
    markers = [m for m in convs[None] if m["metadata"].get("compaction") is True]
    assert [m["role"] for m in markers] == ["system", "system"]
    assert [m["metadata"]["timestamp"] for m in markers] == [d["timestamp"] for d in compacted]
    assert all(parts([m])[0]["text"] == "Context compacted" for m in markers)


def test_codex_view_image_outputs_are_images(transcripts: Transcripts, owner: tuple[str, str]) -> None:
    raw = raw_lines(VIEW_IMAGE)
    outputs = [d["payload"] for d in raw if d["payload"].get("type") == "function_call_output"]
    images = {p["call_id"]: p["output"] for p in outputs if isinstance(p["output"], list)}
    assert len(images) == 4
    _, convs = imported(transcripts, owner, VIEW_IMAGE)
    for call_id, items in images.items():
        part, after = tool(convs[None], call_id)
        assert part["state"] == "output-available"
        assert "base64" not in orjson.dumps(part["output"]).decode()
        (url,) = [i["image_url"] for i in items]
        assert after[0] == {**after[0], "type": "file", "mediaType": "image/png", "url": url}


def test_codex_tool_search_is_a_call_with_its_output(transcripts: Transcripts, owner: tuple[str, str]) -> None:
    raw = [d["payload"] for d in raw_lines(TOOL_SEARCH) if d["type"] == "response_item"]
    (call,) = [p for p in raw if p["type"] == "tool_search_call"]
    (found,) = [p for p in raw if p["type"] == "tool_search_output"]
    _, convs = imported(transcripts, owner, TOOL_SEARCH)
    part, _ = tool(convs[None], call["call_id"])
    assert (part["toolName"], part["input"]) == ("tool_search", call["arguments"])
    assert part["output"] == {"tools": found["tools"]}


def test_codex_agents_md_is_not_a_prompt_even_when_it_holds_one(
    transcripts: Transcripts, owner: tuple[str, str]
) -> None:
    raw = raw_lines(TOOL_SEARCH)
    typed = [d["payload"]["message"].strip() for d in raw if d["payload"].get("type") == "user_message"]
    block = next(
        c["text"] for d in raw if d["payload"].get("role") == "user"
        for c in d["payload"]["content"] if c["text"].startswith("# AGENTS.md")
    )  # fmt: skip
    assert any(prompt in block for prompt in typed)  # the trap: a short prompt inside the block
    agent, convs = imported(transcripts, owner, TOOL_SEARCH)
    shown = {p["text"].strip(): m["metadata"].get("injected") is True
             for m in convs[None] if m["role"] == "user" for p in m["parts"] if p["type"] == "text"}  # fmt: skip
    assert shown[block.strip()] is True
    assert all(shown[prompt] is False for prompt in typed)
    assert agent["title"].split()[:6] == typed[0].split()[:6]  # the first typed prompt, not the block


def test_codex_reports_between_agents_are_kept(transcripts: Transcripts, owner: tuple[str, str]) -> None:
    raw = [d["payload"] for d in raw_lines(AGENT_MESSAGES)
           if d["type"] == "response_item" and d["payload"]["type"] == "agent_message"]  # fmt: skip
    assert len(raw) == 25
    _, convs = imported(transcripts, owner, AGENT_MESSAGES)
    kept = [m for m in convs[None] if m["metadata"].get("lineType") == "agent_message"]
    assert [m["metadata"]["author"] for m in kept] == [p["author"] for p in raw]
    said = sum(len(c["text"]) for p in raw for c in p["content"] if c["type"] == "input_text")
    assert sum(len(p["text"]) for p in parts(kept)) == said == 18727
    assert all(m["metadata"]["notice"] == f"Message from {m['metadata']['author']}" for m in kept)


# -- Claude Code -------------------------------------------------------------------------------


def test_an_mcp_image_in_a_tool_result_is_an_image(transcripts: Transcripts, owner: tuple[str, str]) -> None:
    results = [
        b for d in raw_lines(MCP_IMAGE) if d["type"] == "user" and isinstance(d["message"]["content"], list)
        for b in d["message"]["content"] if b.get("type") == "tool_result" and isinstance(b.get("content"), list)
        and any(i.get("type") == "image" for i in b["content"])
    ]  # fmt: skip
    (result,) = results
    (image,) = [i["source"] for i in result["content"] if i["type"] == "image"]
    _, convs = imported(transcripts, owner, MCP_IMAGE)
    part, after = tool(convs[None], result["tool_use_id"])
    assert "base64" not in orjson.dumps(part["output"]).decode()
    assert part["output"].startswith("Successfully fetched 1 image.\nImage: image.png\n[image 1: image/png")
    assert after[0]["type"] == "file" and after[0]["url"] == f"data:image/png;base64,{image['data']}"


def test_a_subagent_known_only_from_progress_lines_is_shown_under_its_call(
    transcripts: Transcripts, owner: tuple[str, str]
) -> None:
    progress = [d for d in raw_lines(MCP_IMAGE) if d["type"] == "progress" and d["data"]["type"] == "agent_progress"]
    (call,) = {d["parentToolUseID"] for d in progress}
    inner = [d["data"]["message"] for d in progress]
    blocks = [b for m in inner if m["type"] == "assistant" for b in m["message"]["content"]]
    uses = {b["id"] for b in blocks if b["type"] == "tool_use"}
    _, convs = imported(transcripts, owner, MCP_IMAGE)
    assert call in convs
    calls = {p["toolCallId"]: p for p in parts(convs[call]) if "toolCallId" in p}
    assert set(calls) == uses and all(p["state"] == "output-available" for p in calls.values())
    assert not uses & {p.get("toolCallId") for p in parts(convs[None])}  # shown once, under the call


def test_api_retries_are_quiet_notices(transcripts: Transcripts, owner: tuple[str, str]) -> None:
    raw = [d for d in raw_lines(API_ERRORS) if d.get("subtype") == "api_error"]
    assert len(raw) == 29
    _, convs = imported(transcripts, owner, API_ERRORS)
    notices = [m for m in convs[None] if m["metadata"].get("notice") == "API retry"]
    assert [m["metadata"]["uuid"] for m in notices] == [d["uuid"] for d in raw]
    assert all(m["role"] == "system" for m in notices)
    first = parts(notices[:1])[0]["text"]
    assert first == f"API error 529: Overloaded; retry 1 of 10 in {raw[0]['retryInMs'] / 1000:.1f} s"


def test_a_microcompaction_is_marked_like_a_compaction(transcripts: Transcripts, owner: tuple[str, str]) -> None:
    (raw,) = [d for d in raw_lines(MICROCOMPACT) if d.get("subtype") == "microcompact_boundary"]
    _, convs = imported(transcripts, owner, MICROCOMPACT)
    (marker,) = [m for m in convs[None] if m["metadata"].get("subtype") == "microcompact_boundary"]
    assert marker["metadata"]["compaction"] is True
    assert marker["metadata"]["microcompactMetadata"] == raw["microcompactMetadata"]


def claude_line(base: Json, **fields: Any) -> bytes:
    return orjson.dumps({**base, **fields}) + b"\n"


@pytest.fixture
def session(tmp_path: Path) -> tuple[Path, Json]:
    """A copy of a real short Claude Code session in a project folder, and its envelope."""
    project = tmp_path / "project"
    project.mkdir()
    log = project / SHORT.name
    shutil.copy(SHORT, log)
    first = next(d for d in raw_lines(SHORT) if d.get("type") == "user")
    keys = ("sessionId", "cwd", "version", "gitBranch", "userType", "isSidechain")
    return log, {key: first[key] for key in keys if key in first}


def test_queued_prompts_are_prompts_where_they_were_typed(
    transcripts: Transcripts, owner: tuple[str, str], session: tuple[Path, Json]
) -> None:
    log, base = session
    with log.open("ab") as f:
        f.write(claude_line(base, type="attachment", uuid="q-1", timestamp="2025-10-10T10:00:00.000Z",
                            attachment={"type": "queued_command", "commandMode": "prompt",
                                        "origin": {"kind": "human"}, "prompt": "also fix the README"}))  # fmt: skip
        f.write(claude_line(base, type="attachment", uuid="q-2", timestamp="2025-10-10T10:00:01.000Z",
                            attachment={"type": "queued_command", "commandMode": "task-notification",
                                        "prompt": NOTE}))  # fmt: skip
    _, convs = imported(transcripts, owner, log.parent)
    typed = [m for m in convs[None] if m["metadata"].get("queued")]
    assert [(m["role"], m["parts"][0]["text"], m["metadata"].get("notice")) for m in typed] == [
        ("user", "also fix the README", None),
        ("user", NOTE, "Task notification"),
    ]
    assert convs[None][-2:] == typed  # where they were typed: after what came before them


def test_task_notifications_are_not_prompts_and_a_custom_title_names_the_session(
    transcripts: Transcripts, owner: tuple[str, str], tmp_path: Path, session: tuple[Path, Json]
) -> None:
    log, base = session
    body = log.read_bytes()
    note = "<task-notification><task-id>b1</task-id><status>completed</status></task-notification>"
    first = claude_line(base, type="user", uuid="n-1", timestamp="2025-10-10T09:00:00.000Z",
                        origin={"kind": "task-notification"}, message={"role": "user", "content": note})  # fmt: skip
    titles = [orjson.dumps({"type": "custom-title", "customTitle": name, "sessionId": base["sessionId"]}) + b"\n"
              for name in ("first name", "Release checklist")]  # fmt: skip
    log.write_bytes(first + body + b"".join(titles))
    agent, convs = imported(transcripts, owner, log.parent)
    assert agent["title"] == "Release checklist"  # the last one a person gave
    (shown,) = [m for m in convs[None] if m["metadata"].get("uuid") == "n-1"]
    assert shown["metadata"]["notice"] == "Task notification" and shown["parts"][0]["text"] == note


def persisted_session(project: Path, base: Json, whole: str, stdout: str) -> Path:
    """A session whose one Bash result was persisted: the preview in the log, ``stdout`` capped."""
    log = project / f"{base['sessionId']}.jsonl"
    heading = f"<persisted-output>\nOutput too large ({len(whole) // 1024}KB). Full output saved to: x.txt"
    preview = f"{heading}\n\n{whole[:2000]}"
    lines = [
        claude_line(base, type="user", uuid="u-1", timestamp="2026-03-01T10:00:00.000Z",
                    message={"role": "user", "content": "list everything"}),
        claude_line(base, type="assistant", uuid="a-1", timestamp="2026-03-01T10:00:01.000Z",
                    message={"id": "msg_1", "role": "assistant", "model": "claude-opus-4-6", "content": [
                        {"type": "tool_use", "id": "toolu_big", "name": "Bash", "input": {"command": "ls -R /"}}]}),
        claude_line(base, type="user", uuid="u-2", timestamp="2026-03-01T10:00:02.000Z",
                    message={"role": "user", "content": [
                        {"type": "tool_result", "tool_use_id": "toolu_big", "content": preview}]},
                    toolUseResult={"stdout": stdout, "stderr": "", "interrupted": False,
                                   "persistedOutputSize": len(whole.encode())}),
    ]  # fmt: skip
    log.write_bytes(b"".join(lines))
    return log


def test_a_persisted_output_is_read_whole_or_marked_truncated(
    transcripts: Transcripts, owner: tuple[str, str], tmp_path: Path, session: tuple[Path, Json]
) -> None:
    _, base = session
    whole = "".join(f"/usr/lib/file-{n}.so\n" for n in range(4000))  # about 90 KB
    capped = whole[:30000]
    project = tmp_path / "persisted"
    project.mkdir()
    log = persisted_session(project, base, whole, capped)
    _, convs = imported(transcripts, owner, project)
    part, _ = tool(convs[None], "toolu_big")
    assert part["output"] == capped  # what the log has, and it says it is not all
    assert part["toolMetadata"]["claudeCode"]["truncated"] is True
    assert part["toolMetadata"]["claudeCode"]["persistedOutputSize"] == len(whole.encode())

    sidecar = log.with_suffix("") / "tool-results"
    sidecar.mkdir(parents=True)
    (sidecar / "toolu_big.txt").write_text(whole)
    account, workspace = owner
    other = transcripts.create_workspace("again", [account])["id"]
    import_paths(transcripts, [project], account_id=account, workspace_id=other)
    (agent,) = transcripts.list_agents(account, other)["agents"]
    part, _ = tool(transcripts.messages(account, agent["id"])["messages"], "toolu_big")
    assert part["output"] == whole and "truncated" not in part["toolMetadata"]["claudeCode"]


def test_a_file_with_no_conversation_makes_no_agent(
    transcripts: Transcripts, owner: tuple[str, str], tmp_path: Path, session: tuple[Path, Json]
) -> None:
    _, base = session
    log = tmp_path / "quiet" / f"{base['sessionId']}.jsonl"
    log.parent.mkdir()
    log.write_bytes(b"".join([
        orjson.dumps({"type": "summary", "summary": "Earlier work", "leafUuid": "elsewhere"}) + b"\n",
        orjson.dumps({"type": "file-history-snapshot", "messageId": "m1", "snapshot": {"trackedFileBackups": {}},
                      "isSnapshotUpdate": False}) + b"\n",
    ]))  # fmt: skip
    account, workspace = owner
    summary = import_paths(transcripts, [log.parent], account_id=account, workspace_id=workspace)
    assert summary.skipped == [(str(log.resolve()), NO_CONVERSATION)]
    assert (summary.agents, summary.messages) == (0, 0)
    assert transcripts.list_agents(account, workspace)["agents"] == []


def test_a_link_out_of_the_imported_folder_is_not_followed(
    transcripts: Transcripts, owner: tuple[str, str], tmp_path: Path
) -> None:
    outside = tmp_path / "someone-else"
    outside.mkdir()
    secret = outside / "private.jsonl"
    shutil.copy(SHORT, secret)
    folder = tmp_path / "imported"
    folder.mkdir()
    (folder / "link.jsonl").symlink_to(secret)
    inside = folder / "own.jsonl"
    shutil.copy(DATA / "codex" / "jnarowski__agentcmd" / VIEW_CODEX, inside)
    (folder / "link-to-own.jsonl").symlink_to(inside)  # a link that stays inside is the same file, once
    account, workspace = owner
    summary = import_paths(transcripts, [folder], account_id=account, workspace_id=workspace)
    assert summary.skipped == [] and summary.agents == 1
    (agent,) = transcripts.list_agents(account, workspace)["agents"]
    sources = {m["metadata"]["source"] for m in transcripts.messages(account, agent["id"])["messages"]}
    assert sources == {"codex"}  # the folder's own session; the linked Claude Code file was not read
