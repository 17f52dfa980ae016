"""The AI SDK's UI message stream taken in (``POST …/stream``), on both backends, over HTTP.

The streams are made by the real ``ai`` package (tests/aisdk, installed by ``scripts/setup --dev``)
run by this machine's Node.js, in each of its major versions 5, 6 and 7 (a test that makes a
stream runs once per version, ``sdk5`` ``sdk6`` ``sdk7``, and the same version assembles and
validates): a ``streamText`` agent on the SDK's mock model (reasoning, text,
sources, a file, tool inputs streamed, outputs, a preliminary output, a failing tool, a dynamic
tool, an approval), an app's own ``createUIMessageStream`` writer (every other chunk type), and a
stream whose tool output and text grow. The stored message is compared with the SDK's own
``readUIMessageStream`` of the same bytes, and the SDK's ``validateUIMessages`` judges what
Foldline gives back.
"""

from __future__ import annotations

import functools
import json
import os
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import World
from core_helpers import add_member, assistant, new_id
from servers import ServerThread
from waits import eventually

from foldline import Client
from foldline.intake import WINDOW, message_id
from foldline.message import TURN_ENDED
from foldline.service import Transcripts
from foldline.settings import Settings
from foldline.store import Store
from foldline.uistream import CHUNKS

Json = dict[str, Any]
AISDK = Path(__file__).resolve().parent / "aisdk"
SCENARIOS = ("agent", "writer", "growing")
# The AI SDK's major versions the streams are made by, and their packages in tests/aisdk (package.json).
PACKAGES = {5: "ai5", 6: "ai6", 7: "ai"}
# The chunk types of CHUNKS (AI SDK 7's uiMessageChunkSchema) an older version's schema does not have.
NOT_IN = {
    5: {"tool-approval-request", "tool-approval-response", "tool-output-denied", "custom", "reasoning-file",
        "steering-message", "reset-step"},
    6: {"tool-approval-response", "custom", "reasoning-file", "steering-message", "reset-step"},
    7: set(),
}  # fmt: skip
NO_APPROVALS = "AI SDK 5 has no tool approvals (no tool-approval-request chunk, no needsApproval)"


@pytest.fixture(params=sorted(PACKAGES), ids=lambda v: f"sdk{v}")
def version(request: pytest.FixtureRequest) -> int:
    """The AI SDK major version that makes, assembles and validates the test's streams."""
    major: int = request.param
    return major


def sdk(*args: str, version: int = 7, given: bytes | None = None, env: dict[str, str] | None = None) -> bytes:
    """Run tests/aisdk/sdk.mjs with the installed ``ai`` package of ``version`` (never skipped: a
    missing install fails)."""
    if not (AISDK / "node_modules" / PACKAGES[version] / "package.json").is_file():
        pytest.fail("the AI SDK is not installed for the tests: run scripts/setup --dev (npm ci in tests/aisdk)")
    command = ["node", str(AISDK / "sdk.mjs"), "--sdk", str(version), *args]
    done = subprocess.run(command, input=given, env=env, capture_output=True, timeout=120)
    if done.returncode != 0:
        pytest.fail(f"sdk.mjs --sdk {version} {args[0]} failed: {done.stderr.decode()[-2000:]}")
    return done.stdout


@functools.cache
def produced(name: str, message: str, version: int = 7) -> bytes:
    """The SSE bytes of AI SDK ``version``'s stream ``name`` for message id ``message``."""
    return sdk("produce", name, message, version=version)


def assembled(stream: bytes, start: Json | None = None, tmp: Path | None = None, states: bool = False,
              version: int = 7) -> Json:  # fmt: skip
    """AI SDK ``version``'s own ``readUIMessageStream`` of ``stream``: ``{"last", "errors"}``, and
    with ``states`` every state it gave (``"states"``)."""
    args = ["assemble", "--states" if states else "--last"]
    if start is not None:
        assert tmp is not None
        path = tmp / "start.json"
        path.write_text(json.dumps(start))
        args.append(str(path))
    result: Json = json.loads(sdk(*args, version=version, given=stream))
    if version < 7 and result["last"] is not None:
        result["last"] = refused_input_as_in_7(result["last"])
    return result


def refused_input_as_in_7(message: Json) -> Json:
    """``message`` with each static tool's refused input (``tool-input-error``) where AI SDK 7 puts
    it, and Foldline stores it, whatever version sent the stream (the chunk is the same): 5's and
    6's ``readUIMessageStream`` put it in ``rawInput`` and leave ``input`` out, 7 puts it in
    ``input`` (``rawInput`` there is deprecated). Every version's ``convertToModelMessages`` reads an
    ``output-error`` part's ``input ?? rawInput``: the model is given the same input either way."""
    parts = []
    for part in message["parts"]:
        if part["type"].startswith("tool-") and part.get("state") == "output-error" and "input" not in part \
                and "rawInput" in part:  # fmt: skip
            part = {("input" if key == "rawInput" else key): value for key, value in part.items()}
        parts.append(part)
    return {**message, "parts": parts}


def validated(messages: list[Json], version: int = 7) -> Json:
    result: Json = json.loads(sdk("validate", version=version, given=json.dumps(messages).encode()))
    return result


def post(world: World, agent: str, body: Any, *, token: str | None = None, call: str | None = None,
         kind: str = "text/event-stream") -> httpx.Response:  # fmt: skip
    base = f"{world.url}/api/agents/{agent}" + (f"/subagents/{call}" if call else "")
    headers = {"Authorization": f"Bearer {token or world.alice_token}", "Content-Type": kind}
    return httpx.post(f"{base}/stream", content=body, headers=headers, timeout=60)


def stored(world: World, message: str, agent: str | None = None, call: str | None = None) -> Json:
    """The stored message, whole, without what a read adds."""
    page = world.alice.messages(agent or world.agent, call=call)
    [found] = [dict(m) for m in page["messages"] if m["id"] == message]
    found.pop("createdAt", None)
    return found


def as_stored(message: Json, foldline_id: str) -> Json:
    return {**message, "id": foldline_id}


def sse(*chunks: Any, done: bool = True) -> bytes:
    lines = [f"data: {c if isinstance(c, str) else json.dumps(c)}\n\n" for c in chunks]
    return ("".join(lines) + ("data: [DONE]\n\n" if done else "")).encode()


def open_tools_ended(message: Json) -> Json:
    """``message`` with its open tool calls given the unknown outcome (what the turn-end gives)."""
    parts = []
    for part in message["parts"]:
        tool = part["type"].startswith("tool-") or part["type"] == "dynamic-tool"
        if tool and part["state"] in ("input-streaming", "input-available", "approval-requested",
                                      "approval-responded"):  # fmt: skip
            part = {**part, "state": "output-error", "errorText": TURN_ENDED,
                    "resultProviderMetadata": {"foldline": {"outcome": "unknown"}}}  # fmt: skip
            part.pop("approval", None)
        parts.append(part)
    return {**message, "parts": parts}


# -- the stored message equals the SDK's own assembly -----------------------------------------


@pytest.mark.parametrize("name", SCENARIOS)
def test_the_stored_message_equals_the_sdks_assembly(world: World, name: str, version: int) -> None:
    message = new_id()
    stream = produced(name, message, version)
    answer = post(world, world.agent, stream)
    assert answer.status_code == 200, answer.text
    result = answer.json()
    assert (result["id"], result["messageId"], result["finished"], result["done"]) == (message, message, True, True)
    assert result["ended"] == []
    assert stored(world, message) == assembled(stream, version=version)["last"]


def test_an_apps_route_stores_its_answer_with_consume_sse_stream(world: World, version: int) -> None:
    """docs/ai-sdk.md's lines, run: streamText's answer to the browser, its copy to Foldline."""
    message = new_id()
    env = {**os.environ, "FOLDLINE_URL": world.url, "FOLDLINE_TOKEN": world.alice_token}
    ran = json.loads(sdk("app", world.agent, message, version=version, env=env))
    assert ran["answer"]["id"] == message and ran["answer"]["finished"] is True
    assert stored(world, message) == assembled(ran["browser"].encode(), version=version)["last"]


def test_every_chunk_type_is_covered_by_the_sdks_streams(version: int) -> None:
    """The streams hold every chunk type the version's schema knows (and data parts)."""
    seen = set()
    names = (*SCENARIOS, "aborted") if version == 5 else (*SCENARIOS, "ask", "answer", "aborted")
    for name in names:
        for line in produced(name, "0b6c0a4e-9f55-4c5e-8a57-3f1d2b7c9e01", version).decode().split("\n\n"):
            if line.startswith("data: {"):
                kind = json.loads(line[6:])["type"]
                seen.add("data-*" if kind.startswith("data-") else kind)
    assert seen == {*CHUNKS, "data-*"} - NOT_IN[version]


def test_an_sdk_message_id_that_is_not_a_uuid_names_one_foldline_message(world: World, version: int) -> None:
    stream = produced("writer", "msg-aBcD1234efGH5678", version)
    first = post(world, world.agent, stream).json()
    assert first["id"] == message_id("msg-aBcD1234efGH5678") and first["messageId"] == "msg-aBcD1234efGH5678"
    assert stored(world, first["id"]) == as_stored(assembled(stream, version=version)["last"], first["id"])


def test_pydantic_ais_stream_is_stored_as_the_sdk_assembles_it(world: World) -> None:
    """The stream pydantic-ai's AI SDK adapter sent (tests/data/streams), its message id made new."""
    recorded = (Path(__file__).parent / "data" / "streams" / "pydantic-ai.sse").read_bytes()
    message = new_id()
    stream = recorded.replace(b"77998f07-8a57-4749-a468-06a2e6c1edee", message.encode())
    assert post(world, world.agent, stream).json()["finished"] is True
    assert stored(world, message) == assembled(stream)["last"]


def answered(message: Json, answers: dict[str, bool]) -> Json:
    """``message`` as the SDK's chat holds it once its user answered approvals (``addToolApprovalResponse``)."""
    parts = []
    for part in message["parts"]:
        approval = part.get("approval")
        if part.get("state") == "approval-requested" and approval["id"] in answers:
            answer = {**approval, "approved": answers[approval["id"]]}
            part = {**part, "state": "approval-responded", "approval": answer}
        parts.append(part)
    return {**message, "parts": parts}


def test_a_stream_goes_on_from_the_stored_message_it_names(world: World, tmp_path: Path, version: int) -> None:
    """The next request's stream (approvals answered: one run, one denied) continues the message,
    as the SDK's chat does."""
    if version == 5:
        pytest.skip(NO_APPROVALS)
    message = new_id()
    ask = produced("ask", message, version)
    assert post(world, world.agent, ask).json()["finished"] is True
    before = stored(world, message)
    assert [p.get("state") for p in before["parts"][-2:]] == ["approval-requested"] * 2  # open calls stay open
    answer = produced("answer", message, version)
    assert post(world, world.agent, answer).status_code == 200
    # The chat goes on from its own message: 6's stream has no answers (they went with the
    # request), so its chat holds them already; 7's stream brings them.
    start = before if version >= 7 else answered(before, {"ap-9": True, "ap-8": False})
    after = stored(world, message)
    assert after == assembled(answer, start, tmp_path, version=version)["last"]
    assert [p["approval"]["approved"] for p in after["parts"] if "approval" in p] == [True, False]
    assert validated([after], version)["ok"] is True


def test_an_approval_answered_in_the_request_only_is_stored_answered(world: World) -> None:
    """AI SDK 6 never streams an approval's answer: the call's outcome says it (it ran: approved;
    denied: not), and the stored message holds the answer, as the chat that asked does."""
    message = new_id()
    calls = [{"type": "tool-input-available", "toolCallId": f"c{n}", "toolName": "bash", "input": {"command": "make"}}
             for n in range(3)]  # fmt: skip
    asks = [{"type": "tool-approval-request", "approvalId": f"a{n}", "toolCallId": f"c{n}"} for n in range(3)]
    post(world, world.agent, sse({"type": "start", "messageId": message}, *calls, *asks, {"type": "finish"}))
    outcomes = [{"type": "tool-output-available", "toolCallId": "c0", "output": "done"},
                {"type": "tool-output-error", "toolCallId": "c1", "errorText": "make: failed"},
                {"type": "tool-output-denied", "toolCallId": "c2"}]  # fmt: skip
    answer = post(world, world.agent, sse({"type": "start", "messageId": message}, *outcomes, {"type": "finish"}))
    assert answer.status_code == 200, answer.text
    parts = stored(world, message)["parts"]
    assert [(p["state"], p["approval"]) for p in parts] == [
        ("output-available", {"id": "a0", "approved": True}), ("output-error", {"id": "a1", "approved": True}),
        ("output-denied", {"id": "a2", "approved": False})]  # fmt: skip
    assert validated([stored(world, message)], 6)["ok"] is True


def test_a_subagents_stream_makes_its_conversation(world: World, version: int) -> None:
    message = new_id()
    stream = produced("writer", message, version)
    assert post(world, world.agent, stream, call="call-sub-1").status_code == 200
    assert stored(world, message, call="call-sub-1") == assembled(stream, version=version)["last"]


# -- what the SDK makes, the write door takes; what Foldline returns, the SDK takes -------------


def shape(message: Json) -> str:
    """What a state is made of (each part's type, state and keys), whatever its text."""
    parts = [(p["type"], p.get("state"), sorted(p), sorted(p.get("approval") or {})) for p in message["parts"]]
    return json.dumps([sorted(message), parts])


def test_the_write_door_takes_every_state_the_sdk_makes(world: World, version: int) -> None:
    """Each intermediate state the SDK's readUIMessageStream gives (one of each shape), written as a message."""
    written = 0
    # The growing stream's shapes are the agent's; AI SDK 5 has no approval to ask (NO_APPROVALS).
    names = ("agent", "writer", "aborted") if version == 5 else ("agent", "writer", "ask", "aborted")
    for name in names:
        states = assembled(produced(name, new_id(), version), states=True, version=version)["states"]
        for state in {shape(s): s for s in states}.values():
            world.alice.put_message(world.agent, {**state, "id": new_id()})
            written += 1
    assert written > 40


def test_a_streaming_tool_input_keeps_its_raw_text(world: World) -> None:
    part = {"type": "tool-bash", "toolCallId": "c", "state": "input-streaming", "input": {"command": "l"},
            "rawInput": '{"command": "l', "inputEncoding": "json"}  # fmt: skip
    message = assistant([part])
    world.alice.put_message(world.agent, message)
    assert stored(world, message["id"])["parts"] == [part]
    for bad, where in (({**part, "rawInput": 7}, "parts[0].rawInput"), ({**part, "inputEncoding": "xml"},
                       "parts[0].inputEncoding")):  # fmt: skip
        refused = world.http.put(f"/api/agents/{world.agent}/messages/{new_id()}",
                                 headers={"Authorization": f"Bearer {world.alice_token}"},
                                 json={"role": "assistant", "parts": [bad]})  # fmt: skip
        assert refused.status_code == 422 and refused.json()["error"]["where"] == where


def test_validate_ui_messages_accepts_what_foldline_returns(world: World, version: int) -> None:
    """The transcript read whole, as an app hands it back to the SDK for the next turn."""
    for name in SCENARIOS:
        post(world, world.agent, produced(name, new_id(), version))
    messages = world.alice.messages(world.agent)["messages"]
    verdict = validated([dict(m) for m in messages], version)
    assert verdict["ok"] is True, verdict.get("error", "")[-3000:]


# -- a follower sees the message grow; writes are coalesced -----------------------------------


def paced(stream: bytes, pieces: int, seconds: float) -> Iterator[bytes]:
    step = -(-len(stream) // pieces)
    for at in range(0, len(stream), step):
        yield stream[at : at + step]
        time.sleep(seconds / pieces)


def test_a_follower_sees_text_and_tool_output_grow(world: World, version: int) -> None:
    message = new_id()
    stream = produced("growing", message, version)
    since = world.alice.messages(world.agent)["seq"]
    seen: list[Json] = []

    def follow() -> None:
        with Client(world.url, world.alice_token) as client, client.events(world.agent, since=since) as events:
            for _, got in events:
                seen.append(dict(got))
                if got["parts"] and got["parts"][-1].get("state") == "done":
                    return

    follower = threading.Thread(target=follow, daemon=True)
    follower.start()
    time.sleep(0.5)  # the follower is listening
    started = time.monotonic()
    result = post(world, world.agent, paced(stream, 40, 2.0)).json()
    took = time.monotonic() - started
    follower.join(20)
    assert result["finished"] and seen and all(m["id"] == message for m in seen)
    # Coalesced: a few writes a second, and one per part's end (start, input, 1 output, text) and the end
    # (with two windows to spare for a window's edge on a loaded machine; 40 pieces were sent).
    assert result["writes"] <= 6 + took / WINDOW + 3
    assert len(seen) >= 3
    tool_states = [m["parts"][1]["state"] for m in seen if len(m["parts"]) > 1]
    assert "input-streaming" in tool_states or "input-available" in tool_states
    assert tool_states[-1] == "output-available"
    # The output grows past the bound: each write cuts it again (the cut read sends its size).
    sizes = [ref["bytes"] for m in seen for ref in m.get("cutParts", []) if ref["index"] == 1]
    assert sizes == sorted(sizes) and len(set(sizes)) >= 2
    texts = [len(m["parts"][2]["text"]) for m in seen if len(m["parts"]) > 2 and "text" in m["parts"][2]]
    assert texts == sorted(texts) and len(set(texts)) >= 2  # the answer grows, in order
    assert seen[-1]["parts"][2]["state"] == "done"
    assert stored(world, message) == assembled(stream, version=version)["last"]


def test_deltas_sent_at_once_make_a_few_writes(world: World) -> None:
    message = new_id()
    deltas = [{"type": "text-delta", "id": "t", "delta": "word "} for _ in range(3000)]
    stream = sse({"type": "start", "messageId": message}, {"type": "text-start", "id": "t"}, *deltas,
                 {"type": "text-end", "id": "t"}, {"type": "finish"})  # fmt: skip
    started = time.monotonic()
    result = post(world, world.agent, stream).json()
    took = time.monotonic() - started
    assert result["writes"] <= 4 + took / WINDOW + 1  # start, the text's end, finish, the end; and timed ones
    assert stored(world, message) == assembled(stream)["last"]


# -- a stream that ends without finish ----------------------------------------------------------


def until(stream: bytes, marker: str) -> bytes:
    """``stream`` up to (not including) the first event holding ``marker``."""
    events = stream.decode().split("\n\n")
    index = next(i for i, e in enumerate(events) if marker in e)
    return "".join(e + "\n\n" for e in events[:index]).encode()


def test_a_stream_that_ends_without_finish_keeps_what_arrived(world: World, version: int) -> None:
    message = new_id()
    # Cut inside the second tool call's streaming input: one call done, one streaming, text done.
    cut = until(produced("agent", message, version), '"toolCallId":"call-read","inputTextDelta":".md"')
    result = post(world, world.agent, cut).json()
    assert (result["finished"], result["done"]) == (False, False)
    expected = open_tools_ended(assembled(cut, version=version)["last"])
    assert stored(world, message) == expected
    assert result["ended"] == [i for i, p in enumerate(expected["parts"]) if p.get("errorText") == TURN_ENDED]
    assert result["ended"]  # the streaming call and the calls awaiting their outcome
    assert validated([stored(world, message)], version)["ok"] is True


def test_an_aborted_stream_keeps_what_arrived(world: World, version: int) -> None:
    message = new_id()
    stream = produced("aborted", message, version)
    result = post(world, world.agent, stream).json()
    assert (result["finished"], result["done"], result["ended"]) == (False, True, [2])
    expected = open_tools_ended(assembled(stream, version=version)["last"])
    assert expected["parts"][1] == {"type": "text", "text": "Running the tests", "state": "streaming"}
    assert expected["parts"][2]["rawInput"] == '{"command": "pytest -'
    assert stored(world, message) == expected
    assert validated([stored(world, message)], version)["ok"] is True


def test_a_dropped_connection_keeps_what_arrived(world: World, version: int) -> None:
    message = new_id()
    cut = until(produced("agent", message, version), '"type":"tool-output-available"')
    host, port = world.url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=10)
    head = (f"POST /api/agents/{world.agent}/stream HTTP/1.1\r\nHost: x\r\n"
            f"Authorization: Bearer {world.alice_token}\r\nContent-Type: text/event-stream\r\n"
            "Transfer-Encoding: chunked\r\n\r\n")  # fmt: skip
    sock.sendall(head.encode() + b"%x\r\n%s\r\n" % (len(cut), cut))
    # What the server has read is written (the start, the first parts' ends); then the app goes away.
    eventually(lambda: any(m["id"] == message and len(m["parts"]) > 6
                           for m in world.alice.messages(world.agent)["messages"]))  # fmt: skip
    sock.close()
    expected = open_tools_ended(assembled(cut, version=version)["last"])
    eventually(lambda: stored(world, message) == expected, what="the dropped stream's message, its open tools ended")


# -- malformed chunks -------------------------------------------------------------------------

START = {"type": "start"}
BAD_CHUNKS = [
    ("{not json", "chunks[3]"),
    ("[1, 2]", "chunks[3]"),
    ({"delta": "no type"}, "chunks[3].type"),
    ({"type": "text-middle", "id": "t"}, "chunks[3].type"),
    ({"type": "text-delta", "delta": "x"}, "chunks[3].id"),
    ({"type": "text-delta", "id": "t", "delta": 5}, "chunks[3].delta"),
    ({"type": "text-delta", "id": "other", "delta": "x"}, "chunks[3].id"),
    ({"type": "tool-input-delta", "toolCallId": "nope", "inputTextDelta": "x"}, "chunks[3].toolCallId"),
    ({"type": "tool-output-available", "toolCallId": "nope", "output": 1}, "chunks[3].toolCallId"),
    ({"type": "tool-approval-response", "approvalId": "nope", "approved": True}, "chunks[3].approvalId"),
    ({"type": "tool-approval-response", "approvalId": "a", "approved": "yes"}, "chunks[3].approved"),
    ({"type": "finish", "finishReason": "bored"}, "chunks[3].finishReason"),
    ({"type": "source-url", "sourceId": "s", "url": "u", "providerMetadata": {"p": 1}},
     "chunks[3].providerMetadata"),
    ('{"type": "data-n", "data": {"big": 123456789012345678901234567890}}', "chunks[3].data.big"),
]  # fmt: skip


@pytest.mark.parametrize(("bad", "where"), BAD_CHUNKS)
def test_a_malformed_chunk_is_400_with_where_and_keeps_what_came_before(world: World, bad: Any, where: str) -> None:
    message = new_id()
    before = [{"type": "start", "messageId": message}, {"type": "text-start", "id": "t"},
              {"type": "text-delta", "id": "t", "delta": "so far"}]  # fmt: skip
    answer = post(world, world.agent, sse(*before, bad, {"type": "text-end", "id": "t"}, {"type": "finish"}))
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"]["where"] == where
    assert stored(world, message) == assembled(sse(*before))["last"]  # consistent: the text so far


def test_a_stream_that_is_not_utf8_is_400(world: World) -> None:
    answer = post(world, world.agent, b'data: {"type":"start"}\n\ndata: "\xff"\n\n')
    assert answer.status_code == 400 and answer.json()["error"]["where"] == "chunks[1]"


def test_a_bad_first_chunk_stores_nothing(world: World) -> None:
    before = world.alice.messages(world.agent)["seq"]
    answer = post(world, world.agent, sse({"type": "text-delta", "id": "t", "delta": "x"}))
    assert answer.status_code == 400 and answer.json()["error"]["where"] == "chunks[0].id"
    assert world.alice.messages(world.agent)["seq"] == before


def test_a_tool_the_registry_does_not_know_is_refused_by_the_door(world: World) -> None:
    message = new_id()
    stream = sse({"type": "start", "messageId": message}, {"type": "text-start", "id": "t"},
                 {"type": "text-end", "id": "t"},
                 {"type": "tool-input-start", "toolCallId": "c", "toolName": "not_registered"})  # fmt: skip
    answer = post(world, world.agent, stream)
    assert answer.status_code == 422 and answer.json()["error"]["where"] == "parts[1].type"
    assert stored(world, message)["parts"] == [{"type": "text", "text": "", "state": "done"}]


# -- access, media type, limits ---------------------------------------------------------------


def test_who_may_stream(world: World, transcripts: Transcripts) -> None:
    stream = sse(START, {"type": "finish"})
    assert post(world, world.agent, stream, token=world.bob_token).status_code == 404
    member = add_member(transcripts, world.workspace, "carol")
    assert post(world, world.agent, stream, token=member["token"]).status_code == 403  # a member, not the owner
    assert post(world, new_id(), stream).status_code == 404
    assert post(world, world.agent, stream, token="not-a-token").status_code == 401
    wrong = post(world, world.agent, stream, kind="application/json")
    assert wrong.status_code == 400 and wrong.json()["error"]["where"] == "content-type"


def test_an_empty_stream_stores_nothing(world: World) -> None:
    before = world.alice.messages(world.agent)["seq"]
    result = post(world, world.agent, b": stream-open\n\n").json()
    assert result["id"] is None and result["writes"] == 0
    assert world.alice.messages(world.agent)["seq"] == before


@pytest.fixture
def small(store: Store, settings: Settings) -> Iterator[ServerThread]:
    """A server whose bodies and messages are bounded at 64 KiB."""
    with ServerThread(Transcripts(store, settings=replace(settings, max_body=64 * 1024))) as server:
        yield server


def test_a_chunk_or_a_message_over_the_limit_is_413(world: World, small: ServerThread) -> None:
    there = replace(world, url=small.url)
    big = {"type": "text-delta", "id": "t", "delta": "x" * 70_000}
    answer = post(there, world.agent, sse(START, {"type": "text-start", "id": "t"}, big))
    assert answer.status_code == 413 and answer.json()["error"]["where"] == "chunks[2]"
    message = new_id()
    many = [{"type": "text-delta", "id": "t", "delta": "y" * 20_000} for _ in range(4)]
    opened = [{"type": "start", "messageId": message}, {"type": "text-start", "id": "t"}]
    answer = post(there, world.agent, sse(*opened, *many, {"type": "text-end", "id": "t"}))
    assert answer.status_code == 413 and answer.json()["error"]["where"] == "message"
    assert len(json.dumps(stored(world, message))) <= 64 * 1024  # the last write that fitted stands


@pytest.fixture
def hasty(store: Store, settings: Settings) -> Iterator[ServerThread]:
    """A server that wants a request's whole body within one second."""
    with ServerThread(Transcripts(store, settings=replace(settings, body_timeout=1.0))) as server:
        yield server


def test_a_stream_outlives_the_body_deadline_while_it_sends(world: World, hasty: ServerThread) -> None:
    """A model's answer takes minutes: a stream's body has an idle deadline, not the body's."""
    message = new_id()
    chunks = [sse({"type": "start", "messageId": message}, {"type": "text-start", "id": "t"}, done=False)]
    chunks += [sse({"type": "text-delta", "id": "t", "delta": f"{n} "}, done=False) for n in range(5)]
    chunks += [b": keep-alive\n\n", sse({"type": "text-end", "id": "t"}, {"type": "finish"})]
    answer = post(replace(world, url=hasty.url), world.agent, paced(b"".join(chunks), len(chunks), 2.5))
    assert answer.status_code == 200 and answer.json()["finished"] is True
    assert stored(world, message)["parts"] == [{"type": "text", "text": "0 1 2 3 4 ", "state": "done"}]

