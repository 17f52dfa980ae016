"""``foldline maintenance restamp`` (and its old name, ``foldline restamp``): messages stored
before read stamps, or under other metadata schemas, are checked once and stamped if they pass,
so reads send them as stored; the rest keep every check."""

from __future__ import annotations

from typing import Any

import orjson
from click.testing import CliRunner
from conftest import World
from core_helpers import assistant, bash, new_id, put, user

from foldline.cli import main
from foldline.registry import Registry
from foldline.service import Transcripts
from foldline.settings import Settings
from foldline.store import Store


def with_metadata(schema: dict[str, Any]) -> Registry:
    """The default registry with a user message's metadata held to ``schema``."""
    base = Registry.load()
    tools = {name: {"text": t.text, "retired": t.retired, "input": t.input, "output": t.output}
             for name, t in base.tools.items()}  # fmt: skip
    data = {"tools": tools, "dynamic_text_prefixes": list(base.dynamic_text_prefixes),
            "metadata": {**base.metadata, "user": schema}}  # fmt: skip
    return Registry.from_dict(data)


def test_restamp_stamps_what_passes_and_keeps_what_does_not(world: World, store: Store, settings: Settings) -> None:
    # Written under the shipped registry; read under one that wants a user's metadata to name a source.
    passes, fails = new_id(), new_id()
    put(world.alice, world.agent, user("from the shell", passes) | {"metadata": {"source": "cli"}})
    put(world.alice, world.agent, user("from nowhere", fails) | {"metadata": {}})
    put(world.alice, world.agent, assistant([bash("ok\n" * 3000)]))
    strict = Transcripts(store, with_metadata({"type": "object", "required": ["source"]}), settings)
    before = strict.page_json(world.alice_id, world.agent, cut=True)
    seq_before = strict.messages(world.alice_id, world.agent)["messages"]  # what followers were sent

    stamped, kept = strict.restamp()

    assert kept >= 1  # the user message without a source, and any other account's leftovers
    assert stamped >= 2
    assert strict.restamp() == (0, kept)  # once stamped, a message is not looked at again
    after = strict.page_json(world.alice_id, world.agent, cut=True)
    assert orjson.loads(after) == orjson.loads(before)  # the same page, now sent as stored
    assert [m["id"] for m in orjson.loads(after)["messages"]][:2] == [passes, fails]
    assert strict.messages(world.alice_id, world.agent)["messages"] == seq_before  # nothing rewritten


def test_the_restamp_command_says_what_it_did(tmp_path: Any) -> None:
    db = str(tmp_path / "old.db")
    runner = CliRunner()
    made = orjson.loads(runner.invoke(main, ["account", "create", "ada", "--json", "--db", db]).output)
    with Transcripts.open(Settings(db=db)) as t:
        space = t.create_workspace("w", [made["id"]])
        agent = t.create_agent(made["id"], space["id"])["id"]
        mid = new_id()
        t.put_message(made["id"], agent, mid, user("hello", mid))
    result = runner.invoke(main, ["maintenance", "restamp", "--db", db, "--json"])
    assert result.exit_code == 0, result.output
    assert orjson.loads(result.output.splitlines()[-1]) == {"stamped": 0, "kept": 0}  # stamped when written
    text = runner.invoke(main, ["restamp", "--db", db]).output
    assert "0 messages stamped" in text
