"""Whole exports (issue 21): JSON equal to whole reads, Markdown whose fences no content breaks,
HTML escaped; subagents included, big parts whole, the one not-found for others, no secret."""

from __future__ import annotations

import gc
import io
import json
import time
from typing import Any

import httpx
import orjson
import pytest
from click.testing import CliRunner
from conftest import World
from core_helpers import BIG_OUTPUT, LONG_THOUGHT, add_member, assistant, bash, new_id, put, text, thought, tool, user
from fake_secrets import make as make_secrets
from markdown_it import MarkdownIt
from test_stored_rows import registry_with

from foldline import NotFound
from foldline.cli import main
from foldline.local_account import ensure_local
from foldline.service import Transcripts
from foldline.settings import Settings
from foldline.store import Store, open_store

Json = dict[str, Any]

TICKS = "a run of backticks ``````````` and a fence of its own:\n````\nnot the end\n````\n"
HOSTILE = "<script>window.__pwned = 1</script> & <img src=x onerror=alert(1)> </details></pre>"


def export(world: World, format: str, token: str | None = None, agent: str | None = None) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token or world.alice_token}"}
    return world.http.get(f"/api/agents/{agent or world.agent}/export", params={"format": format}, headers=headers)


def transcript(world: World) -> dict[str, str]:
    """An agent with a prompt, a thought, a big tool output, backticks, hostile text and a subagent."""
    call = "call_" + new_id()[:8]
    put(world.alice, world.agent, user("Run the tests, please."))
    put(world.alice, world.agent, assistant([
        thought(LONG_THOUGHT),
        bash(BIG_OUTPUT),
        text(TICKS + HOSTILE),
        tool("Task", "the subagent says done", input={"description": "look around", "prompt": "go"}, call=call),
    ]))  # fmt: skip
    put(world.alice, world.agent, user("sub prompt " + TICKS), call=call)
    put(world.alice, world.agent, assistant([bash("sub output " + HOSTILE)]), call=call)
    return {"call": call}


def whole_reads(world: World, call: str) -> Json:
    info = world.alice.agent(world.agent)
    return {
        "agent": {"id": info["id"], "title": info["title"], "workspace_id": info["workspace_id"]},
        "messages": world.alice.messages(world.agent)["messages"],
        "subagents": {call: world.alice.messages(world.agent, call=call)["messages"]},
    }


def texts_of(data: Json) -> list[str]:
    """Every part's whole text: text, thoughts, and each tool's input, output and error, as drawn."""
    found: list[str] = []
    for messages in [data["messages"], *data["subagents"].values()]:
        for message in messages:
            for part in message["parts"]:
                for field in ("text", "output", "errorText"):
                    value = part.get(field)
                    if isinstance(value, str):
                        found.append(value)
    return found


def fences(markdown: str) -> list[str]:
    """The content of each fenced block, as a CommonMark parser reads it."""
    return [token.content for token in MarkdownIt("commonmark").parse(markdown) if token.type == "fence"]


def test_the_json_export_is_the_whole_reads(world: World) -> None:
    call = transcript(world)["call"]
    response = export(world, "json")
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/json")
    assert response.headers["content-disposition"] == 'attachment; filename="fix-the-build.json"'
    data = orjson.loads(response.content)
    assert data == whole_reads(world, call)
    assert data["messages"][1]["parts"][1]["output"] == BIG_OUTPUT  # whole, never cut
    assert "cutParts" not in response.text


def test_the_default_format_is_json(world: World) -> None:
    call = transcript(world)["call"]
    got = world.http.get(f"/api/agents/{world.agent}/export", headers={"Authorization": f"Bearer {world.alice_token}"})
    assert orjson.loads(got.content) == whole_reads(world, call)


def test_the_markdown_export_holds_every_part_whole_in_fences_no_content_breaks(world: World) -> None:
    call = transcript(world)["call"]
    response = export(world, "md")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/markdown")
    markdown = response.text
    blocks = fences(markdown)
    for whole in texts_of(whole_reads(world, call)):
        want = whole if whole.endswith("\n") else whole + "\n"
        assert want in blocks, whole[:80]  # each whole text is one fenced block, exactly
    assert "Subagent · look around" in markdown
    sub_at, call_at = markdown.index("Subagent · look around"), markdown.index("**Tool `Task`**")
    assert call_at < sub_at  # the subagent follows the call that started it
    assert json.dumps({"description": "look around", "prompt": "go"}, indent=2) + "\n" in blocks  # the input


def test_the_html_export_is_one_escaped_file_with_folds(world: World) -> None:
    transcript(world)
    response = export(world, "html")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    page = response.text
    assert page.startswith("<!doctype html>")
    assert "<script" not in page.lower().replace("&lt;script", "")
    assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in page
    assert "<link" not in page and "src=\"http" not in page and "@import" not in page
    assert page.count("<details") == page.count("</details>") >= 4
    assert ("line of bash output\n" * 1000) in page  # the big output, whole
    assert page.count("line of bash output\n") == BIG_OUTPUT.count("\n")


def test_another_account_gets_the_one_not_found_in_every_format(world: World, transcripts: Transcripts) -> None:
    transcript(world)
    for format in ("json", "md", "html"):
        got = export(world, format, token=world.bob_token)
        assert got.status_code == 404
        assert got.json() == {"error": {"code": "not_found", "message": "not found"}}
        assert export(world, format, agent=new_id()).json() == got.json()
        assert export(world, format, agent="not-a-uuid").json() == got.json()
    with pytest.raises(NotFound):
        world.bob.export(world.agent, io.BytesIO(), "md")
    carol = add_member(transcripts, world.workspace, "carol")
    assert export(world, "md", token=carol["token"]).status_code == 200  # a member may


def test_a_format_that_is_none_of_the_three_is_a_400(world: World) -> None:
    for format in ("pdf", "", "JSON"):
        got = export(world, format)
        assert got.status_code == 400
        assert got.json()["error"]["where"] == "format"
    assert export(world, "pdf", token=world.bob_token).status_code == 400  # says nothing of the agent


@pytest.mark.parametrize("format", ["json", "md", "html"])
def test_a_part_of_several_megabytes_is_exported_whole(world: World, format: str) -> None:
    big = "".join(f"{n:08d} a line a build printed ``` <b>x</b>\n" for n in range(120_000))  # 5.5 MB
    content = big[: 2**20]  # an input is never cut: a part of a MB read whole
    write = tool("Write", "ok", input={"file_path": "big.txt", "content": content})
    prose = "".join(f"Paragraph {n}: the answer goes on, with `code` and ``` fences.\n" for n in range(6000))
    put(world.alice, world.agent, assistant([bash(big), write, thought(prose), text(prose)]))  # 390 KB each
    out = io.BytesIO()
    world.alice.export(world.agent, out, format)
    body = out.getvalue().decode()
    if format == "json":
        parts = orjson.loads(body)["messages"][0]["parts"]
        assert parts[0]["output"] == big and parts[1]["input"]["content"] == content
        assert parts[2]["text"] == parts[3]["text"] == prose
    elif format == "md":
        assert big in fences(body)
        assert json.dumps({"file_path": "big.txt", "content": content}, indent=2) + "\n" in fences(body)
        assert fences(body).count(prose) == 2  # the thought and the answer, read from their chunks
    else:
        assert big.replace("<", "&lt;").replace(">", "&gt;") in body
        assert body.count(prose) == 2


def test_a_secret_written_through_the_door_is_in_no_export(world: World) -> None:
    secrets = make_secrets(seed=2121)
    lines = "\n".join(f"{kind}={value}" for kind, value in secrets.items())
    put(world.alice, world.agent, user("keys:\n" + lines))
    put(world.alice, world.agent, assistant([thought(lines), bash(lines + "\n" + BIG_OUTPUT)]))
    for format in ("json", "md", "html"):
        body = export(world, format).text
        for kind, value in secrets.items():
            assert value not in body, (format, kind)
        assert "[REDACTED:github-token]" in body
    html = export(world, "html").text
    assert '<span class="redacted" title="a secret was removed here (github-token)">' in html


def test_the_cli_writes_the_export_to_a_file(tmp_path: Any) -> None:
    db = str(tmp_path / "cli.db")
    with Transcripts.open(Settings(db=db)) as t:
        local = ensure_local(t, db)
        agent = t.create_agent(local.account_id, local.workspace_id, "cli export")["id"]
        message = user("hello ```` there")
        t.put_message(local.account_id, agent, message["id"], message)
    out = tmp_path / "out.md"
    result = CliRunner().invoke(main, ["export", agent, "--format", "md", "-o", str(out), "--db", db])
    assert result.exit_code == 0, result.output
    assert "hello ```` there\n" in fences(out.read_text())
    result = CliRunner().invoke(main, ["export", agent, "--db", db])
    assert result.exit_code == 0
    assert orjson.loads(result.stdout_bytes)["messages"][0]["parts"][0]["text"] == "hello ```` there"
    result = CliRunner().invoke(main, ["export", new_id(), "--db", db, "-o", str(tmp_path / "no.json")])
    assert result.exit_code == 1 and not (tmp_path / "no.json").exists()


def exported_json(t: Transcripts, world: World) -> Json:
    data: Json = orjson.loads(b"".join(t.export(world.alice_id, world.agent, "json")[2]))
    return data


def test_messages_not_sent_as_stored_are_exported_as_the_checked_whole_read(
    world: World, transcripts: Transcripts, store: Store
) -> None:
    call = transcript(world)["call"]
    put(world.alice, world.agent, {**assistant([tool("read_agent", {"n": 1.5, "big": 2**62}, input={})]),
                                   "metadata": {"anything": [1, "two"]}, "unknownKey": {"kept": True}})  # fmt: skip
    checking = Transcripts(store, settings=transcripts.settings)
    checking.read_stamp = "no stamp matches this"  # every message takes the decode-and-check path
    data = exported_json(checking, world)
    assert data == exported_json(transcripts, world)
    assert data["messages"] == checking.messages(world.alice_id, world.agent)["messages"]
    assert data["subagents"][call] == checking.messages(world.alice_id, world.agent, call=call)["messages"]


def test_a_retired_tools_parts_are_left_out_as_a_whole_read_leaves_them(
    world: World, transcripts: Transcripts, store: Store
) -> None:
    put(world.alice, world.agent, assistant([text("before"), bash(BIG_OUTPUT), text("after")]))
    retired = Transcripts(store, registry=registry_with(bash={"retired": True}), settings=transcripts.settings)
    data = exported_json(retired, world)
    assert data["messages"] == retired.messages(world.alice_id, world.agent)["messages"]
    assert data["messages"][0]["skippedParts"] == [1]
    markdown = b"".join(retired.export(world.alice_id, world.agent, "md")[2]).decode()
    assert "before" in markdown and "after" in markdown and "line of bash output" not in markdown


def test_an_export_reads_one_snapshot_while_the_agent_is_written(world: World, transcripts: Transcripts) -> None:
    first = put(world.alice, world.agent, assistant([bash(BIG_OUTPUT)]))
    for n in range(30):
        put(world.alice, world.agent, user(f"prompt {n}"))
    chunks = transcripts.export(world.alice_id, world.agent, "json")[2]
    started = next(chunks)  # the snapshot is taken
    put(world.alice, world.agent, assistant([bash("rewritten")], message_id=str(first["id"])))
    put(world.alice, world.agent, user("written after the export began"))
    data = orjson.loads(started + b"".join(chunks))
    assert data["messages"][0]["parts"][0]["output"] == BIG_OUTPUT
    assert len(data["messages"]) == 31


def test_an_export_dropped_half_way_leaves_the_service_working(world: World) -> None:
    # More dropped exports than the whole reads an account may hold at once: each gives its slot
    # and its snapshot back once the server sees the reader gone.
    put(world.alice, world.agent, assistant([bash(BIG_OUTPUT), thought(LONG_THOUGHT)]))
    url = f"{world.url}/api/agents/{world.agent}/export"
    for format in ("json", "md", "html", "json", "md", "html"):
        deadline = time.monotonic() + 20
        while True:
            with httpx.stream("GET", url, params={"format": format},
                              headers={"Authorization": f"Bearer {world.alice_token}"}) as response:  # fmt: skip
                if response.status_code == 429 and time.monotonic() < deadline:
                    time.sleep(0.1)
                    continue
                assert response.status_code == 200
                next(response.iter_raw())
                break
    gc.collect()
    after = put(world.alice, world.agent, user("still writing"))
    data = orjson.loads(export(world, "json").content)
    assert data["messages"][-1] == after and data["messages"][0]["parts"][0]["output"] == BIG_OUTPUT


def test_an_export_closed_gives_its_connection_back_at_once(db_url: str) -> None:
    with Transcripts(open_store(db_url), settings=Settings(db=db_url)) as own:  # a pool of its own
        alice = own.create_account("alice")
        workspace = own.create_workspace("team", [alice["id"]])
        agent = own.create_agent(alice["id"], workspace["id"], "an agent")["id"]
        message = assistant([bash(BIG_OUTPUT)])
        own.put_message(alice["id"], agent, str(message["id"]), message)
        pool = own._store.engine.pool
        lent = pool.checkedout()  # type: ignore[attr-defined]
        for format in ("json", "md", "html"):
            chunks = own.export(alice["id"], agent, format)[2]
            next(chunks)
            assert pool.checkedout() == lent + 1  # type: ignore[attr-defined]
            chunks.close()  # type: ignore[attr-defined]
            assert pool.checkedout() == lent  # type: ignore[attr-defined]
            never_started = own.export(alice["id"], agent, format)[2]
            never_started.close()  # type: ignore[attr-defined]
            assert pool.checkedout() == lent  # type: ignore[attr-defined]


def test_an_imported_line_is_exported_at_the_time_it_was_written(world: World) -> None:
    # An imported session's messages were stored today, but each says when it was written: the
    # export dates them as the panel does, by that time.
    put(world.alice, world.agent, {**user("from an old log"), "metadata": {"timestamp": "2026-02-28T01:13:07.000Z"}})
    put(world.alice, world.agent, user("written through the API, no time of its own"))
    markdown = export(world, "md").text
    assert "2026-02-28T01:13:07.000Z" in markdown
    html = export(world, "html").text
    assert "2026-02-28" in html
