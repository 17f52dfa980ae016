"""What the tests of each newer agent format check the same way: import into a fresh workspace,
read back everything stored, and the checks every format passes (detection, idempotence, growth)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from foldline.importers import Summary, import_paths
from foldline.importers.detect import find_groups
from foldline.importers.importer import NO_CONVERSATION
from foldline.importers.watch import follow
from foldline.service import Transcripts

DATA = Path(__file__).parent / "data" / "transcripts"
FORMAT_DIRS = {"gemini-cli": "gemini-cli", "copilot-cli": "copilot-cli", "copilot-vscode": "copilot-vscode",
               "cursor": "cursor", "amp": "amp", "claude-code": "claude-code", "codex": "codex",
               "aider": "aider", "crush": "crush", "opencode": "opencode", "openhands": "openhands",
               "pi": "pi", "droid": "droid", "continue": "continue",
               "windsurf": "windsurf", "antigravity": "antigravity"}  # fmt: skip
ENDED = "the turn ended before this tool returned"
Json = dict[str, Any]


def owner(t: Transcripts, name: str = "importer") -> tuple[str, str]:
    account = t.create_account(name)["id"]
    return account, t.create_workspace(name, [account])["id"]


def imported(t: Transcripts, paths: list[Path], name: str = "importer") -> tuple[str, str, Summary]:
    account, workspace = owner(t, name)
    return account, workspace, import_paths(t, paths, account_id=account, workspace_id=workspace)


def agents(t: Transcripts, account: str, workspace: str) -> list[Json]:
    return list(t.list_agents(account, workspace)["agents"])


def everything(t: Transcripts, account: str, workspace: str) -> dict[str, Json]:
    """Every stored message of the workspace, by id (subagents included)."""
    found = {}
    for agent in agents(t, account, workspace):
        for call in [None, *t.agent(account, agent["id"])["subagents"]]:
            for m in t.messages(account, agent["id"], call=call)["messages"]:
                found[m["id"]] = m
    return found


def tool_parts(messages: list[Json]) -> list[Json]:
    return [p for m in messages for p in m["parts"] if p["type"] == "dynamic-tool" or p["type"].startswith("tool-")]


def counts(messages: list[Json]) -> Json:
    """What a user counts in the panel: prompts, tool calls, calls that have their outcome."""
    tools = tool_parts(messages)
    return {
        "prompts": sum(1 for m in messages if m["role"] == "user"),
        "calls": len(tools),
        "outputs": sum(1 for p in tools if p["state"] in ("output-available", "output-error")
                       and ENDED not in p.get("errorText", "")),  # fmt: skip
    }


def total_usage(messages: list[Json]) -> Json:
    found = {"inputTokens": 0, "outputTokens": 0, "cacheReadTokens": 0}
    for m in messages:
        usage = m.get("metadata", {}).get("usage") or {}
        found["inputTokens"] += usage.get("inputTokens", 0)
        found["outputTokens"] += usage.get("outputTokens", 0)
        found["cacheReadTokens"] += (usage.get("inputTokenDetails") or {}).get("cacheReadTokens", 0)
    return found


def formats_of(paths: list[Path]) -> dict[str, str]:
    """The format each file is detected as (a subagent file counts under its session's main file)."""
    groups, skipped = find_groups(paths)
    assert skipped == [], skipped
    found = {}
    for g in groups:
        for path in g.files:
            found[str(path)] = g.format
    return found


def other_formats_files(mine: str) -> list[Path]:
    """The real logs of every other format in tests/data."""
    return sorted(
        p for name, folder in FORMAT_DIRS.items() if name != mine
        for p in (DATA / folder).rglob("*") if p.is_file() and p.suffix in (".json", ".jsonl", ".md", ".db")
        and not p.name.endswith(".meta.json")
    )  # fmt: skip


def check_not_taken_for(mine: str) -> None:
    """No file of another format is detected as ``mine``."""
    for path in other_formats_files(mine):
        groups, _ = find_groups([path])
        assert all(g.format != mine for g in groups), path


def check_reimport_writes_nothing(t: Transcripts, paths: list[Path]) -> None:
    account, workspace, first = imported(t, paths, "again")
    assert first.messages > 0
    before = everything(t, account, workspace)
    again = import_paths(t, paths, account_id=account, workspace_id=workspace)
    assert (again.agents, again.messages) == (0, 0)
    assert everything(t, account, workspace) == before


def check_growth(t: Transcripts, log: Path, stages: list[bytes]) -> None:
    """Write each stage of a log in turn and import it: each import adds only what changed, and the
    last one stores what a fresh import of the whole log stores."""
    account, workspace = owner(t, "grower")
    before: dict[str, Json] = {}
    for number, content in enumerate(stages):
        log.write_bytes(content)
        done = import_paths(t, [log], account_id=account, workspace_id=workspace)
        after = everything(t, account, workspace)
        changed = [mid for mid, m in after.items() if before.get(mid) != m]
        assert done.skipped == []
        assert done.messages == len(changed), number
        if number:
            assert len(changed) < len(after), number  # not everything written again
        assert set(before) <= set(after)
        before = after
    assert len(agents(t, account, workspace)) == 1
    fresh_account, fresh_space, _ = imported(t, [log], "fresh")
    fresh = everything(t, fresh_account, fresh_space)
    assert [without_file_time(m) for m in fresh.values()] == [without_file_time(m) for m in before.values()]


def without_file_time(message: Json) -> Json:
    """A message without its id, nor a time taken from its file's modification time (a grown log
    keeps each message's time from the import that first stored it; a fresh import has today's)."""
    meta = message.get("metadata") or {}
    if meta.get("timestampFrom") == "file":
        meta = {k: v for k, v in meta.items() if k != "timestamp"}
    return {**{k: v for k, v in message.items() if k != "id"}, "metadata": meta}


ODD_KEYS = {"type", "role", "id", "content", "kind", "status", "name", "toolCallId", "toolUseID", "messages",
            "requests", "data", "parts", "result", "run", "usage", "tokens", "message", "v", "k"}  # fmt: skip
ODD_VALUES: list[Any] = [[1, "a"], {"x": {}}, 7, None, True, ""]


def odd(value: Any, counter: list[int]) -> Any:
    """``value`` with every field named in ``ODD_KEYS`` given, in turn, a value of another kind."""
    if isinstance(value, list):
        return [odd(v, counter) for v in value]
    if not isinstance(value, dict):
        return value
    found = {}
    for key, item in value.items():
        if key in ODD_KEYS and counter[0] % 3 == 0:
            found[key] = ODD_VALUES[(counter[0] // 3) % len(ODD_VALUES)]
        else:
            found[key] = odd(item, counter)
        counter[0] += 1
    return found


def check_odd_shapes(t: Transcripts, source: Path, tmp: Path) -> None:
    """A log of the right shape whose fields hold values of the wrong kind imports what it can:
    no crash, and no session passed over as unparseable."""
    raw = source.read_bytes()
    counter = [0]
    try:
        whole = orjson.loads(raw)
    except orjson.JSONDecodeError:
        lines = [orjson.loads(line) for line in raw.splitlines() if line.strip()]
        text = b"".join(orjson.dumps(odd(d, counter)) + b"\n" for d in lines)
    else:
        text = orjson.dumps(odd(whole, counter), option=orjson.OPT_INDENT_2)
    log = tmp / source.name
    log.write_bytes(text)
    _, _, summary = imported(t, [log], "odd")
    assert not [reason for _, reason in summary.skipped if "cannot be parsed" in reason or "refused" in reason]


PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="


def check_image_is_a_file_part(messages: list[Json]) -> None:
    """The one-pixel PNG is a ``file`` part with a data: URL, and no text carries its base64."""
    files = [{k: v for k, v in p.items() if k != "providerMetadata"} for m in messages for p in m["parts"]
             if p["type"] == "file"]  # fmt: skip
    assert files == [{"type": "file", "mediaType": "image/png", "url": f"data:image/png;base64,{PIXEL}"}]
    texts = [p.get("text", "") for m in messages for p in m["parts"] if p["type"] in ("text", "reasoning")]
    assert not [t for t in texts if PIXEL in t]


def check_no_conversation(t: Transcripts, log: Path) -> None:
    """A session file that holds no message yet makes no agent, and the summary says why."""
    account, workspace, summary = imported(t, [log], "empty")
    assert summary.skipped == [(str(log.resolve()), NO_CONVERSATION)]
    assert (summary.agents, summary.messages) == (0, 0) and agents(t, account, workspace) == []



def check_watch_follows_rewrites(
    t: Transcripts, folder: Path, name: str, stages: list[bytes], save: Callable[[Path, bytes], None] | None = None
) -> None:
    """``follow`` a folder while a log there is rewritten whole (by ``save``; by default a new file
    renamed over the old, as an agent saves a document): each version is imported as a fresh
    import of it stores it."""
    account, workspace = owner(t, "watcher")
    log = folder / name
    stop = threading.Event()
    watcher = threading.Thread(target=follow, args=(t, [str(folder)], account, workspace, None, stop))
    watcher.start()
    try:
        for number, content in enumerate(stages):
            want = fresh_count(t, folder.parent / f"fresh-{number}" / name, content)
            deadline = time.monotonic() + 30
            while not held(t, account, workspace, want):  # saved again until the watcher sees it
                assert time.monotonic() < deadline, f"the watcher did not import version {number}"
                (save or replace_whole)(log, content)
                until = time.monotonic() + 0.5
                while time.monotonic() < until and not held(t, account, workspace, want):
                    time.sleep(0.05)
    finally:
        stop.set()
        watcher.join(10)


def held(t: Transcripts, account: str, workspace: str, want: int) -> bool:
    return len(everything(t, account, workspace)) == want


def fresh_count(t: Transcripts, path: Path, content: bytes) -> int:
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    account, workspace, _ = imported(t, [path], "fresh")
    return len(everything(t, account, workspace))


def replace_whole(log: Path, content: bytes) -> None:
    saved = log.with_name(log.name + ".saving")
    saved.write_bytes(content)
    saved.replace(log)
