"""Copilot Chat in VS Code: the real session document and JSONL operation log (see SOURCES.md).

Counts are made here from the raw files, not by the importer's code.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest
from format_checks import (
    DATA,
    agents,
    check_growth,
    check_no_conversation,
    check_not_taken_for,
    check_odd_shapes,
    check_reimport_writes_nothing,
    counts,
    formats_of,
    imported,
    tool_parts,
)

from foldline.importers import copilot_vscode, import_paths
from foldline.service import Transcripts

VSCODE = DATA / "copilot-vscode" / "git-ai-project__git-ai"
SIMPLE = VSCODE / "copilot_session_simple.json"
MULTILINE = VSCODE / "copilot_session_multiline.jsonl"
Json = dict[str, Any]


def session_of(path: Path) -> Json:
    """The session the file holds: the document, or the log's snapshot with its appends (the
    sample's log sets UI state and appends requests, nothing else)."""
    if path.suffix == ".json":
        found: Json = json.loads(path.read_text())
        return found
    ops = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    doc: Json = ops[0]["v"]
    for op in ops[1:]:
        if op["kind"] == 2 and op["k"] == ["requests"]:
            doc["requests"] += op["v"]
    return doc


def raw_counts(doc: Json) -> Json:
    rounds = [r for q in doc["requests"] for r in q["result"]["metadata"].get("toolCallRounds", [])]
    calls = [c for r in rounds for c in r["toolCalls"]]
    results = {k for q in doc["requests"] for k in q["result"]["metadata"].get("toolCallResults", {})}
    return {"prompts": len(doc["requests"]), "calls": len(calls), "outputs": sum(c["id"] in results for c in calls)}


def text_nodes(node: Any) -> list[str]:
    if isinstance(node, list):
        return [t for n in node for t in text_nodes(n)]
    if not isinstance(node, dict):
        return []
    if node.get("type") == 2 and "text" in node:
        return [node["text"]]
    return [t for v in node.values() for t in text_nodes(v)]


def stored(t: Transcripts, account: str, workspace: str) -> list[Json]:
    (agent,) = agents(t, account, workspace)
    return list(t.messages(account, agent["id"])["messages"])


@pytest.mark.parametrize("path", [SIMPLE, MULTILINE], ids=["document", "operation-log"])
def test_counts_match_the_raw_file(transcripts: Transcripts, path: Path) -> None:
    doc = session_of(path)
    account, workspace, summary = imported(transcripts, [path])
    assert summary.skipped == [] and summary.agents == 1
    messages = stored(transcripts, account, workspace)
    assert counts(messages) == raw_counts(doc)
    prompts = [q["message"]["text"] for q in doc["requests"]]
    assert [p["text"] for m in messages if m["role"] == "user" for p in m["parts"]] == prompts
    rounds = [r["response"] for q in doc["requests"] for r in q["result"]["metadata"]["toolCallRounds"]]
    said = [p["text"] for m in messages if m["role"] == "assistant" for p in m["parts"] if p["type"] == "text"]
    assert said == [text for text in rounds if text]
    assert {m["metadata"]["model"] for m in messages if m["role"] == "assistant"} == {
        q["modelId"] for q in doc["requests"]
    }
    (agent,) = agents(transcripts, account, workspace)
    assert agent["title"] == doc["customTitle"]


def test_tool_results_are_the_text_of_their_tree(transcripts: Transcripts) -> None:
    doc = session_of(SIMPLE)
    account, workspace, _ = imported(transcripts, [SIMPLE])
    parts = {p["toolCallId"]: p for p in tool_parts(stored(transcripts, account, workspace))}
    for request in doc["requests"]:
        for call_id, result in request["result"]["metadata"].get("toolCallResults", {}).items():
            output, at = parts[call_id]["output"], 0
            for text in text_nodes(result):  # every text node, in order, and nothing else
                at = output.index(text, at) + len(text)
            assert len(output) - sum(len(t) for t in text_nodes(result)) == output.count("\n") - sum(
                t.count("\n") for t in text_nodes(result)
            )
            assert parts[call_id]["state"] == "output-available"
    edit = next(p for p in parts.values() if p.get("toolName", p["type"][5:]) == "replace_string_in_file")
    assert "hello world" in edit["input"]["newString"]


def test_both_files_are_detected_and_no_other_file_is() -> None:
    assert set(formats_of([VSCODE]).values()) == {"copilot-vscode"} and len(formats_of([VSCODE])) == 2
    check_not_taken_for("copilot-vscode")


def test_the_operation_log_is_read_when_both_files_are_there(transcripts: Transcripts, tmp_path: Path) -> None:
    shutil.copy(MULTILINE, tmp_path / "7de89a80-6d93-43e7-be0a-0a9afe980198.jsonl")
    ops = [json.loads(line) for line in MULTILINE.read_text().splitlines()]
    (tmp_path / "7de89a80-6d93-43e7-be0a-0a9afe980198.json").write_text(json.dumps(ops[0]["v"]))
    account, workspace, summary = imported(transcripts, [tmp_path])
    assert summary.skipped == [] and summary.agents == 1
    assert counts(stored(transcripts, account, workspace))["prompts"] == len(session_of(MULTILINE)["requests"])


def test_importing_again_writes_nothing(transcripts: Transcripts) -> None:
    check_reimport_writes_nothing(transcripts, [VSCODE])


def test_a_rewritten_document_writes_only_what_changed(transcripts: Transcripts, tmp_path: Path) -> None:
    doc = session_of(SIMPLE)
    stages = [json.dumps({**doc, "requests": doc["requests"][:end]}, indent=2).encode() for end in (1, 2, 3)]
    check_growth(transcripts, tmp_path / f"{doc['sessionId']}.json", stages)


def test_a_grown_operation_log_adds_only_what_is_new(transcripts: Transcripts, tmp_path: Path) -> None:
    lines = MULTILINE.read_bytes().splitlines(keepends=True)
    check_growth(transcripts, tmp_path / MULTILINE.name, [b"".join(lines[:3]), b"".join(lines)])


def test_an_edit_at_a_key_path_changes_that_message(transcripts: Transcripts, tmp_path: Path) -> None:
    log = tmp_path / MULTILINE.name
    shutil.copy(MULTILINE, log)
    account, workspace, _ = imported(transcripts, [log])
    before = stored(transcripts, account, workspace)
    edit = {"kind": 1, "k": ["requests", 0, "message", "text"], "v": "a prompt edited in place"}
    log.write_bytes(MULTILINE.read_bytes() + orjson.dumps(edit) + b"\n")
    done = import_paths(transcripts, [log], account_id=account, workspace_id=workspace)
    after = stored(transcripts, account, workspace)
    assert done.messages == 1 and len(after) == len(before)
    assert after[0]["parts"][0]["text"] == "a prompt edited in place"


def test_a_document_that_breaks_off_imports_what_is_readable(transcripts: Transcripts, tmp_path: Path) -> None:
    raw = SIMPLE.read_bytes()
    doc = session_of(SIMPLE)
    cut = raw.index(doc["requests"][2]["requestId"].encode())  # in the third request
    log = tmp_path / "331fed7f-cfd6-409c-8502-06a56322b636.json"
    log.write_bytes(raw[:cut])
    account, workspace, summary = imported(transcripts, [log])
    assert summary.skipped == [] and summary.agents == 1
    assert counts(stored(transcripts, account, workspace)) == raw_counts({"requests": doc["requests"][:2]})


@pytest.mark.parametrize("path", [SIMPLE, MULTILINE], ids=lambda p: p.suffix)
def test_fields_of_the_wrong_kind_never_stop_an_import(transcripts: Transcripts, path: Path, tmp_path: Path) -> None:
    check_odd_shapes(transcripts, path, tmp_path)


def test_its_locations_are_the_chat_folders_not_the_storage(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / ".config"))
    storage = tmp_path / ".config" / "Code" / "User" / "workspaceStorage"
    (storage / "a1b2" / "chatSessions").mkdir(parents=True)
    (storage / "a1b2" / "GitHub.copilot-chat").mkdir()
    (storage / "c3d4").mkdir()
    found = copilot_vscode.locations()
    assert storage / "a1b2" / "chatSessions" in found
    assert not [p for p in found if p.is_relative_to(storage) and p.name != "chatSessions"]
    assert tmp_path / ".config" / "Code" / "User" / "globalStorage" / "emptyWindowChatSessions" in found


def test_a_rounds_thinking_is_reasoning_at_the_time_it_began(transcripts: Transcripts, tmp_path: Path) -> None:
    doc = session_of(SIMPLE)
    found = doc["requests"][1]["result"]["metadata"]["toolCallRounds"][0]
    found["thinking"] = {"text": ["The user wants ", "the greeting changed."], "tokens": 9}
    found["timestamp"] = doc["requests"][1]["timestamp"] + 1500
    log = tmp_path / f"{doc['sessionId']}.json"
    log.write_text(json.dumps(doc))
    account, workspace, _ = imported(transcripts, [log])
    answer = next(m for m in stored(transcripts, account, workspace) if m["parts"][0]["type"] == "reasoning")
    assert answer["parts"][0]["text"] == "The user wants the greeting changed."
    assert answer["metadata"]["timestamp"] == "2025-10-07T13:51:42.782Z"


def test_a_chat_with_no_request_makes_no_agent(transcripts: Transcripts, tmp_path: Path) -> None:
    doc = {**session_of(SIMPLE), "requests": []}  # VS Code keeps a file for every chat opened
    log = tmp_path / f"{doc['sessionId']}.json"
    log.write_text(json.dumps(doc, indent=2))
    check_no_conversation(transcripts, log)


def test_a_request_without_rounds_answers_with_its_response(transcripts: Transcripts, tmp_path: Path) -> None:
    doc = session_of(SIMPLE)
    request = doc["requests"][1]
    del request["result"]["metadata"]["toolCallRounds"]  # as older sessions have it
    log = tmp_path / f"{doc['sessionId']}.json"
    log.write_text(json.dumps(doc))
    account, workspace, _ = imported(transcripts, [log])
    messages = stored(transcripts, account, workspace)
    invocation = next(r for r in request["response"] if r.get("kind") == "toolInvocationSerialized")
    part = next(p for p in tool_parts(messages) if p["toolCallId"] == invocation["toolCallId"])
    assert part["input"] == {"invocationMessage": invocation["invocationMessage"]}
    assert part["state"] == "output-available"
    texts = [r["value"] for r in request["response"] if "kind" not in r]
    answer = next(m for m in messages if part in m["parts"])
    shown = [p["text"] for p in answer["parts"] if p["type"] == "text"]
    assert "".join(shown) == "".join(texts) and answer["parts"].index(part) == 1  # said, called, said
