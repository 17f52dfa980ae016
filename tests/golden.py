"""A digest of what an import stored, to compare two importers by (``tests/test_import_golden.py``).

Run as a script to write the golden file from the code on ``PYTHONPATH``:
``python tests/golden.py tests/data/golden/import.json``.
"""

from __future__ import annotations

import hashlib
import sys
import tempfile
from pathlib import Path
from typing import Any

import orjson

DATA = Path(__file__).parent / "data" / "transcripts"
SOURCES = [DATA / "claude-code", DATA / "codex"]
# Words common and rare, long and short, a phrase, a path and text outside ASCII.
WORDS = ["error", "test", "import", "README", "npm install", '"file path"', "git", "ok", "é", "src/", "TODO"]


def digest(value: Any) -> str:
    return hashlib.sha256(orjson.dumps(value, option=orjson.OPT_SORT_KEYS)).hexdigest()[:16]


def snapshot(t: Any, account: str, workspace: str) -> dict[str, Any]:
    """Every agent's and subagent's messages (whole, in order) and every search hit of ``WORDS``
    (as a set: the order of chunk ids is the writer's business), each as a count and a digest.
    Ids are the workspace's (uuid5 in its namespace), so a conversation is named by the digest of
    its messages without their ids, and a message by its place in it."""
    agents: list[str] = []
    cursor = None
    while True:
        page = t.list_agents(account, workspace, limit=100, cursor=cursor)
        agents += [a["id"] for a in page["agents"]]
        if (cursor := page["next"]) is None:
            break
    named: dict[tuple[str, str], str] = {}  # (agent, call) -> the conversation's digest
    place: dict[str, int] = {}  # message id -> its place in its conversation
    for agent in agents:
        for call in [None, *t.agent(account, agent)["subagents"]]:
            messages: list[Any] = []
            before = None
            while True:
                page = t.messages(account, agent, call=call, before=before)
                messages = page["messages"] + messages
                if (before := page["next"]) is None:
                    break
            named[(agent, call or "")] = digest([{k: v for k, v in m.items() if k != "id"} for m in messages])
            place.update((m["id"], n) for n, m in enumerate(messages))
    hits: dict[str, dict[str, Any]] = {}
    for word in WORDS:
        found = []
        cursor = None
        while True:
            page = t.search(account, word, limit=100, cursor=cursor, seconds=float("inf"))
            found += [[named[(h["agent_id"], h["call"] or "")], place[h["message_id"]], h["part"], h["field"],
                       m["start"], m["end"], m["hidden"]] for h in page["hits"] for m in h["matches"]]  # fmt: skip
            if (cursor := page["next"]) is None:
                break
        hits[word] = {"count": len(found), "digest": digest(sorted(found))}
    return {"conversations": sorted(named.values()), "messages": len(place), "hits": hits}


def imported(db: str) -> dict[str, Any]:
    """Import ``SOURCES`` into a new store at ``db`` and take its snapshot."""
    from foldline.importers import import_paths
    from foldline.service import Transcripts
    from foldline.store import open_store

    t = Transcripts(open_store(db))
    try:
        account = t.create_account("golden")["id"]
        workspace = t.create_workspace("golden", [account])["id"]
        import_paths(t, SOURCES, account_id=account, workspace_id=workspace)
        return snapshot(t, account, workspace)
    finally:
        t.close()


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        Path(sys.argv[1]).write_bytes(orjson.dumps(imported(str(Path(tmp) / "golden.db")), option=orjson.OPT_INDENT_2))
