"""Gemini CLI: the real chat JSON documents, an API history, and the 2026 JSONL form (see SOURCES.md).

Counts are made here from the raw files, not by the importer's code.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import pytest
from format_checks import (
    DATA,
    PIXEL,
    agents,
    check_growth,
    check_image_is_a_file_part,
    check_no_conversation,
    check_not_taken_for,
    check_odd_shapes,
    check_reimport_writes_nothing,
    check_watch_follows_rewrites,
    counts,
    formats_of,
    imported,
    tool_parts,
    total_usage,
)

from foldline.service import Transcripts

GEMINI = DATA / "gemini-cli"
DOCUMENTS = sorted(p for p in GEMINI.rglob("*") if p.is_file() and p.name != "trajectory.json")
HISTORY = GEMINI / "google-gemini__gemini-cli" / "trajectory.json"
POMODORO = GEMINI / "yoavf__ai-sessions" / "gemini-cli-pomodoro-timer.json"
Json = dict[str, Any]


def raw_counts(document: Json) -> Json:
    calls = [c for m in document["messages"] if m["type"] == "gemini" for c in m.get("toolCalls") or []]
    return {
        "prompts": sum(1 for m in document["messages"] if m["type"] == "user"),
        "calls": len(calls),
        "outputs": sum(1 for c in calls if c.get("result")),
    }


def raw_usage(document: Json) -> Json:
    tokens = [m["tokens"] for m in document["messages"] if m["type"] == "gemini" and m.get("tokens")]
    return {
        "inputTokens": sum(t["input"] + t.get("tool", 0) for t in tokens),
        "outputTokens": sum(t["output"] + t.get("thoughts", 0) for t in tokens),
        "cacheReadTokens": sum(t["cached"] for t in tokens),
    }


def only_agent(t: Transcripts, account: str, workspace: str) -> list[Json]:
    (agent,) = agents(t, account, workspace)
    return list(t.messages(account, agent["id"])["messages"])


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda p: p.parent.name + "/" + p.name)
def test_chat_documents_match_the_raw_file(transcripts: Transcripts, path: Path) -> None:
    document = json.loads(path.read_text())
    account, workspace, summary = imported(transcripts, [path])
    assert summary.skipped == [] and summary.agents == 1
    messages = only_agent(transcripts, account, workspace)
    assert counts(messages) == raw_counts(document)
    assert total_usage(messages) == raw_usage(document)
    notices = [m for m in document["messages"] if m["type"] in ("info", "error", "warning")]
    assert len([m for m in messages if m["role"] == "system"]) == len(notices)
    models = {m["model"] for m in document["messages"] if m["type"] == "gemini"}
    assert {m["metadata"].get("model") for m in messages if m["role"] == "assistant"} == models
    thoughts = sum(len(m.get("thoughts") or []) for m in document["messages"])
    assert sum(1 for m in messages for p in m["parts"] if p["type"] == "reasoning") == thoughts
    (agent,) = agents(transcripts, account, workspace)
    assert agent["created_at"] == min(m["timestamp"] for m in document["messages"])


def test_a_failed_call_is_an_error_with_the_message_the_model_saw(transcripts: Transcripts) -> None:
    path = GEMINI / "BrianV1981__aim" / "matrix_pro.json"
    document = json.loads(path.read_text())
    failed = [c for m in document["messages"] for c in m.get("toolCalls") or [] if c["status"] == "error"]
    account, workspace, _ = imported(transcripts, [path])
    parts = {p["toolCallId"]: p for p in tool_parts(only_agent(transcripts, account, workspace))}
    for call in failed:
        part = parts[call["id"]]
        assert part["state"] == "output-error"
        assert part["errorText"] == call["result"][0]["functionResponse"]["response"]["error"]


def test_an_api_history_pairs_calls_by_id(transcripts: Transcripts) -> None:
    contents = json.loads(HISTORY.read_text())
    calls = [p["functionCall"] for c in contents for p in c["parts"] if "functionCall" in p]
    answered = {p["functionResponse"]["id"] for c in contents for p in c["parts"] if "functionResponse" in p}
    account, workspace, summary = imported(transcripts, [HISTORY])
    assert summary.skipped == []
    parts = tool_parts(only_agent(transcripts, account, workspace))
    assert [p["toolCallId"] for p in parts] == [c["id"] for c in calls]
    with_output = {p["toolCallId"] for p in parts if p["state"] in ("output-available", "output-error")
                   and "turn ended" not in p.get("errorText", "")}  # fmt: skip
    assert with_output == answered & {c["id"] for c in calls}
    (agent,) = agents(transcripts, account, workspace)
    mtime = datetime.fromtimestamp(HISTORY.stat().st_mtime, tz=UTC).isoformat(timespec="milliseconds")
    assert agent["created_at"] == agent["updated_at"] == mtime.replace("+00:00", "Z")  # no times: the file's


def test_every_real_file_is_gemini_and_no_other_file_is() -> None:
    assert set(formats_of([GEMINI]).values()) == {"gemini-cli"}
    assert len(formats_of([GEMINI])) == len(DOCUMENTS) + 1
    check_not_taken_for("gemini-cli")


def test_importing_again_writes_nothing(transcripts: Transcripts) -> None:
    check_reimport_writes_nothing(transcripts, [GEMINI])


def test_a_rewritten_document_writes_only_what_changed(transcripts: Transcripts, tmp_path: Path) -> None:
    document = json.loads(POMODORO.read_text())
    stages = []
    for end in (6, 12, len(document["messages"])):
        stages.append(json.dumps({**document, "messages": document["messages"][:end]}, indent=2).encode())
    check_growth(transcripts, tmp_path / "session-2025-10-21T20-04-0b23371a.json", stages)


def jsonl_form(document: Json) -> list[bytes]:
    """The document as Gemini CLI 2026 writes it (the resume migration): a metadata line, then a
    record per message; each gemini message first without its tool calls and tokens, then again."""
    meta = {k: v for k, v in document.items() if k != "messages"}
    lines = [orjson.dumps(meta)]
    for m in document["messages"]:
        if m["type"] == "gemini" and m.get("toolCalls"):
            lines.append(orjson.dumps({k: v for k, v in m.items() if k not in ("toolCalls", "tokens")}))
        lines.append(orjson.dumps(m))
        lines.append(orjson.dumps({"$set": {"lastUpdated": m["timestamp"]}}))
    return [line + b"\n" for line in lines]


def test_the_jsonl_form_replays_records_by_id(transcripts: Transcripts, tmp_path: Path) -> None:
    document = json.loads(POMODORO.read_text())
    log = tmp_path / "session-2025-10-21T20-04-0b23371a.jsonl"
    log.write_bytes(b"".join(jsonl_form(document)))
    account, workspace, summary = imported(transcripts, [log])
    assert summary.skipped == [] and summary.agents == 1
    messages = only_agent(transcripts, account, workspace)
    assert len(messages) == len(document["messages"])
    assert counts(messages) == raw_counts(document)
    assert total_usage(messages) == raw_usage(document)


def test_rewind_drops_that_message_and_all_after_it(transcripts: Transcripts, tmp_path: Path) -> None:
    document = json.loads(POMODORO.read_text())
    prompts = [m for m in document["messages"] if m["type"] == "user"]
    lines = jsonl_form(document)
    lines.append(orjson.dumps({"$rewindTo": prompts[2]["id"]}) + b"\n")
    retyped = {"id": "retyped-prompt", "timestamp": "2025-10-21T20:09:00.000Z", "type": "user", "content": "start over"}
    lines.append(orjson.dumps(retyped) + b"\n")
    log = tmp_path / "session-2025-10-21T20-04-0b23371a.jsonl"
    log.write_bytes(b"".join(lines))
    account, workspace, _ = imported(transcripts, [log])
    messages = only_agent(transcripts, account, workspace)
    kept = document["messages"][: document["messages"].index(prompts[2])]
    assert len(messages) == len(kept) + 1
    assert messages[-1]["parts"] == [{"type": "text", "text": "start over", "state": "done"}]
    assert counts(messages[:-1]) == raw_counts({"messages": kept})


def test_a_grown_jsonl_log_adds_only_what_is_new(transcripts: Transcripts, tmp_path: Path) -> None:
    lines = jsonl_form(json.loads(POMODORO.read_text()))
    cut = len(lines) // 2
    stages = [b"".join(lines[:cut]), b"".join(lines)]
    check_growth(transcripts, tmp_path / "session-2025-10-21T20-04-0b23371a.jsonl", stages)


def test_a_document_that_breaks_off_imports_what_is_readable(transcripts: Transcripts, tmp_path: Path) -> None:
    document = json.loads(POMODORO.read_text())
    raw = json.dumps(document, indent=2).encode()
    # cut in the middle of the 11th message's content
    at = raw.index(document["messages"][10]["id"].encode()) + 200
    log = tmp_path / "session-2025-10-21T20-04-0b23371a.json"
    log.write_bytes(raw[:at])
    account, workspace, summary = imported(transcripts, [log])
    assert summary.skipped == [] and summary.agents == 1
    messages = only_agent(transcripts, account, workspace)
    # the ten whole messages, and what was complete of the one it broke off in (its text)
    assert len(messages) == 11 and messages[10]["parts"][0]["text"] == document["messages"][10]["content"]
    assert counts(messages[:10]) == raw_counts({"messages": document["messages"][:10]})


def test_a_subagent_chat_is_under_its_session(transcripts: Transcripts, tmp_path: Path) -> None:
    document = json.loads(POMODORO.read_text())
    parent_id = document["sessionId"]
    child = json.loads((GEMINI / "entireio__cli" / "12" / "cbfeaa512b" / "0" / "full.jsonl").read_text())
    child["kind"] = "subagent"
    # Gemini CLI names a subagent's chat by its agent id, and the call that ran it carries that id
    spawner = next(c for m in document["messages"] for c in m.get("toolCalls") or [])
    spawner["agentId"] = child["sessionId"]
    chats = tmp_path / "chats"
    (chats / parent_id).mkdir(parents=True)
    (chats / f"session-2025-10-21T20-04-{parent_id[:8]}.json").write_text(json.dumps(document, indent=2))
    (chats / parent_id / f"{child['sessionId']}.jsonl").write_bytes(b"".join(jsonl_form(child)))
    account, workspace, summary = imported(transcripts, [chats / parent_id / f"{child['sessionId']}.jsonl"])
    assert summary.skipped == [] and summary.agents == 1
    (agent,) = agents(transcripts, account, workspace)
    assert transcripts.agent(account, agent["id"])["subagents"] == [spawner["id"]]
    sub = transcripts.messages(account, agent["id"], call=spawner["id"])["messages"]
    assert counts(sub) == raw_counts(child)
    assert len(transcripts.messages(account, agent["id"])["messages"]) == len(document["messages"])


@pytest.mark.parametrize("path", [*DOCUMENTS, HISTORY], ids=lambda p: p.name)
def test_fields_of_the_wrong_kind_never_stop_an_import(transcripts: Transcripts, path: Path, tmp_path: Path) -> None:
    check_odd_shapes(transcripts, path, tmp_path)


def test_a_pasted_image_is_a_file_part(transcripts: Transcripts, tmp_path: Path) -> None:
    document = json.loads(POMODORO.read_text())
    first = document["messages"][0]
    first["content"] = [{"text": first["content"]}, {"inlineData": {"mimeType": "image/png", "data": PIXEL}}]
    log = tmp_path / POMODORO.name
    log.write_text(json.dumps(document))
    account, workspace, _ = imported(transcripts, [log])
    check_image_is_a_file_part(only_agent(transcripts, account, workspace))


def test_a_session_with_no_message_yet_makes_no_agent(transcripts: Transcripts, tmp_path: Path) -> None:
    meta = {k: v for k, v in json.loads(POMODORO.read_text()).items() if k != "messages"}
    log = tmp_path / "session-2025-10-21T20-04-0b23371a.jsonl"
    log.write_bytes(orjson.dumps(meta) + b"\n")  # what Gemini CLI writes when a session starts
    check_no_conversation(transcripts, log)


def test_the_watch_follows_a_document_rewritten_whole(transcripts: Transcripts, tmp_path: Path) -> None:
    document = json.loads(POMODORO.read_text())
    stages = [json.dumps({**document, "messages": document["messages"][:end]}, indent=2).encode() for end in (6, 19)]
    (tmp_path / "chats").mkdir()
    check_watch_follows_rewrites(transcripts, tmp_path / "chats", "session-2025-10-21T20-04-0b23371a.json", stages)


def test_a_resumed_session_is_read_from_its_jsonl_only(transcripts: Transcripts, tmp_path: Path) -> None:
    document = json.loads(POMODORO.read_text())
    legacy = tmp_path / "session-2025-10-21T20-04-0b23371a.json"
    legacy.write_text(json.dumps({**document, "messages": document["messages"][:12]}, indent=2))
    legacy.with_suffix(".jsonl").write_bytes(b"".join(jsonl_form(document)))  # what resuming it wrote
    assert formats_of([tmp_path]) == {str(legacy.with_suffix(".jsonl").resolve()): "gemini-cli"}
    account, workspace, summary = imported(transcripts, [tmp_path])
    assert summary.skipped == [] and len(only_agent(transcripts, account, workspace)) == len(document["messages"])


def test_an_image_a_tool_read_is_a_file_part_after_its_call(transcripts: Transcripts, tmp_path: Path) -> None:
    document = json.loads(POMODORO.read_text())
    call = next(c for m in document["messages"] for c in m.get("toolCalls") or [])
    call["result"].append({"inlineData": {"mimeType": "image/png", "data": PIXEL}})  # read_file of a picture
    log = tmp_path / POMODORO.name
    log.write_text(json.dumps(document))
    account, workspace, _ = imported(transcripts, [log])
    messages = only_agent(transcripts, account, workspace)
    check_image_is_a_file_part(messages)
    message = next(m for m in messages if any(p.get("toolCallId") == call["id"] for p in m["parts"]))
    at = next(i for i, p in enumerate(message["parts"]) if p.get("toolCallId") == call["id"])
    assert message["parts"][at + 1]["type"] == "file"
    assert PIXEL not in json.dumps(message["parts"][at]) and "[image 1: image/png" in message["parts"][at]["output"]
