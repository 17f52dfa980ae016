"""Logs that state no time (Cursor and Windsurf transcripts, Continue sessions; a message of
another log left undated) are dated by their file's modification time, never by the import:
the agent's dates, each message's ``metadata.timestamp`` (marked ``timestampFrom: "file"``), and
the day its usage is counted on. A grown log keeps the times its messages were first imported
with; what it adds takes the file's new time. On both backends.
"""

from __future__ import annotations

import os
import shutil
from datetime import UTC, datetime
from pathlib import Path

from format_checks import DATA, agents, everything, imported, owner

from foldline.importers import import_paths
from foldline.service import Transcripts

CURSOR = next((DATA / "cursor").rglob("*.jsonl"))
CONTINUE = DATA / "continue" / "git-ai-project__git-ai" / "continue-cli-session-simple.json"
AIDER = DATA / "aider"
MAY = datetime(2024, 5, 1, 12, 30, tzinfo=UTC)
JUNE = datetime(2024, 6, 2, 8, 0, tzinfo=UTC)


def stamp(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def dated(path: Path, moment: datetime) -> Path:
    os.utime(path, (moment.timestamp(), moment.timestamp()))
    return path


def test_a_log_without_times_is_dated_by_its_file(transcripts: Transcripts, tmp_path: Path) -> None:
    log = dated(Path(shutil.copy(CURSOR, tmp_path / CURSOR.name)), MAY)
    account, workspace, summary = imported(transcripts, [log])
    assert summary.agents == 1
    (agent,) = agents(transcripts, account, workspace)
    assert (agent["created_at"], agent["updated_at"]) == (stamp(MAY), stamp(MAY))
    messages = list(everything(transcripts, account, workspace).values())
    assert messages and all(m["metadata"]["timestamp"] == stamp(MAY) for m in messages)
    assert all(m["metadata"]["timestampFrom"] == "file" for m in messages)


def test_a_grown_log_keeps_its_first_times_and_dates_the_new_by_the_file(
    transcripts: Transcripts, tmp_path: Path
) -> None:
    raw = CURSOR.read_bytes().splitlines(keepends=True)
    log = tmp_path / CURSOR.name
    log.write_bytes(b"".join(raw[:4]))
    account, workspace = owner(transcripts, "grower")
    import_paths(transcripts, [dated(log, MAY)], account_id=account, workspace_id=workspace)
    first = everything(transcripts, account, workspace)
    log.write_bytes(b"".join(raw))
    grown = import_paths(transcripts, [dated(log, JUNE)], account_id=account, workspace_id=workspace)
    after = everything(transcripts, account, workspace)
    assert 0 < grown.messages < len(after)
    new = [m for mid, m in after.items() if mid not in first]
    assert new and all(m["metadata"]["timestamp"] == stamp(JUNE) for m in new)
    kept = [m for mid, m in after.items() if mid in first and first[mid] == m]
    assert kept and all(m["metadata"]["timestamp"] == stamp(MAY) for m in kept)
    (agent,) = agents(transcripts, account, workspace)
    assert (agent["created_at"], agent["updated_at"]) == (stamp(MAY), stamp(JUNE))


def test_usage_of_an_undated_session_counts_on_its_files_day(transcripts: Transcripts, tmp_path: Path) -> None:
    session = dated(Path(shutil.copy(CONTINUE, tmp_path / CONTINUE.name)), MAY)
    account, workspace, _ = imported(transcripts, [session], "usage")
    rows = transcripts.usage(account, "day", workspace)["rows"]
    assert [row["day"] for row in rows] == ["2024-05-01"]


def test_a_log_with_times_keeps_them(transcripts: Transcripts, tmp_path: Path) -> None:
    """Aider states each launch's time: its messages carry it, not the file's."""
    history = next(AIDER.rglob(".aider.chat.history.md"))
    log = dated(Path(shutil.copy(history, tmp_path / history.name)), MAY)
    account, workspace, _ = imported(transcripts, [log], "aider")
    messages = list(everything(transcripts, account, workspace).values())
    assert messages and not any(m["metadata"].get("timestampFrom") for m in messages)
    assert not any(m["metadata"]["timestamp"] == stamp(MAY) for m in messages)


def test_an_undated_log_is_listed_by_its_file_s_time_among_the_others(
    transcripts: Transcripts, tmp_path: Path
) -> None:
    """Not above everything: by activity, a log that states no time sits where its file's time
    puts it among logs that state theirs (an older file below them, a newer one above)."""
    history = next(AIDER.rglob(".aider.chat.history.md"))
    timed = Path(shutil.copy(history, tmp_path / history.name))
    old = dated(Path(shutil.copy(CURSOR, tmp_path / CURSOR.name)), MAY)
    new = dated(Path(shutil.copy(CONTINUE, tmp_path / CONTINUE.name)), datetime(2099, 1, 1, tzinfo=UTC))
    account, workspace, _ = imported(transcripts, [old, timed, new], "listed")
    listed = [(a["source"], a["updated_at"]) for a in agents(transcripts, account, workspace)]
    sources = [source for source, _ in listed]
    assert sources[0] == "continue" and sources[-1] == "cursor" and "aider" in sources[1:-1], listed
    assert listed[-1][1] == stamp(MAY)
