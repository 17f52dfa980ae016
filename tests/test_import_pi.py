"""pi: the one real session (text redacted upstream, see SOURCES.md); tool calls, thinking and a
branch are added here in pi's documented shapes. Counts are made from the raw lines."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from format_checks import (
    DATA,
    PIXEL,
    agents,
    check_growth,
    check_image_is_a_file_part,
    check_not_taken_for,
    check_odd_shapes,
    check_reimport_writes_nothing,
    counts,
    everything,
    formats_of,
    imported,
    total_usage,
)

from foldline.service import Transcripts

SESSION = DATA / "pi" / "kvsankar__agent-history" / "session-01.jsonl"
Json = dict[str, Any]


def lines() -> list[Json]:
    return [json.loads(line) for line in SESSION.read_text().splitlines()]


def entry(id_: str, parent: str, message: Json) -> Json:
    return {"type": "message", "id": id_, "parentId": parent, "timestamp": "2026-06-05T05:24:40.000Z",
            "message": message}  # fmt: skip


def with_tools() -> list[Json]:
    """The session, then a turn with thinking, a call and its result, and an abandoned branch."""
    found = lines()
    last = found[-1]["id"]
    call = {"type": "toolCall", "id": "call_1", "name": "bash", "arguments": {"command": "ls"}}
    found += [
        entry("b0000001", last, {"role": "user", "content": [{"type": "text", "text": "abandoned"}]}),
        entry("a0000001", last, {"role": "user", "content": [{"type": "text", "text": "list the files"}]}),
        entry("a0000002", "a0000001", {"role": "assistant", "model": "gpt-5.5", "provider": "openai-codex",
              "content": [{"type": "thinking", "thinking": "ls will do"}, call],
              "usage": {"input": 10, "output": 5, "cacheRead": 100, "cacheWrite": 0}}),
        entry("a0000003", "a0000002", {"role": "toolResult", "toolCallId": "call_1", "toolName": "bash",
              "content": [{"type": "text", "text": "README.md"}], "isError": False}),
    ]  # fmt: skip
    return found


def write(path: Path, found: list[Json]) -> Path:
    path.write_text("".join(json.dumps(d) + "\n" for d in found))
    return path


def test_the_session_matches_the_raw_file(transcripts: Transcripts) -> None:
    account, workspace, summary = imported(transcripts, [SESSION])
    assert summary.skipped == [] and summary.agents == 1
    messages = list(everything(transcripts, account, workspace).values())
    raw = [d["message"] for d in lines() if d["type"] == "message"]
    assert counts(messages)["prompts"] == sum(1 for m in raw if m["role"] == "user")
    assert total_usage(messages)["outputTokens"] == sum(m["usage"]["output"] for m in raw if "usage" in m)
    assert [p["text"] for m in messages for p in m["parts"]] == [b["text"] for m in raw for b in m["content"]]
    assert {m["metadata"]["model"] for m in messages if m["role"] == "assistant"} == {"gpt-5.5"}
    (agent,) = agents(transcripts, account, workspace)
    assert agent["title"] == "agent-history pi smoke"  # session_info.name


def test_the_active_branch_with_its_calls_and_thoughts(transcripts: Transcripts, tmp_path: Path) -> None:
    log = write(tmp_path / SESSION.name, with_tools())
    account, workspace, _ = imported(transcripts, [log])
    messages = list(everything(transcripts, account, workspace).values())
    assert counts(messages) == {"prompts": 2, "calls": 1, "outputs": 1}
    texts = [p.get("text") for m in messages for p in m["parts"]]
    assert "abandoned" not in texts and "ls will do" in texts
    assert total_usage(messages)["cacheReadTokens"] == 100


def test_the_session_is_pi_and_no_other_file_is() -> None:
    assert formats_of([SESSION]) == {str(SESSION.resolve()): "pi"}
    check_not_taken_for("pi")


def test_importing_again_writes_nothing(transcripts: Transcripts) -> None:
    check_reimport_writes_nothing(transcripts, [SESSION])


def test_a_grown_session_adds_only_what_is_new(transcripts: Transcripts, tmp_path: Path) -> None:
    found = [d for d in with_tools() if d.get("id") != "b0000001"]
    stages = ["".join(json.dumps(d) + "\n" for d in found[:end]).encode() for end in (5, 6, 8, 9)]
    check_growth(transcripts, tmp_path / SESSION.name, stages)


def test_a_session_that_breaks_off_imports_what_is_readable(transcripts: Transcripts, tmp_path: Path) -> None:
    log = tmp_path / SESSION.name
    raw = SESSION.read_bytes()
    log.write_bytes(raw[: len(raw) - 40])
    account, workspace, summary = imported(transcripts, [log])
    assert summary.skipped == [] and counts(list(everything(transcripts, account, workspace).values()))["prompts"] == 1


def test_fields_of_the_wrong_kind_never_stop_an_import(transcripts: Transcripts, tmp_path: Path) -> None:
    (tmp_path / "odd").mkdir()
    check_odd_shapes(transcripts, write(tmp_path / "tools.jsonl", with_tools()), tmp_path / "odd")


def test_an_image_is_a_file_part(transcripts: Transcripts, tmp_path: Path) -> None:
    found = lines()
    found[4]["message"]["content"].append({"type": "image", "data": PIXEL, "mimeType": "image/png"})
    account, workspace, _ = imported(transcripts, [write(tmp_path / SESSION.name, found)])
    check_image_is_a_file_part(list(everything(transcripts, account, workspace).values()))
