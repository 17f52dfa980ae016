"""Token usage and estimated cost: what the importers keep from the logs, what the write door
takes from API writers, the totals the agents list and `foldline usage` read, and genai-prices'
own figures; on SQLite and PostgreSQL.

Every expected count is summed here from the raw log lines, not by the importer.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner
from conftest import World
from core_helpers import assistant, text
from genai_prices import Usage as PriceUsage
from genai_prices import __version__ as prices_version
from genai_prices import calc_price
from hypothesis import given, settings
from hypothesis import strategies as st

from foldline import Invalid
from foldline.cli import main
from foldline.cli.usage import money
from foldline.importers import import_paths
from foldline.service import Transcripts
from foldline.usage import Usage as usage_of
from foldline.usage import _rates as rates
from foldline.usage import estimate

DATA = Path(__file__).parent / "data" / "transcripts"
CLAUDE = [
    DATA / "claude-code" / "jnarowski__agentcmd" / "full-session.jsonl",
    DATA / "claude-code" / "codemie-ai__codemie-code" / "session-3fe1b6bc.jsonl",
    DATA / "claude-code" / "daaain__claude-code-log" / "-src-deep-manifest",  # a session and its agent file
]
CODEX = [
    DATA / "codex" / "jnarowski__agentcmd" / "rollout-2025-09-24T19-22-20-01997e76-d124-7592-9cac-2ec05abbca08.jsonl",
    DATA
    / "codex"
    / "codemie-ai__codemie-code"
    / "rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl",
]
Json = dict[str, Any]
KEYS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")


def lines(path: Path) -> Iterator[Json]:
    files = sorted(path.glob("*.jsonl")) if path.is_dir() else [path]
    for f in files:
        for raw in f.read_bytes().splitlines():
            if raw.strip():
                yield orjson.loads(raw)


def claude_usage(path: Path) -> dict[str, int]:
    """Each assistant message id's usage (its lines repeat it: the last one counts), summed."""
    by_id: dict[str, Json] = {}
    for d in lines(path):
        body = d.get("message")
        if d.get("type") == "assistant" and isinstance(body, dict) and isinstance(body.get("usage"), dict):
            by_id[str(body.get("id") or d.get("uuid"))] = body["usage"]
    out = dict.fromkeys(KEYS, 0)
    for u in by_id.values():
        read, write = u.get("cache_read_input_tokens") or 0, u.get("cache_creation_input_tokens") or 0
        out["input_tokens"] += u.get("input_tokens", 0) + read + write
        out["output_tokens"] += u.get("output_tokens", 0)
        out["cache_read_tokens"] += read
        out["cache_write_tokens"] += write
    return out


def codex_usage(path: Path) -> dict[str, int]:
    """The session's total: the last token_count event's total_token_usage."""
    total: Json = {}
    for d in lines(path):
        p = d.get("payload") or {}
        if d.get("type") == "event_msg" and p.get("type") == "token_count" and isinstance(p.get("info"), dict):
            total = p["info"]["total_token_usage"]
    return {"input_tokens": total["input_tokens"], "output_tokens": total["output_tokens"],
            "cache_read_tokens": total["cached_input_tokens"], "cache_write_tokens": 0}  # fmt: skip


@pytest.fixture
def imported(world: World, transcripts: Transcripts) -> list[tuple[Path, str]]:
    out = []
    for path in [*CLAUDE, *CODEX]:
        workspace = transcripts.create_workspace(path.stem[:30], [world.alice_id])["id"]
        import_paths(transcripts, [path], account_id=world.alice_id, workspace_id=workspace)
        out.append((path, workspace))
    return out


def test_imported_usage_is_the_sum_of_the_logs_usage_lines(world: World, imported: list[tuple[Path, str]]) -> None:
    for path, workspace in imported:
        (agent,) = world.alice.agents_page(workspace)["agents"]
        expected = codex_usage(path) if "codex" in path.parts else claude_usage(path)
        assert {k: agent["usage"][k] for k in KEYS} == expected, path
        assert expected["input_tokens"] > 0
        assert agent["usage"]["cost_usd"] is not None and agent["usage"]["cost_usd"] > 0  # known models
        by_model = world.alice.agent(agent["id"])["usage_by_model"]
        assert {k: sum(m[k] for m in by_model) for k in KEYS} == expected


def test_imported_usage_sorts_the_list_by_tokens(world: World, transcripts: Transcripts) -> None:
    workspace = transcripts.create_workspace("both", [world.alice_id])["id"]
    import_paths(transcripts, [CLAUDE[0], CODEX[0]], account_id=world.alice_id, workspace_id=workspace)
    agents = world.alice.agents_page(workspace, sort="tokens")["agents"]
    totals = [a["usage"]["total_tokens"] for a in agents]
    assert len(totals) == 2 and totals == sorted(totals, reverse=True)


def message_with(usage: Any, model: str | None = "claude-sonnet-4-5-20250929", **more: Any) -> Json:
    meta: Json = {"usage": usage, **more}
    if model is not None:
        meta["model"] = model
    return {**assistant([text("ok")]), "metadata": meta}


def test_the_cost_of_a_known_model_is_genai_prices_own(world: World) -> None:
    details = {"noCacheTokens": 5_000, "cacheReadTokens": 100_000, "cacheWriteTokens": 15_000}
    usage = {"inputTokens": 120_000, "outputTokens": 3_000, "inputTokenDetails": details}
    world.alice.put_message(world.agent, message_with(usage))
    world.alice.put_message(world.agent, message_with(usage, "gpt-5"))
    own = [
        calc_price(PriceUsage(input_tokens=120_000, output_tokens=3_000, cache_read_tokens=100_000,
                         cache_write_tokens=15_000), model).total_price
        for model in ("claude-sonnet-4-5-20250929", "gpt-5")
    ]  # fmt: skip
    agent = world.alice.agent(world.agent)
    assert Decimal(str(agent["usage"]["cost_usd"])) == pytest.approx(sum(own), abs=Decimal("1e-9"))
    by_model = {m["model"]: m for m in agent["usage_by_model"]}
    assert Decimal(str(by_model["gpt-5"]["cost_usd"])) == pytest.approx(own[1], abs=Decimal("1e-9"))
    assert agent["usage"]["input_tokens"] == 240_000 and agent["usage"]["cache_read_tokens"] == 200_000
    assert agent["prices"] == {"source": "genai-prices", "version": prices_version}


def test_an_unknown_model_shows_its_tokens_and_no_cost(world: World) -> None:
    world.alice.put_message(world.agent, message_with({"inputTokens": 1000, "outputTokens": 10}, "my-local-llama"))
    agent = world.alice.agent(world.agent)
    assert agent["usage"]["total_tokens"] == 1010 and agent["usage"]["cost_usd"] is None
    assert agent["usage_by_model"] == [{"model": "my-local-llama", "messages": 1, "input_tokens": 1000,
                                        "output_tokens": 10, "cache_read_tokens": 0, "cache_write_tokens": 0,
                                        "total_tokens": 1010, "cost_usd": None, "priced_cost_usd": 0.0,
                                        "unpriced_messages": 1}]  # fmt: skip
    # a known model next to it: its tokens add up, the total's cost stays unknown, never a part of it
    world.alice.put_message(world.agent, message_with({"inputTokens": 1000, "outputTokens": 10}))
    agent = world.alice.agent(world.agent)
    assert agent["usage"]["total_tokens"] == 2020 and agent["usage"]["cost_usd"] is None
    assert {m["model"]: m["cost_usd"] is not None for m in agent["usage_by_model"]} == {
        "my-local-llama": False, "claude-sonnet-4-5-20250929": True}  # fmt: skip
    # beside it, what the priced messages cost, and how many had no price
    known = next(m["cost_usd"] for m in agent["usage_by_model"] if m["model"] == "claude-sonnet-4-5-20250929")
    assert (agent["usage"]["priced_cost_usd"], agent["usage"]["unpriced_messages"]) == (known, 1)
    assert money(agent["usage"]) == f"${known:,.2f} + ?"  # as `foldline usage` prints the total
    # a message that names no model counts its tokens, with no cost
    world.alice.put_message(world.agent, message_with({"inputTokens": 5, "outputTokens": 5}, None))
    assert {m["model"] for m in world.alice.agent(world.agent)["usage_by_model"]} >= {None}


def test_a_rewrite_takes_back_what_the_message_counted(world: World) -> None:
    message = message_with({"inputTokens": 1000, "outputTokens": 10})
    world.alice.put_message(world.agent, message)
    world.alice.put_message(world.agent, {**message, "metadata": {"usage": {"inputTokens": 7, "outputTokens": 3}}})
    agent = world.alice.agent(world.agent)
    assert (agent["messages"], agent["usage"]["total_tokens"]) == (1, 10)
    world.alice.put_message(world.agent, {**message, "metadata": {}})
    agent = world.alice.agent(world.agent)
    assert (agent["messages"], agent["usage"]["total_tokens"], agent["usage_by_model"]) == (1, 0, [])


def test_the_ai_sdk_5_spelling_and_details_only_are_read(world: World) -> None:
    world.alice.put_message(world.agent, message_with({"inputTokens": 100, "outputTokens": 1, "cachedInputTokens": 60}))
    details = {"noCacheTokens": 10, "cacheReadTokens": 20, "cacheWriteTokens": 30}
    world.alice.put_message(world.agent, message_with({"outputTokens": 1, "inputTokenDetails": details}))
    usage = world.alice.agent(world.agent)["usage"]
    assert (usage["input_tokens"], usage["cache_read_tokens"], usage["cache_write_tokens"]) == (160, 80, 30)


def test_a_subagents_usage_counts_for_its_agent(world: World) -> None:
    world.alice.put_message(world.agent, message_with({"inputTokens": 100, "outputTokens": 1}), call="task-1")
    assert world.alice.agent(world.agent)["usage"]["total_tokens"] == 101


@pytest.mark.parametrize(
    ("usage", "where"),
    [
        ("lots", "metadata.usage"),
        ({"inputTokens": -1}, "metadata.usage.inputTokens"),
        ({"inputTokens": 1.5}, "metadata.usage.inputTokens"),
        ({"outputTokens": True}, "metadata.usage.outputTokens"),
        ({"outputTokens": 10**13}, "metadata.usage.outputTokens"),
        ({"inputTokenDetails": []}, "metadata.usage.inputTokenDetails"),
        ({"inputTokenDetails": {"cacheReadTokens": "9"}}, "metadata.usage.inputTokenDetails.cacheReadTokens"),
        ({"inputTokens": 5, "inputTokenDetails": {"cacheReadTokens": 9}}, "metadata.usage.inputTokens"),
        ({"outputTokenDetails": {"reasoningTokens": -2}}, "metadata.usage.outputTokenDetails.reasoningTokens"),
    ],
)
def test_a_usage_of_another_shape_is_refused_with_where(world: World, usage: Any, where: str) -> None:
    with pytest.raises(Invalid) as refused:
        world.alice.put_message(world.agent, message_with(usage))
    assert refused.value.where == where
    assert world.alice.agent(world.agent)["messages"] == 0  # nothing was stored


def test_the_usage_command_sums_by_day_model_and_agent(
    world: World, transcripts: Transcripts, db_url: str, imported: list[tuple[Path, str]]
) -> None:
    runner = CliRunner()
    expected = dict.fromkeys(KEYS, 0)
    for path, _ in imported:
        found = codex_usage(path) if "codex" in path.parts else claude_usage(path)
        for k in KEYS:
            expected[k] += found[k]
    totals = []
    for by in ("day", "model", "agent"):
        result = runner.invoke(main, ["usage", "--by", by, "--json", "--db", db_url, "--account", world.alice_id])
        assert result.exit_code == 0, result.output
        found = orjson.loads(result.output)
        assert found["by"] == by and found["prices"]["version"] == prices_version
        assert {k: sum(r[k] for r in found["rows"]) for k in KEYS} == expected
        totals.append(found["total"])
    assert totals[0] == totals[1] == totals[2]
    assert {k: totals[0][k] for k in KEYS} == expected
    text_out = runner.invoke(main, ["usage", "--by", "model", "--db", db_url, "--account", world.alice_id]).output
    assert "claude-" in text_out and "gpt-5-codex" in text_out and "genai-prices" in text_out
    bob = runner.invoke(main, ["usage", "--json", "--db", db_url, "--account", world.bob_id])
    assert orjson.loads(bob.output)["rows"] == []  # nothing of another account's workspaces
    bad = runner.invoke(main, ["usage", "--workspace", str(uuid.uuid4()), "--db", db_url, "--account", world.bob_id])
    assert bad.exit_code != 0


def test_concurrent_writers_lose_no_count(world: World, transcripts: Transcripts) -> None:
    """Writers to an agent and its subagents at once: each change is relative, none is lost."""

    def writer(call: str | None) -> None:
        for _ in range(8):
            message = message_with({"inputTokens": 3, "outputTokens": 1})
            transcripts.put_message(world.alice_id, world.agent, message["id"], message, call=call)

    threads = [threading.Thread(target=writer, args=(call,)) for call in (None, "a", "b", "c")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    agent = world.alice.agent(world.agent)
    assert (agent["messages"], agent["usage"]["input_tokens"], agent["usage"]["output_tokens"]) == (32, 96, 32)
    (row,) = agent["usage_by_model"]
    assert row["messages"] == 32


PRICED = [("claude-sonnet-4-5-20250929", None), ("claude-opus-4-5-20251101", None), ("gpt-5", "openai"),
          ("gemini-2.5-pro", None), ("deepseek-chat", "deepseek"), ("my-local-llama", None)]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(
    model=st.sampled_from(PRICED),
    counts=st.tuples(*(st.integers(0, 2 * 10**6) for _ in range(4))),
    when=st.datetimes(min_value=datetime(2024, 1, 1), max_value=datetime(2027, 1, 1), timezones=st.just(UTC)),
)
def test_a_cost_is_genai_prices_own_to_the_picodollar(model: tuple[str, str | None], counts: tuple[int, ...],
                                                      when: datetime) -> None:  # fmt: skip
    """A day's rates (asked once, then multiplied) give genai-prices' answer for every usage:
    across its context tiers (200,000 tokens for Sonnet 4.5 and Gemini 2.5 Pro), for a price by
    the hour (DeepSeek's off-peak, asked each time) and for a model it does not know."""
    read, write, more, output = counts
    usage = usage_of(read + write + more, output, read, write)
    name, provider = model
    asked = PriceUsage(input_tokens=usage.input, output_tokens=output, cache_read_tokens=read, cache_write_tokens=write)
    try:
        own = Decimal(calc_price(asked, name, provider_id=provider, genai_request_timestamp=when).total_price)
    except LookupError:
        expected = None
    else:
        expected = int((own * 10**12).to_integral_value(ROUND_HALF_UP))
    if not usage.total:  # no tokens cost nothing, on any model
        expected = 0
    assert estimate(usage, name, provider, when) == expected


def test_a_days_rates_are_asked_once_per_tier() -> None:
    """The estimate is not asked of genai-prices per message: one day's messages of a model cost
    a few questions per context tier (the property test above holds their answers)."""
    day = datetime(2025, 11, 3, 9, tzinfo=UTC)
    rates.cache_clear()
    for name in ("claude-opus-4-5-20251101", "claude-sonnet-4-5-20250929"):
        before = rates.cache_info().misses
        for n in range(50):
            estimate(usage_of(1_000 + 10_000 * n, 50), name, None, day + timedelta(minutes=n))
        assert rates.cache_info().misses - before == (1 if name.startswith("claude-opus") else 2)
