"""Tokens: listed without their secret, revoked at once (open streams end), expiring, and a panel
session that signing out ends for good — on both backends."""

from __future__ import annotations

import threading
import time
from datetime import timedelta

import httpx
import orjson
import pytest
from click.testing import CliRunner
from conftest import World
from core_helpers import put, user
from servers import ServerThread

from foldline import Client, NotFound, Unauthorized
from foldline.cli import main
from foldline.service import Transcripts
from foldline.settings import Settings


def test_an_accounts_tokens_are_listed_without_their_secret(transcripts: Transcripts) -> None:
    made = transcripts.create_account("lister")
    extra = transcripts.new_token(made["id"], label="laptop", expires_in=timedelta(days=1))
    transcripts.authenticate(extra["token"])
    # Oldest first; two tokens made in the same tick of the clock may come either way.
    listed = sorted(transcripts.tokens(made["id"]), key=lambda t: (t["created_at"], t["label"] != "created"))
    assert [t["label"] for t in listed] == ["created", "laptop"]
    assert listed[1]["id"] == extra["token_id"] and listed[1]["expires_at"] == extra["expires_at"]
    assert listed[1]["last_used_at"] is not None and listed[0]["last_used_at"] is None
    assert all(made["token"] not in str(t) and extra["token"] not in str(t) for t in listed)


def test_a_revoked_token_stops_working_at_once(world: World, transcripts: Transcripts) -> None:
    made = transcripts.new_token(world.alice_id, label="to revoke")
    with Client(world.url, made["token"]) as client:
        assert client.me()["id"] == world.alice_id
        transcripts.revoke(made["token_id"])
        with pytest.raises(Unauthorized):
            client.me()
    assert world.alice.me()["id"] == world.alice_id  # her other tokens still work
    with pytest.raises(NotFound):
        transcripts.revoke(made["token_id"])  # once only
    with pytest.raises(NotFound):
        transcripts.revoke("not-hex")


def test_an_open_stream_ends_when_its_token_is_revoked(world: World, transcripts: Transcripts) -> None:
    made = transcripts.new_token(world.alice_id, label="follower")
    received: list[str] = []
    ended = threading.Event()

    def follow() -> None:
        headers = {"Authorization": f"Bearer {made['token']}"}
        url = f"{world.url}/api/agents/{world.agent}/events"
        with httpx.stream("GET", url, headers=headers, timeout=30) as response:
            for line in response.iter_lines():
                if line.startswith("data: "):
                    received.append(orjson.loads(line[6:])["parts"][0]["text"])
        ended.set()

    follower = threading.Thread(target=follow, daemon=True)
    follower.start()
    put(world.alice, world.agent, user("before"))
    deadline = time.monotonic() + 20
    while not received and time.monotonic() < deadline:
        time.sleep(0.05)
    transcripts.revoke(made["token_id"])
    assert ended.wait(20), "a revoked token's stream must end"
    put(world.alice, world.agent, user("after"))
    assert received == ["before"]


def test_an_expired_token_is_refused(transcripts: Transcripts) -> None:
    made = transcripts.create_account("brief")
    expired = transcripts.new_token(made["id"], expires_in=timedelta(seconds=-1))
    with pytest.raises(Unauthorized):
        transcripts.authenticate(expired["token"])
    lasting = transcripts.new_token(made["id"], expires_in=timedelta(hours=1))
    assert transcripts.authenticate(lasting["token"]) == made["id"]
    assert expired["token_id"] not in [t["id"] for t in transcripts.tokens(made["id"])]  # dropped on the way


def test_the_command_line_lists_makes_and_revokes_tokens(db_url: str, transcripts: Transcripts) -> None:
    made = transcripts.create_account("operator")
    run = CliRunner().invoke
    created = run(main, ["account", "token", made["id"], "--expires", "30d", "--label", "ci", "--json", "--db", db_url])
    assert created.exit_code == 0, created.output
    token = orjson.loads(created.output)
    listed = run(main, ["account", "tokens", made["id"], "--db", db_url])
    assert token["token_id"] in listed.output and "ci" in listed.output and token["token"] not in listed.output
    assert run(main, ["account", "revoke", token["token_id"], "--db", db_url]).exit_code == 0
    with pytest.raises(Unauthorized):
        transcripts.authenticate(token["token"])
    again = run(main, ["account", "revoke", token["token_id"], "--db", db_url])
    assert again.exit_code == 1 and "Error" in again.output
    bad = run(main, ["account", "token", made["id"], "--expires", "soon", "--db", db_url])
    assert bad.exit_code == 2 and "--expires" in bad.output


def test_a_revocation_in_another_process_ends_streams_at_once(db_url: str, world: World) -> None:
    """PostgreSQL: a server that remembers tokens for a minute still ends a stream as soon as its
    token is revoked by another process (its notice makes every process forget its tokens)."""
    if not db_url.startswith("postgresql"):
        pytest.skip("SQLite carries no notice between processes: another process trusts a token its cache holds")
    remembering = Settings(db=db_url, poll_seconds=0.2, token_cache_seconds=60)
    with Transcripts.open(remembering) as there, ServerThread(there) as server, Transcripts.open(remembering) as here:
        made = here.new_token(world.alice_id, label="follower elsewhere")
        opened, ended = threading.Event(), threading.Event()

        def follow() -> None:
            headers = {"Authorization": f"Bearer {made['token']}"}
            with httpx.stream("GET", f"{server.url}/api/agents/{world.agent}/events", headers=headers,
                              timeout=90) as response:  # fmt: skip
                for line in response.iter_lines():
                    if line.startswith("retry:"):
                        opened.set()
            ended.set()

        follower = threading.Thread(target=follow, daemon=True)
        follower.start()
        assert opened.wait(20)
        here.revoke(made["token_id"])  # another process: the server's token cache knows nothing of it
        assert ended.wait(20), "the stream outlived its token: the server kept trusting its cache"
