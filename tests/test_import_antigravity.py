"""Google Antigravity: the one real exported trajectory (see SOURCES.md). Counts are made here
from the raw steps, not by the importer's code."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from format_checks import (
    DATA,
    agents,
    check_growth,
    check_not_taken_for,
    check_odd_shapes,
    check_reimport_writes_nothing,
    counts,
    everything,
    formats_of,
    imported,
    tool_parts,
)

from foldline.service import Transcripts

LOG = DATA / "antigravity" / "AkhileshBandari__ApplySense" / "transcript.jsonl"
Json = dict[str, Any]


def same(stored: Any, raw: Any) -> bool:
    """Equal, or a secret in it replaced by the write door's redaction marker (redaction is on)."""
    return stored == raw or "[REDACTED:" in json.dumps(stored)


def steps() -> list[Json]:
    return [json.loads(line) for line in LOG.read_text().splitlines() if line.strip()]


def test_the_trajectory_matches_the_raw_steps(transcripts: Transcripts) -> None:
    found = steps()
    calls = [c for d in found if d["type"] == "PLANNER_RESPONSE" for c in d.get("tool_calls", [])]
    ran = [d for d in found if d["source"] == "MODEL" and d["type"] != "PLANNER_RESPONSE"]
    assert len(calls) == len(ran) == 81  # each call is answered by the step after it
    account, workspace, summary = imported(transcripts, [LOG])
    assert summary.skipped == [] and summary.agents == 1
    messages = sorted(everything(transcripts, account, workspace).values(), key=lambda m: m["metadata"]["step"])
    prompts = [d for d in found if d["type"] == "USER_INPUT"]
    assert counts(messages) == {"prompts": len(prompts), "calls": len(calls), "outputs": len(ran)}
    parts = tool_parts(messages)
    assert [p.get("toolName", p["type"][5:]) for p in parts] == [c["name"] for c in calls]
    # args are JSON-encoded strings: the input holds them decoded; one the export cut at 2 KB
    # ("...\n<truncated N bytes>") keeps what was written, and the part says how much was lost
    cut_values = 0
    for part, call in zip(parts, calls, strict=True):
        lost = {}
        for key, raw in call["args"].items():
            cut = re.fullmatch(r"(.*)\n<truncated (\d+) bytes>", raw, re.S)
            if cut is None:
                assert same(part["input"][key], json.loads(raw))
                continue
            lost[key] = int(cut.group(2))
            written = json.dumps(part["input"][key], ensure_ascii=False)[:-1]  # without its closing quote
            assert same(part["input"][key], "") or (
                cut.group(1).startswith(written) and len(cut.group(1)) - len(written) < 8
            )
        assert part.get("toolMetadata", {}).get("antigravity", {}).get("truncated", {}) == lost
        cut_values += len(lost)
    assert cut_values > 0
    # each output is the step that ran, without its "Created At / Completed At" heading
    heading = re.compile(r"\ACreated At: [^\n]*\nCompleted At: [^\n]*\n")
    outputs = [heading.sub("", d["content"]) for d in ran]
    assert all(same(p["output"], out) for p, out in zip(parts, outputs, strict=True))
    texts = [p["text"] for m in messages if m["role"] == "user" for p in m["parts"] if p["type"] == "text"]
    assert texts == [re.search(r"<USER_REQUEST>\s*(.*?)\s*</USER_REQUEST>", d["content"], re.S).group(1)
                     for d in prompts]  # fmt: skip
    assert not any("ADDITIONAL_METADATA" in t for t in texts)
    thoughts = [p["text"] for m in messages for p in m["parts"] if p["type"] == "reasoning"]
    assert thoughts == [d["thinking"] for d in found if d.get("thinking")] and len(thoughts) == 7
    said = [p["text"] for m in messages if m["role"] == "assistant" for p in m["parts"] if p["type"] == "text"]
    planned = [d["content"] for d in found if d["type"] == "PLANNER_RESPONSE" and d.get("content")]
    assert len(said) == len(planned) and all(same(a, b) for a, b in zip(said, planned, strict=True))
    assert all(m["metadata"]["source"] == "antigravity" for m in messages)
    (agent,) = agents(transcripts, account, workspace)
    assert agent["created_at"] == found[0]["created_at"].replace("Z", ".000Z")
    assert agent["updated_at"] == found[-1]["created_at"].replace("Z", ".000Z")
    assert agent["title"].startswith("Repository Reference:")


def test_the_trajectory_is_antigravity_and_no_other_file_is() -> None:
    assert formats_of([LOG]) == {str(LOG.resolve()): "antigravity"}
    check_not_taken_for("antigravity")


def test_importing_again_writes_nothing(transcripts: Transcripts) -> None:
    check_reimport_writes_nothing(transcripts, [LOG])


def test_a_grown_trajectory_adds_only_what_is_new(transcripts: Transcripts, tmp_path: Path) -> None:
    raw = LOG.read_bytes().splitlines(keepends=True)
    check_growth(transcripts, tmp_path / LOG.name, [b"".join(raw[:end]) for end in (6, 40, len(raw))])


def test_a_trajectory_that_breaks_off_imports_what_is_readable(transcripts: Transcripts, tmp_path: Path) -> None:
    raw = LOG.read_bytes()
    log = tmp_path / LOG.name
    log.write_bytes(raw[: len(raw) // 2])
    account, workspace, summary = imported(transcripts, [log])
    assert summary.skipped == [] and counts(list(everything(transcripts, account, workspace).values()))["prompts"] >= 1


def test_fields_of_the_wrong_kind_never_stop_an_import(transcripts: Transcripts, tmp_path: Path) -> None:
    check_odd_shapes(transcripts, LOG, tmp_path)
