"""The importer's output, held against a golden copy made by the importer that wrote one message
per call (before the bulk write path): the real logs in tests/data/transcripts imported into a
new store of each backend give the same agents, the same messages in the same order (whole and
cut) and the same search hits.

``tests/data/import-golden.json`` holds, per conversation, a digest of each message as read back,
and every hit of a few searches. Written again (only when the importer is meant to change what it
stores) by ``FOLDLINE_WRITE_GOLDEN=1 .venv/bin/pytest tests/test_import_golden.py -k sqlite``.
"""

from __future__ import annotations

import hashlib
import math
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import orjson

from foldline.importers import import_paths
from foldline.service import Transcripts
from foldline.settings import Settings
from foldline.store import open_store

DATA = Path(__file__).parent / "data"
GOLDEN = DATA / "import-golden.json"
# A workspace of a fixed id, so every agent and message id the importer derives from it is too.
WORKSPACE = str(uuid.uuid5(uuid.NAMESPACE_URL, "foldline import golden"))
# Rare and common words, a phrase, a word with its space: every hit of each is compared (where
# it is, and a digest of the whole hits, snippets included).
QUERIES = ["README", "pytest", "git status", "error", "def "]
Json = dict[str, Any]


def digest(value: Any) -> str:
    return hashlib.blake2b(orjson.dumps(value, option=orjson.OPT_SORT_KEYS), digest_size=10).hexdigest()


def all_messages(t: Transcripts, account: str, agent: str, call: str | None, cut: bool) -> list[Json]:
    found: list[Json] = []
    before = None
    while True:
        page = t.messages(account, agent, call=call, cut=cut, before=before)
        # a page is oldest first, the next one older; when a message was written is not the log's
        found = [{k: v for k, v in m.items() if k != "createdAt"} for m in page["messages"]] + found
        before = page["next"]
        if before is None:
            return found


def conversation(t: Transcripts, account: str, agent: str, call: str | None) -> Json:
    whole = all_messages(t, account, agent, call, cut=False)
    cut = all_messages(t, account, agent, call, cut=True)
    return {
        "messages": [[m["id"], m["role"], len(m["parts"]), digest(m)] for m in whole],
        "cut": digest(cut),
    }


def hits(t: Transcripts, account: str, q: str) -> Json:
    found: list[Json] = []
    cursor = None
    while True:
        page = t.search(account, q, workspace_id=WORKSPACE, limit=100, cursor=cursor, seconds=math.inf)
        found += page["hits"]
        cursor = page["next"]
        if cursor is None:
            # The order (newest chunk first) is the store's; the golden copy is about what is found.
            found.sort(key=lambda h: orjson.dumps(h, option=orjson.OPT_SORT_KEYS))
            # A place per match (as when a hit was one match); the digest is of the results themselves.
            places = [f"{h['message_id']} {h['call'] or ''} {h['part']} {h['field']} {m['start']}"
                      for h in found for m in h["matches"]]  # fmt: skip
            return {"places": sorted(places), "results": len(found), "hits": digest(found)}


def dump(t: Transcripts, account: str) -> Json:
    agents: Json = {}
    listed = t.list_agents(account, WORKSPACE, limit=100)
    assert listed["next"] is None
    for row in sorted(listed["agents"], key=lambda a: a["id"]):
        agent = t.agent(account, row["id"])
        shown = {k: v for k, v in agent.items() if k not in ("owner_id", "prices", "live")}
        shown["conversations"] = {
            call or "": conversation(t, account, row["id"], call) for call in [None, *sorted(agent["subagents"])]
        }
        agents[row["id"]] = shown
    return {"agents": agents, "search": {q: hits(t, account, q) for q in QUERIES}}


# The two formats the golden copy was made of (the new formats were added after it).
SOURCES = [DATA / "transcripts" / "claude-code", DATA / "transcripts" / "codex"]


def test_import_stores_what_the_golden_copy_holds(fresh_url: str) -> None:
    t = Transcripts(open_store(fresh_url), settings=Settings(db=fresh_url))
    try:
        account = t.create_account("importer")["id"]
        t._store.create_workspace(WORKSPACE, "sessions", [account])
        summary = import_paths(t, SOURCES, account_id=account, workspace_id=WORKSPACE)
        assert not summary.skipped
        got = {"summary": [summary.agents, summary.messages, summary.parts], **dump(t, account)}
    finally:
        t.close()
    if os.environ.get("FOLDLINE_WRITE_GOLDEN"):
        GOLDEN.write_bytes(orjson.dumps(got, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2) + b"\n")
    assert_golden(got)


def test_workers_parsing_ahead_store_what_the_golden_copy_holds(fresh_url: str) -> None:
    """``foldline import`` with two worker processes parsing sessions ahead of its writes
    (importers.ahead) stores exactly what the one-process import stores."""
    t = Transcripts(open_store(fresh_url), settings=Settings(db=fresh_url))
    try:
        account = t.create_account("importer")["id"]
        t._store.create_workspace(WORKSPACE, "sessions", [account])
    finally:
        t.close()
    env = {**os.environ, "FOLDLINE_IMPORT_WORKERS": "2", "FOLDLINE_IMPORT_BACKLOG_MB": "0.5"}
    args = ["import", "--json", "--db", fresh_url, "--account", account, "--workspace", WORKSPACE, *map(str, SOURCES)]
    done = subprocess.run([sys.executable, "-m", "foldline.cli", *args], env=env, capture_output=True, check=True)
    summary = orjson.loads(done.stdout)
    assert not summary["skipped"]
    t = Transcripts(open_store(fresh_url), settings=Settings(db=fresh_url))
    try:
        assert_golden({"summary": [summary["agents"], summary["messages"], summary["parts"]], **dump(t, account)})
    finally:
        t.close()


def assert_golden(got: Json) -> None:
    golden = orjson.loads(GOLDEN.read_bytes())
    assert got["summary"] == golden["summary"]
    assert sorted(got["agents"]) == sorted(golden["agents"])
    for agent, shown in golden["agents"].items():
        assert got["agents"][agent] == shown, agent
    for q in QUERIES:
        assert got["search"][q] == golden["search"][q], q
