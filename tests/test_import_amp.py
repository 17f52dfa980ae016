"""Amp: the real thread document (see SOURCES.md).

Counts are made here from the raw file, not by the importer's code.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

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

AMP = DATA / "amp" / "git-ai-project__git-ai"
THREAD = AMP / "T-019ca1ce-3ae2-7686-a41e-ccc078837f8a.json"
Json = dict[str, Any]


def blocks(thread: Json, kind: str) -> list[Json]:
    return [b for m in thread["messages"] for b in m["content"] if b["type"] == kind]


def raw_counts(thread: Json) -> Json:
    calls = {b["id"] for b in blocks(thread, "tool_use")}
    results = {b["toolUseID"] for b in blocks(thread, "tool_result")}
    prompts = [m for m in thread["messages"] if m["role"] == "user" and any(b["type"] == "text" for b in m["content"])]
    return {"prompts": len(prompts), "calls": len(calls), "outputs": len(calls & results)}


def raw_usage(thread: Json) -> Json:
    usages = [m["usage"] for m in thread["messages"] if "usage" in m]
    return {
        "inputTokens": sum(u["totalInputTokens"] for u in usages),  # Amp's own sum of the three
        "outputTokens": sum(u["outputTokens"] for u in usages),
        "cacheReadTokens": sum(u["cacheReadInputTokens"] for u in usages),
    }


def stored(t: Transcripts, account: str, workspace: str) -> list[Json]:
    (agent,) = agents(t, account, workspace)
    return list(t.messages(account, agent["id"])["messages"])


def test_the_thread_matches_the_raw_file(transcripts: Transcripts) -> None:
    thread = json.loads(THREAD.read_text())
    account, workspace, summary = imported(transcripts, [THREAD])
    assert summary.skipped == [] and summary.agents == 1
    messages = stored(transcripts, account, workspace)
    assert counts(messages) == raw_counts(thread)
    assert total_usage(messages) == raw_usage(thread)
    assert {m["metadata"]["model"] for m in messages if m["role"] == "assistant"} == {"claude-opus-4-6"}
    thoughts = [b["thinking"] for b in blocks(thread, "thinking")]
    shown = [p["text"] for m in messages for p in m["parts"] if p["type"] == "reasoning"]
    assert shown == thoughts
    assert all(b["signature"] not in json.dumps(messages) for b in blocks(thread, "thinking"))
    results = {b["toolUseID"]: b["run"]["result"] for b in blocks(thread, "tool_result")}
    for part in tool_parts(messages):
        assert (part["state"], part["output"]) == ("output-available", results[part["toolCallId"]])
    (agent,) = agents(transcripts, account, workspace)
    assert agent["title"] == thread["title"]
    assert agent["created_at"] == "2026-02-28T01:12:53.221Z"  # `created`, epoch ms


def test_a_failed_or_refused_call_is_an_error(transcripts: Transcripts, tmp_path: Path) -> None:
    thread = json.loads(THREAD.read_text())
    results = blocks(thread, "tool_result")
    results[0]["run"] = {"status": "error", "error": {"message": "ENOENT: no such file"}}
    results[1]["run"] = {"status": "rejected-by-user"}
    log = tmp_path / THREAD.name
    log.write_text(json.dumps(thread))
    account, workspace, _ = imported(transcripts, [log])
    parts = {p["toolCallId"]: p for p in tool_parts(stored(transcripts, account, workspace))}
    assert parts[results[0]["toolUseID"]]["errorText"] == "ENOENT: no such file"
    assert parts[results[1]["toolUseID"]]["errorText"] == "rejected-by-user"


def test_the_thread_is_amp_and_no_other_file_is() -> None:
    assert formats_of([AMP]) == {str(THREAD.resolve()): "amp"}
    check_not_taken_for("amp")


def test_importing_again_writes_nothing(transcripts: Transcripts) -> None:
    check_reimport_writes_nothing(transcripts, [AMP])


def test_a_rewritten_thread_writes_only_what_changed(transcripts: Transcripts, tmp_path: Path) -> None:
    thread = json.loads(THREAD.read_text())
    stages = [json.dumps({**thread, "messages": thread["messages"][:end]}, indent=2).encode() for end in (2, 4, 6)]
    check_growth(transcripts, tmp_path / THREAD.name, stages)


def test_a_thread_that_breaks_off_imports_what_is_readable(transcripts: Transcripts, tmp_path: Path) -> None:
    thread = json.loads(THREAD.read_text())
    raw = json.dumps(thread, indent=2).encode()
    log = tmp_path / THREAD.name
    log.write_bytes(raw[: raw.index(b'"messageId": 4')])
    account, workspace, summary = imported(transcripts, [log])
    assert summary.skipped == [] and summary.agents == 1
    assert counts(stored(transcripts, account, workspace)) == raw_counts({"messages": thread["messages"][:4]})


@pytest.mark.parametrize("path", [THREAD], ids=lambda p: p.name)
def test_fields_of_the_wrong_kind_never_stop_an_import(transcripts: Transcripts, path: Path, tmp_path: Path) -> None:
    check_odd_shapes(transcripts, path, tmp_path)


def test_an_attached_image_is_a_file_part(transcripts: Transcripts, tmp_path: Path) -> None:
    thread = json.loads(THREAD.read_text())
    image = {"type": "image", "source": {"type": "base64", "mediaType": "image/png", "data": PIXEL}}
    thread["messages"][0]["content"].append(image)
    log = tmp_path / THREAD.name
    log.write_text(json.dumps(thread))
    account, workspace, _ = imported(transcripts, [log])
    check_image_is_a_file_part(stored(transcripts, account, workspace))


def test_a_log_that_quotes_a_thread_is_not_taken_for_one(tmp_path: Path) -> None:
    quoted = THREAD.read_text()[:3000]
    line = {"type": "user", "sessionId": "5f1c2e3a-0000-4000-8000-000000000001", "uuid": "u-1",
            "message": {"role": "user", "content": f"why does this thread not load?\n{quoted}"}}  # fmt: skip
    log = tmp_path / "5f1c2e3a-0000-4000-8000-000000000001.jsonl"
    log.write_text(json.dumps(line) + "\n")
    assert formats_of([log]) == {str(log.resolve()): "claude-code"}


def test_a_thread_with_no_message_makes_no_agent(transcripts: Transcripts, tmp_path: Path) -> None:
    log = tmp_path / THREAD.name
    log.write_text(json.dumps({**json.loads(THREAD.read_text()), "messages": []}, indent=2))
    check_no_conversation(transcripts, log)


def test_the_watch_follows_a_thread_rewritten_whole(transcripts: Transcripts, tmp_path: Path) -> None:
    thread = json.loads(THREAD.read_text())
    stages = [json.dumps({**thread, "messages": thread["messages"][:end]}).encode() for end in (2, 6)]
    (tmp_path / "threads").mkdir()
    check_watch_follows_rewrites(transcripts, tmp_path / "threads", THREAD.name, stages)
