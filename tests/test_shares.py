"""Share links, on both backends: made, listed and revoked by members; a share reads one agent and
its subagents and nothing else; a revoked or expired share is the one not-found at once, and its
open event streams end; a share token is not an account token, nor the reverse."""

from __future__ import annotations

import threading
import time
from typing import Any

import httpx
import orjson
import pytest
from conftest import World
from core_helpers import BIG_OUTPUT, add_member, assistant, bash, new_id, put, user

from foldline import Client, NotFound
from foldline.service import Transcripts
from foldline.settings import Settings

NOT_FOUND = {"error": {"code": "not_found", "message": "not found"}}
Json = dict[str, Any]


def shared(world: World, token: str, path: str = "", **params: str) -> httpx.Response:
    """A request with no credentials but the share's token in its path."""
    return world.http.get(f"/api/shared/{token}{path}", params=params)


@pytest.fixture
def scene(world: World, transcripts: Transcripts) -> Json:
    """Alice's agent (with a subagent) shared; her other agent, and an agent of another workspace."""
    agent = world.agent
    words = put(world.alice, agent, user("the shared word is quokka"))
    tools = put(world.alice, agent, assistant([bash(BIG_OUTPUT + "quokka at the end")]))
    sub = put(world.alice, agent, user("a subagent says quokka too"), call="call-1")
    other = world.alice.create_agent(world.workspace, title="not shared")["id"]
    put(world.alice, other, user("quokka in another agent"))
    elsewhere_space = transcripts.create_workspace("elsewhere", [world.bob_id])["id"]
    elsewhere = world.bob.create_agent(elsewhere_space, title="bob's")["id"]
    put(world.bob, elsewhere, user("quokka in bob's workspace"))
    share = world.alice.create_share(agent)
    return {"share": share, "token": share["token"], "words": words, "tools": tools, "sub": sub, "other": other,
            "elsewhere": elsewhere}  # fmt: skip


def test_a_member_makes_a_share_and_lists_it_without_its_token(world: World, scene: Json) -> None:
    share = scene["share"]
    assert set(share) == {"id", "agent_id", "created_at", "expires_at", "url", "token"}
    assert share["agent_id"] == world.agent and share["expires_at"] is None
    assert share["url"].endswith("/s/" + share["token"]) and share["token"].startswith("fls_")
    listed = world.alice.shares(world.agent)
    assert listed == [{k: share[k] for k in ("id", "agent_id", "created_at", "expires_at")}]
    assert share["token"] not in str(listed)
    lasting = world.alice.create_share(world.agent, expires_in=3600)
    assert lasting["expires_at"] is not None and lasting["expires_at"] > lasting["created_at"]


def test_a_share_reads_its_agent_and_its_subagents(world: World, scene: Json) -> None:
    token, agent = scene["token"], world.agent
    opened = shared(world, token)
    assert opened.json() == {"agent_id": agent, "expires_at": None}
    info = shared(world, token, f"/agents/{agent}").json()
    assert info["id"] == agent and info["subagents"] == ["call-1"]
    assert "workspace_id" not in info and "owner_id" not in info  # no workspace, no account
    page = shared(world, token, f"/agents/{agent}/messages", parts="cut").json()
    assert [m["id"] for m in page["messages"]] == [scene["words"]["id"], scene["tools"]["id"]]
    assert page["messages"][1]["cutParts"]  # the big output travels by reference
    whole = shared(world, token, f"/agents/{agent}/messages/{scene['tools']['id']}/parts/0")
    assert whole.json()["output"].endswith("quokka at the end")
    piece = shared(world, token, f"/agents/{agent}/messages/{scene['tools']['id']}/parts/0", field="output",
                   start="0", end="4").json()  # fmt: skip
    assert piece["text"] == "line"
    sub = shared(world, token, f"/agents/{agent}/subagents/call-1/messages").json()
    assert [m["id"] for m in sub["messages"]] == [scene["sub"]["id"]]
    hits = shared(world, token, "/search", q="quokka", limit="100").json()["hits"]
    assert {(h["agent_id"], h["call"]) for h in hits} == {(agent, None), (agent, "call-1")}
    narrowed = shared(world, token, "/search", q="quokka", agent=agent).json()["hits"]
    assert len(narrowed) == len(hits)


def test_a_share_reveals_nothing_else(world: World, scene: Json, transcripts: Transcripts) -> None:
    token, agent = scene["token"], world.agent
    message = scene["words"]["id"]
    for other in (scene["other"], scene["elsewhere"], new_id(), "not-a-uuid"):
        for path in ("", "/messages", f"/messages/{message}/parts/0", "/subagents/call-1/messages"):
            response = shared(world, token, f"/agents/{other}{path}")
            assert (response.status_code, response.json()) == (404, NOT_FOUND), (other, path)
        stream = httpx.get(f"{world.url}/api/shared/{token}/agents/{other}/events", timeout=10)
        assert (stream.status_code, stream.json()) == (404, NOT_FOUND)
        found = shared(world, token, "/search", q="quokka", agent=other)
        assert (found.status_code, found.json()) == (404, NOT_FOUND)
    for path in ("/subagents/call-2/messages", f"/messages/{new_id()}/parts/0", "/messages/x/parts/0"):
        assert shared(world, token, f"/agents/{agent}{path}").json() == NOT_FOUND
    bearer = {"Authorization": f"Bearer {token}"}
    cookie = {"Cookie": f"foldline_token={token}"}
    for path in ("/api/me", f"/api/agents/{agent}", f"/api/agents/{agent}/messages", "/api/search?q=quokka",
                 f"/api/agents?workspace_id={world.workspace}", f"/api/agents/{agent}/shares", "/api/status"):
        for headers in (bearer, cookie):
            assert world.http.get(path, headers=headers).status_code == 401, path  # a share never signs in
    assert world.http.put(f"/api/agents/{agent}/messages/{new_id()}", json=user("x"), headers=bearer).status_code == 401
    assert world.http.post(f"/api/agents/{agent}/shares", headers=bearer).status_code == 401
    written = world.http.put(f"/api/shared/{token}/agents/{agent}/messages/{new_id()}", json=user("intruder"))
    assert written.status_code in (404, 405)  # a share has no write routes at all
    assert world.http.post(f"/api/shared/{token}/agents/{agent}/turn-end").status_code in (404, 405)
    assert len(world.alice.messages(agent)["messages"]) == 2


def test_an_account_token_opens_no_share(world: World, scene: Json) -> None:
    for token in (world.alice_token, "fls_" + "x" * 43, "nope"):
        assert shared(world, token).json() == NOT_FOUND
        assert shared(world, token, f"/agents/{world.agent}/messages").json() == NOT_FOUND
        assert shared(world, token, "/search", q="quokka").json() == NOT_FOUND
        assert world.http.get(f"/s/{token}").status_code == 404


def test_only_members_make_list_and_revoke_shares(world: World, scene: Json, transcripts: Transcripts) -> None:
    for attempt in (lambda: world.bob.create_share(world.agent), lambda: world.bob.shares(world.agent),
                    lambda: world.bob.revoke_share(scene["share"]["id"]),
                    lambda: world.bob.revoke_share(new_id()), lambda: world.bob.revoke_share("not-a-uuid")):
        with pytest.raises(NotFound):
            attempt()
    assert shared(world, scene["token"]).status_code == 200  # bob revoked nothing
    carol = add_member(transcripts, world.workspace, "carol")  # a member, not the owner
    with world.client(carol["token"]) as client:
        made = client.create_share(world.agent)
        assert {s["id"] for s in client.shares(world.agent)} == {scene["share"]["id"], made["id"]}
        client.revoke_share(scene["share"]["id"])  # any member may revoke
    assert shared(world, scene["token"]).json() == NOT_FOUND
    transcripts.remove_member(world.workspace, carol["id"])  # a share reads as its maker may
    assert shared(world, made["token"], f"/agents/{world.agent}/messages").json() == NOT_FOUND


@pytest.mark.parametrize("body", [b'{"expires_in": 0}', b'{"expires_in": -5}', b'{"expires_in": "60"}',
                                  b'{"expires_in": 1.5}', b'{"expires_in": true}', b'{"expires_in": 999999999999}',
                                  b"[1]", b"{", b'"x"'])  # fmt: skip
def test_a_bad_request_for_a_share_stores_nothing(world: World, body: bytes) -> None:
    auth = {"Authorization": f"Bearer {world.alice_token}", "Content-Type": "application/json"}
    response = world.http.post(f"/api/agents/{world.agent}/shares", content=body, headers=auth)
    assert response.status_code in (400, 422), response.text
    if response.status_code == 422:
        assert response.json()["error"]["where"] == "expires_in"
    assert world.alice.shares(world.agent) == []
    assert world.http.post(f"/api/agents/{new_id()}/shares", headers=auth).json() == NOT_FOUND


def test_a_revoked_share_is_the_one_not_found_at_once(world: World, scene: Json) -> None:
    token, agent = scene["token"], world.agent
    assert world.http.get(f"/s/{token}").status_code == 200
    world.alice.revoke_share(scene["share"]["id"])
    for path in ("", f"/agents/{agent}", f"/agents/{agent}/messages", f"/agents/{agent}/subagents/call-1/messages"):
        assert shared(world, token, path).json() == NOT_FOUND
    assert shared(world, token, "/search", q="quokka").json() == NOT_FOUND
    page = world.http.get(f"/s/{token}")
    assert page.status_code == 404 and "revoked" in page.text and token not in page.text
    assert world.alice.shares(agent) == []
    with pytest.raises(NotFound):
        world.alice.revoke_share(scene["share"]["id"])  # once only


def test_an_expired_share_is_the_one_not_found(world: World, transcripts: Transcripts) -> None:
    brief = world.alice.create_share(world.agent, expires_in=1)
    assert shared(world, brief["token"]).status_code == 200
    deadline = time.monotonic() + 10
    while shared(world, brief["token"]).status_code == 200 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert shared(world, brief["token"], f"/agents/{world.agent}/messages").json() == NOT_FOUND
    assert world.http.get(f"/s/{brief['token']}").status_code == 404
    assert world.alice.shares(world.agent) == []  # expired ones are not listed


def follow(url: str, opened: threading.Event, ended: threading.Event, received: list[str]) -> None:
    with httpx.stream("GET", url, timeout=60) as response:
        for line in response.iter_lines():
            if line.startswith("retry:"):
                opened.set()
            elif line.startswith("data: "):
                data = orjson.loads(line[6:])
                if "parts" in data:  # a message (a deleted agent's last event is not one)
                    received.append(data["parts"][0]["text"])
    ended.set()


def open_stream(url: str) -> tuple[threading.Event, list[str]]:
    opened, ended, received = threading.Event(), threading.Event(), []
    threading.Thread(target=follow, args=(url, opened, ended, received), daemon=True).start()
    assert opened.wait(20), "the stream did not open"
    return ended, received


def test_an_open_stream_ends_when_its_share_is_revoked(world: World) -> None:
    share = world.alice.create_share(world.agent)
    ended, received = open_stream(f"{world.url}/api/shared/{share['token']}/agents/{world.agent}/events")
    put(world.alice, world.agent, user("live"))
    deadline = time.monotonic() + 20
    while not received and time.monotonic() < deadline:
        time.sleep(0.05)
    world.alice.revoke_share(share["id"])
    assert ended.wait(20), "a revoked share's stream must end"
    put(world.alice, world.agent, user("after"))
    assert received == ["live"]


def test_an_open_stream_ends_when_its_share_expires(world: World) -> None:
    put(world.alice, world.agent, user("a subagent's"), call="call-9")
    share = world.alice.create_share(world.agent, expires_in=4)
    ended, _ = open_stream(f"{world.url}/api/shared/{share['token']}/agents/{world.agent}/subagents/call-9/events")
    assert ended.wait(20), "an expired share's stream must end"


def test_a_revocation_by_another_process_ends_a_share_stream(db_url: str, world: World) -> None:
    """Another process (``foldline share revoke``) tells this one nothing on SQLite: the share's
    stream asks every second, so it ends anyway."""
    share = world.alice.create_share(world.agent)
    ended, _ = open_stream(f"{world.url}/api/shared/{share['token']}/agents/{world.agent}/events")
    with Transcripts.open(Settings(db=db_url)) as elsewhere:
        elsewhere.revoke_share(world.alice_id, share["id"])
    assert ended.wait(20), "a share revoked elsewhere must end its stream"


def test_a_share_has_caps_of_its_own(world: World, transcripts: Transcripts) -> None:
    """A share's readers count against the share, not against the member who made it."""
    share = world.alice.create_share(world.agent)
    streams = [open_stream(f"{world.url}/api/shared/{share['token']}/agents/{world.agent}/events")
               for _ in range(transcripts.settings.max_streams)]  # fmt: skip
    refused = httpx.get(f"{world.url}/api/shared/{share['token']}/agents/{world.agent}/events", timeout=10)
    assert refused.status_code == 429
    with Client(world.url, world.alice_token) as alice:
        with alice.events(world.agent) as events:  # alice still has all of hers
            put(world.alice, world.agent, user("mine"))
            assert next(iter(events))[1]["parts"][0]["text"] == "mine"
    world.alice.revoke_share(share["id"])
    assert all(ended.wait(20) for ended, _ in streams)


def test_the_command_line_makes_lists_and_revokes_shares(db_url: str, world: World,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    from click.testing import CliRunner

    from foldline.cli import main

    monkeypatch.setenv("FOLDLINE_URL", world.url)
    run = CliRunner().invoke
    as_alice = ["--account", world.alice_id, "--db", db_url]
    made = run(main, ["share", "create", world.agent, "--expires", "7d", *as_alice, "--json"])
    assert made.exit_code == 0, made.output
    share = orjson.loads(made.stdout)
    assert share["url"] == f"{world.url}/s/{share['token']}" and share["expires_at"] is not None
    assert httpx.get(share["url"]).status_code == 200
    listed = run(main, ["share", "list", "--agent", world.agent, *as_alice])
    assert share["id"] in listed.output and share["token"] not in listed.output
    assert run(main, ["share", "list", "--account", world.bob_id, "--db", db_url]).output.strip() == "no share links"
    refused = run(main, ["share", "revoke", share["id"], "--account", world.bob_id, "--db", db_url])
    assert refused.exit_code == 1 and "not found" in refused.output
    assert run(main, ["share", "revoke", share["id"], *as_alice]).exit_code == 0
    assert httpx.get(share["url"]).status_code == 404
    forever = orjson.loads(run(main, ["share", "create", world.agent, *as_alice, "--json"]).stdout)
    assert forever["expires_at"] is None  # as the panel's dialog and route make one without an expiry
    bad = run(main, ["share", "create", world.agent, "--expires", "soon", *as_alice])
    assert bad.exit_code == 2 and "--expires" in bad.output


def test_a_deleted_agent_s_shares_open_nothing(world: World) -> None:
    share = world.alice.create_share(world.agent)
    put(world.alice, world.agent, user("soon gone"))
    ended, _ = open_stream(f"{world.url}/api/shared/{share['token']}/agents/{world.agent}/events")
    world.alice.delete_agent(world.agent)
    assert ended.wait(20), "a deleted agent's share stream must end"
    assert shared(world, share["token"]).json() == NOT_FOUND
    assert world.http.get(f"/s/{share['token']}").status_code == 404
