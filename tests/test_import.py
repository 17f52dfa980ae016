"""Importing the real Claude Code and Codex sessions in tests/data/transcripts (see its SOURCES.md).

Every count here is made by the test from the raw file, independently of the importer, and
compared with what Foldline stores, read back through ``Transcripts.messages``.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from foldline.importers import Summary, import_paths
from foldline.service import Transcripts
from foldline.settings import Settings
from foldline.store import open_store

DATA = Path(__file__).parent / "data" / "transcripts"
CLAUDE = DATA / "claude-code"
CODEX = DATA / "codex"
CORPUS = [CLAUDE, CODEX]  # the other agents' logs beside them have tests of their own
SUBAGENT_DIR = CLAUDE / "codemie-ai__codemie-code" / "incremental-subagents"
PERSISTED_CALL = "toolu_bdrk_01CaTZ658VzFpoM9YptVLjGg"
ENDED = "the turn ended before this tool returned"
Json = dict[str, Any]


def lines(path: Path) -> Iterator[Json]:
    for raw in path.read_bytes().splitlines():
        if raw.strip():
            yield orjson.loads(raw)


def unique_lines(path: Path) -> Iterator[Json]:
    seen: set[str] = set()
    for d in lines(path):
        if d.get("uuid") in seen:
            continue
        seen.add(d.get("uuid", ""))
        yield d


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Transcripts, str, str, Summary]]:
    """The whole corpus imported once into a fresh SQLite file."""
    db = str(tmp_path_factory.mktemp("corpus") / "foldline.db")
    t = Transcripts(open_store(db), settings=Settings(db=db))
    account = t.create_account("importer")["id"]
    workspace = t.create_workspace("sessions", [account])["id"]
    summary = import_paths(t, CORPUS, account_id=account, workspace_id=workspace)
    yield t, account, workspace, summary
    t.close()


def agent_for(t: Transcripts, workspace: str, key: str) -> str:
    agent = str(uuid.uuid5(uuid.UUID(workspace), key))
    (account,) = next(w["members"] for w in t.workspaces() if w["id"] == workspace)
    assert t.find_agent(account, agent) is not None, key
    return agent


def stored(t: Transcripts, account: str, agent: str) -> list[Json]:
    """Every message of an agent and of all its subagents."""
    found = list(t.messages(account, agent)["messages"])
    for call in t.agent(account, agent)["subagents"]:
        found += t.messages(account, agent, call=call)["messages"]
    return found


def tool_parts(messages: list[Json]) -> list[Json]:
    return [p for m in messages for p in m["parts"] if p["type"] == "dynamic-tool" or p["type"].startswith("tool-")]


def stored_counts(messages: list[Json]) -> Json:
    tools = tool_parts(messages)
    texts = [p["text"] for m in messages if m["role"] != "system" for p in m["parts"] if p["type"] == "text"]
    return {
        "calls": len(tools),
        "results": sum(1 for p in tools if p["state"] != "input-available" and ENDED not in p.get("errorText", "")),
        "text": sum(len(t) for t in texts),
        "reasoning": sum(len(p["text"]) for m in messages for p in m["parts"] if p["type"] == "reasoning"),
    }


# -- raw counts, made from the files alone --------------------------------------------------


def claude_raw(paths: list[Path]) -> Json:
    calls: set[str] = set()
    results: set[str] = set()
    text = reasoning = 0
    for d in [*(d for path in paths for d in unique_lines(path)), *progress_messages(paths)]:
        content = (d.get("message") or {}).get("content") if d.get("type") in ("user", "assistant") else None
        if isinstance(content, str):
            text += len(content)
            continue
        for block in content or []:
            kind = block.get("type")
            if kind == "text":
                text += len(block["text"])
            elif kind == "thinking" and block["thinking"].strip():
                reasoning += len(block["thinking"])
            elif kind == "tool_use":
                calls.add(block["id"])
            elif kind == "tool_result":
                results.add(block["tool_use_id"])
    return {"calls": len(calls), "results": len(results & calls), "text": text, "reasoning": reasoning}


def progress_messages(paths: list[Path]) -> list[Json]:
    """The messages of a subagent that has no file of its own, each once, from its parent's
    ``agent_progress`` lines."""
    if len(paths) != 1:
        return []
    inner = [d["data"]["message"] for d in unique_lines(paths[0])
             if d.get("type") == "progress" and d["data"].get("type") == "agent_progress"]  # fmt: skip
    return list({m["uuid"]: m for m in inner}.values())


def codex_raw(path: Path) -> Json:
    calls = results = text = reasoning = 0
    for d in lines(path):
        p = d.get("payload") or {}
        kind = p.get("type") if d.get("type") == "response_item" else None
        if kind in ("function_call", "custom_tool_call", "local_shell_call", "web_search_call", "tool_search_call"):
            calls += 1
            results += kind == "web_search_call"
        elif kind in ("function_call_output", "custom_tool_call_output", "tool_search_output"):
            results += 1
        elif kind == "message" and p["role"] == "assistant":
            text += sum(len(c.get("text", "")) for c in p["content"])
        elif kind == "reasoning":
            reasoning += sum(len(s["text"]) for s in p.get("summary") or [] if s["text"].strip())
    return {"calls": calls, "results": results, "text": text, "reasoning": reasoning}


def claude_sessions() -> list[tuple[str, list[Path]]]:
    """(agent key, its files) for every Claude Code session in the corpus, grouped by hand."""
    found = []
    for path in sorted(CLAUDE.rglob("*.jsonl")):
        first = next(lines(path))
        sid = (
            first["sessionId"]
            if "sessionId" in first
            else next(d["sessionId"] for d in lines(path) if "sessionId" in d)
        )
        if path.name.startswith("agent-"):
            main = (
                path.parents[1].with_suffix(".jsonl")
                if path.parent.name == "subagents"
                else path.parent / f"{sid}.jsonl"
            )
            if not main.exists():
                found.append((f"claude-code:{sid}:{path.stem}", [path]))
            continue
        agents = sorted(path.with_suffix("").glob("subagents/agent-*.jsonl"))
        agents += [a for a in sorted(path.parent.glob("agent-*.jsonl")) if next(lines(a))["sessionId"] == sid]
        found.append((f"claude-code:{sid}", [path, *agents]))
    return found


CLAUDE_SESSIONS = claude_sessions()
CODEX_FILES = sorted(CODEX.rglob("*.jsonl"))


def test_every_file_imports_with_nothing_skipped(corpus: tuple[Transcripts, str, str, Summary]) -> None:
    t, account, workspace, summary = corpus
    assert summary.skipped == []
    files = sum(len(files) for _, files in CLAUDE_SESSIONS) + len(CODEX_FILES)
    assert files == sum(len(list(folder.rglob("*.jsonl"))) for folder in CORPUS)  # the grouping above covers every file
    assert summary.agents == len(CLAUDE_SESSIONS) + len(CODEX_FILES)
    agents = t.list_agents(account, workspace)["agents"]
    assert len(agents) == summary.agents
    assert all(a["title"] for a in agents)


@pytest.mark.parametrize("key,files", CLAUDE_SESSIONS, ids=[files[0].name for _, files in CLAUDE_SESSIONS])
def test_claude_counts_match_the_raw_file(
    corpus: tuple[Transcripts, str, str, Summary], key: str, files: list[Path]
) -> None:
    t, account, workspace, _ = corpus
    messages = stored(t, account, agent_for(t, workspace, key))
    assert stored_counts(messages) == claude_raw(files)


@pytest.mark.parametrize("path", CODEX_FILES, ids=[p.name[-20:] for p in CODEX_FILES])
def test_codex_counts_match_the_raw_file(corpus: tuple[Transcripts, str, str, Summary], path: Path) -> None:
    t, account, workspace, _ = corpus
    session_id = next(d["payload"]["id"] for d in lines(path) if d["type"] == "session_meta")
    messages = stored(t, account, agent_for(t, workspace, f"codex:{session_id}"))
    counts = stored_counts([m for m in messages if m["role"] == "assistant"])
    assert counts == codex_raw(path)
    prompts = [d["payload"]["message"] for d in lines(path) if d["payload"].get("type") == "user_message"]
    users = [p["text"] for m in messages if m["role"] == "user" for p in m["parts"] if p["type"] == "text"]
    for prompt in prompts:  # every typed prompt is shown, as a real (not injected) user message
        assert any(prompt.strip() in text for text in users)


def test_every_tool_result_text_is_kept(corpus: tuple[Transcripts, str, str, Summary]) -> None:
    t, account, workspace, _ = corpus
    for key, files in CLAUDE_SESSIONS:
        parts = {p["toolCallId"]: p for p in tool_parts(stored(t, account, agent_for(t, workspace, key)))}
        for path in files:
            for d in unique_lines(path):
                content = (d.get("message") or {}).get("content")
                for block in content if isinstance(content, list) else []:
                    if block.get("type") != "tool_result":
                        continue
                    part = parts[block["tool_use_id"]]
                    kept = orjson.dumps(part.get("output", part.get("errorText"))).decode()
                    assert part["state"] == ("output-error" if block.get("is_error") else "output-available")
                    texts = (
                        [block["content"]]
                        if isinstance(block["content"], str)
                        else [b["text"] for b in block["content"] or [] if b.get("type") == "text"]
                    )
                    for text in texts:
                        if "<persisted-output>" not in text:
                            assert orjson.dumps(text).decode()[1:-1] in kept


def test_persisted_output_is_replaced_by_the_whole_output(corpus: tuple[Transcripts, str, str, Summary]) -> None:
    t, account, workspace, _ = corpus
    agent = agent_for(t, workspace, "claude-code:e9fb405b-169f-40eb-9396-7e75076f045d")
    part = next(p for p in tool_parts(stored(t, account, agent)) if p["toolCallId"] == PERSISTED_CALL)
    raw = next(
        d["toolUseResult"]["stdout"]
        for d in lines(SUBAGENT_DIR / "turn-2" / "subagents" / "agent-a485154.jsonl")
        if PERSISTED_CALL in str((d.get("message") or {}).get("content")) and d.get("type") == "user"
    )
    assert part["output"] == raw
    assert len(raw) > 100_000 and "<persisted-output>" not in part["output"]


def test_subagents_are_reachable_under_the_call_that_started_them(
    corpus: tuple[Transcripts, str, str, Summary],
) -> None:
    t, account, workspace, _ = corpus
    cases = {  # session -> (spawning tool, subagent count): the three generations
        "claude-code:fe5e1c67-53e7-4862-81ae-d0e013e3270b": ("Task", 5),  # sidechain lines
        "claude-code:a7da6a22-facc-4fcd-8bab-f83c87862004": ("Task", 1),  # agent-*.jsonl beside it
        "claude-code:ef958aa1-0e93-49f0-bb71-150f63befcd1": ("Agent", 6),  # <session>/subagents/
        "claude-code:e9fb405b-169f-40eb-9396-7e75076f045d": ("Task", 1),
    }
    for key, (tool, count) in cases.items():
        agent = agent_for(t, workspace, key)
        calls = t.agent(account, agent)["subagents"]
        spawned = [p for p in tool_parts(t.messages(account, agent)["messages"]) if p["type"] == f"tool-{tool}"]
        assert len(calls) == count and set(calls) <= {p["toolCallId"] for p in spawned}
        for call in calls:
            sub = t.messages(account, agent, call=call)["messages"]
            assert sub and t.agent(account, agent)["id"] == agent


def test_thinking_signatures_and_encrypted_reasoning_are_never_text(
    corpus: tuple[Transcripts, str, str, Summary],
) -> None:
    t, account, workspace, _ = corpus
    secrets = set()
    for path in (p for folder in CORPUS for p in folder.rglob("*.jsonl")):
        for d in lines(path):
            blocks = (d.get("message") or {}).get("content")
            for b in blocks if isinstance(blocks, list) else []:
                if b.get("type") == "thinking" and b.get("signature"):
                    secrets.add(b["signature"][:64])
            if (d.get("payload") or {}).get("encrypted_content"):
                secrets.add(d["payload"]["encrypted_content"][:64])
    secrets = {s for s in secrets if len(s) >= 32}  # Entire put "REDACTED" in some, which any text may say
    assert secrets
    for agent in t.list_agents(account, workspace)["agents"]:
        shown = [p for m in stored(t, account, agent["id"]) for p in m["parts"] if p["type"] in ("text", "reasoning")]
        body = orjson.dumps(shown).decode()  # (a tool output may quote another log: that is its real output)
        assert not any(s in body for s in secrets)


def test_images_compaction_and_mcp_tools(corpus: tuple[Transcripts, str, str, Summary]) -> None:
    t, account, workspace, _ = corpus
    shot = stored(t, account, agent_for(t, workspace, "claude-code:0d3a8e6f-290f-4105-a327-a2496e5e2a83"))
    files = [p for m in shot for p in m["parts"] if p["type"] == "file"]
    assert files and files[0]["url"].startswith("data:image/png;base64,")
    compacted = stored(t, account, agent_for(t, workspace, "claude-code:624a4a58-b34c-462d-a70d-13421c8125a8"))
    assert any(m["metadata"].get("compactSummary") for m in compacted)
    assert any(m["metadata"].get("subtype") == "compact_boundary" for m in compacted)
    mcp = stored(t, account, agent_for(t, workspace, "codex:019e1695-0522-7c83-8b39-0dd379793f80"))
    assert {p.get("toolName") for p in tool_parts(mcp)} >= {"mcp__node_repl__js"}
    claude_mcp = stored(t, account, agent_for(t, workspace, "claude-code:cfa1e878-62b5-4e40-b281-bbf9b250d766"))
    assert {p.get("toolName") for p in tool_parts(claude_mcp)} >= {"mcp__happy__change_title"}


def test_importing_again_adds_nothing(corpus: tuple[Transcripts, str, str, Summary]) -> None:
    t, account, workspace, _ = corpus
    ids = [c for a in t.list_agents(account, workspace)["agents"] for c in [a["id"]]]
    store = open_store(t.settings.db)
    before = store.seqs(ids)  # any write takes a seq
    again = import_paths(t, CORPUS, account_id=account, workspace_id=workspace)
    assert (again.agents, again.messages, again.parts, again.skipped) == (0, 0, 0, [])
    assert store.seqs(ids) == before
    store.close()
    assert len(t.list_agents(account, workspace)["agents"]) == len(ids)
