"""Aider: the real chat histories and input histories (see SOURCES.md).

Counts are made here from the raw Markdown, not by the importer's code: a launch is what follows
a ``# aider chat started at`` heading, a prompt a run of ``#### `` lines.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from format_checks import (
    DATA,
    agents,
    check_growth,
    check_not_taken_for,
    check_reimport_writes_nothing,
    everything,
    formats_of,
    imported,
)

from foldline.importers.detect import find_groups
from foldline.importers.importer import NO_CONVERSATION
from foldline.service import Transcripts

AIDER = DATA / "aider"
AFI = AIDER / "AFI-Protocol__afi-core" / ".aider.chat.history.md"
MOZGOSLAV = AIDER / "AlexShchuka__mozgoslav" / ".aider.chat.history.md"
WINDOWS = AIDER / "Aquaticat__Monochromatic" / ".aider.chat.history.md"
ABORTED = AIDER / "BeehiveInnovations__zen-mcp-server" / ".aider.chat.history.md"
LOGS = [AFI, MOZGOSLAV, WINDOWS, ABORTED]
Json = dict[str, Any]


def launches(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8").replace("\r\n", "\n")
    return re.split(r"^# aider chat started at .*\n", text, flags=re.M)[1:]


def prompt_runs(launch: str) -> list[str]:
    return [m.group(0) for m in re.finditer(r"(?:^####(?: .*)?\n)+", launch, flags=re.M)]


def received(launch: str) -> int:
    """The tokens received, from the ``> Tokens: … sent, N received`` lines (k = thousand)."""
    total = 0.0
    for number, scale in re.findall(r"^> Tokens: .*?([\d.]+)(k?) received", launch, flags=re.M):
        total += float(number) * (1000 if scale else 1)
    return round(total)


def by_role(messages: list[Json], role: str) -> list[Json]:
    return [m for m in messages if m["role"] == role]


@pytest.mark.parametrize("log", LOGS, ids=lambda p: p.parent.name)
def test_every_launch_with_a_prompt_is_a_session_with_its_prompts(transcripts: Transcripts, log: Path) -> None:
    spoken = [launch for launch in launches(log) if prompt_runs(launch)]
    account, workspace, summary = imported(transcripts, [log])
    assert summary.skipped == [] and summary.agents == len(spoken)
    messages = list(everything(transcripts, account, workspace).values())
    assert len(by_role(messages, "user")) == sum(len(prompt_runs(launch)) for launch in spoken)
    assert all(m["metadata"]["source"] == "aider" for m in messages)
    assert not [p for m in messages for p in m["parts"] if p["type"] not in ("text", "reasoning")]


def test_replies_thoughts_usage_and_model(transcripts: Transcripts) -> None:
    account, workspace, _ = imported(transcripts, [MOZGOSLAV])
    messages = list(everything(transcripts, account, workspace).values())
    raw = MOZGOSLAV.read_text(encoding="utf-8")
    thoughts = [p for m in messages for p in m["parts"] if p["type"] == "reasoning"]
    assert len(thoughts) == raw.count("<thinking-content-7bbeb8e1441453ad999a0bbba8a46d4b>")
    shown = "".join(p.get("text", "") for m in messages if m["role"] != "system" for p in m["parts"])
    assert "thinking-content" not in shown
    replies = by_role(messages, "assistant")
    assert {m["metadata"]["model"] for m in replies} == {"lm_studio/qwen3.6-35b-a3b-uncensored-hauhaucs-aggressive"}
    assert sum(m["metadata"].get("usage", {}).get("outputTokens", 0) for m in replies) == sum(
        received(launch) for launch in launches(MOZGOSLAV)
    )


def test_a_prompt_is_dated_by_the_input_history(transcripts: Transcripts) -> None:
    account, workspace, _ = imported(transcripts, [AFI])
    prompts = {
        m["parts"][0]["text"]: m["metadata"]["timestamp"]
        for m in by_role(list(everything(transcripts, account, workspace).values()), "user")
    }
    # `.aider.input.history`: "# 2025-07-15 14:54:55.215786" then "+chmod +x ~/AFI_Modular_Repos/*.sh"
    assert prompts["chmod +x ~/AFI_Modular_Repos/*.sh"] == "2025-07-15T14:54:55.215Z"
    assert prompts["sync-afi\naider-afi"] == "2025-07-15T14:56:07.058Z"  # a two-line prompt is one
    titles = {a["title"] for a in agents(transcripts, account, workspace)}
    assert "chmod +x ~/AFI_Modular_Repos/*.sh" in titles
    created = sorted(a["created_at"] for a in agents(transcripts, account, workspace))
    assert created[0] == "2025-07-15T11:38:37.000Z"  # the launch's heading (local time, read as UTC)


def test_aiders_own_output_is_a_system_message_never_the_model(transcripts: Transcripts) -> None:
    account, workspace, _ = imported(transcripts, [AFI])
    messages = list(everything(transcripts, account, workspace).values())
    outputs = by_role(messages, "system")
    assert outputs and all(m["metadata"]["aiderOutput"] for m in outputs)
    applied = AFI.read_text(encoding="utf-8").count("\n> Applied edit to ")
    assert sum(p["text"].count("Applied edit to ") for m in outputs for p in m["parts"]) == applied
    said = [p["text"] for m in by_role(messages, "assistant") for p in m["parts"]]
    assert not [t for t in said if t.startswith("> ") or "\n#### " in t]


def test_windows_line_ends_read_like_any_other(transcripts: Transcripts, tmp_path: Path) -> None:
    log = tmp_path / ".aider.chat.history.md"
    log.write_bytes(WINDOWS.read_bytes().replace(b"\n", b"\r\n"))
    account, workspace, crlf = imported(transcripts, [log], "crlf")
    _, _, plain = imported(transcripts, [WINDOWS], "plain")
    assert (crlf.agents, crlf.messages) == (plain.agents, plain.messages)
    texts = [p["text"] for m in everything(transcripts, account, workspace).values() for p in m["parts"]]
    assert not [t for t in texts if "\r" in t]


def test_every_history_is_aider_and_no_other_file_is(tmp_path: Path) -> None:
    found = formats_of(LOGS)
    assert {found[str(p.resolve())] for p in LOGS} == {"aider"}
    check_not_taken_for("aider")
    notes = tmp_path / "notes.md"
    notes.write_text("How we use Aider:\n\n# aider chat started at 2025-07-15 11:38:37\n\n#### hi\n")
    readme = tmp_path / "README.md"
    readme.write_text("# aider chat started at\n\nAider's log format, explained.\n")
    for path in (notes, readme, AFI.with_name(".aider.input.history")):
        groups, skipped = find_groups([path])
        assert groups == [] and skipped == [(str(path.resolve()), "not a session log of a known agent")]


def test_a_folder_import_finds_the_history_and_not_other_markdown(tmp_path: Path) -> None:
    (tmp_path / ".aider.chat.history.md").write_bytes(AFI.read_bytes())
    (tmp_path / "README.md").write_text("# aider chat started at 2025-07-15 11:38:37\n\n#### hi\n")
    groups, skipped = find_groups([tmp_path])
    assert {g.main.name for g in groups} == {".aider.chat.history.md"} and skipped == []


def test_importing_again_writes_nothing(transcripts: Transcripts) -> None:
    check_reimport_writes_nothing(transcripts, [AIDER])


def test_a_grown_history_adds_only_what_is_new(transcripts: Transcripts, tmp_path: Path) -> None:
    raw = AFI.read_bytes()
    second = raw.index(b"# aider chat started at 2025-07-15 14:53:34")
    launch = raw[second : raw.index(b"# aider chat started at", second + 10)]
    cuts = [m.start() for m in re.finditer(rb"^#### ", launch, flags=re.M)][1:] + [len(launch)]
    check_growth(transcripts, tmp_path / ".aider.chat.history.md", [launch[:cut] for cut in cuts])


def test_a_new_launch_is_a_new_session_and_the_old_ones_stay(transcripts: Transcripts, tmp_path: Path) -> None:
    raw = AFI.read_bytes()
    log = tmp_path / ".aider.chat.history.md"
    cut = raw.index(b"# aider chat started at 2025-07-15 15:06:38")
    log.write_bytes(raw[:cut])
    account, workspace, first = imported(transcripts, [log])
    log.write_bytes(raw[: raw.index(b"# aider chat started at 2025-07-15 15:18:04")])
    from foldline.importers import import_paths

    grown = import_paths(transcripts, [log], account_id=account, workspace_id=workspace)
    assert (first.agents, grown.agents) == (2, 1)
    assert len(agents(transcripts, account, workspace)) == 3


def test_a_history_that_breaks_off_imports_what_is_readable(transcripts: Transcripts, tmp_path: Path) -> None:
    raw = MOZGOSLAV.read_bytes()
    log = tmp_path / ".aider.chat.history.md"
    log.write_bytes(raw[: len(raw) // 2 - 7])  # mid-reply, maybe mid-character
    account, workspace, summary = imported(transcripts, [log])
    assert summary.skipped == [] and summary.agents >= 1
    kept = launches(log)
    users = by_role(list(everything(transcripts, account, workspace).values()), "user")
    assert len(users) == sum(len(prompt_runs(launch)) for launch in kept)


def test_a_history_of_launches_without_a_prompt_makes_no_agent(transcripts: Transcripts, tmp_path: Path) -> None:
    log = tmp_path / ".aider.chat.history.md"
    log.write_text("\n# aider chat started at 2025-07-15 11:38:37\n\n> Aider v0.85.1  \n> Main model: gpt-4o  \n")
    account, workspace, summary = imported(transcripts, [log])
    assert summary.skipped == [(str(log.resolve()), NO_CONVERSATION)]
    assert agents(transcripts, account, workspace) == []
