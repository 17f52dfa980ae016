"""The OpenAPI document tells the truth: its statuses, its error shape, its security, its parameters,
and a message shape that agrees with the write door's checks."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from conftest import World
from core_helpers import BIG_OUTPUT, assistant, bash, new_id, put, user
from jsonschema import Draft202012Validator

from foldline import message as shape
from foldline import schemas
from foldline.errors import Invalid
from foldline.registry import Registry

Json = dict[str, Any]
AGENT = "/api/agents/{agent}"
SUB = "/api/agents/{agent}/subagents/{call}"
SHARED = "/api/shared/{token}"
CONVERSATION = {  # path -> method -> the statuses it documents
    "/messages/{message}": {"put": {"200", "201", "400", "401", "403", "404", "413", "422"}},
    "/turn-end": {"post": {"200", "401", "403", "404", "409", "422"}},
    "/stream": {"post": {"200", "400", "401", "403", "404", "413", "422"}},
    "/messages": {"get": {"200", "400", "401", "404"}},
    "/messages/{message}/parts/{index}": {"get": {"200", "400", "401", "404", "429", "503"}},
    "/events": {"get": {"200", "400", "401", "404", "429"}},
}
STATUSES = {
    "/api/me": {"get": {"200", "401"}},
    "/api/status": {"get": {"200", "401"}},
    "/api/search": {"get": {"200", "400", "401", "404", "429", "503"}},
    # the panel's pages: HTML, or a redirect; a refused sign-in is the page again with its error
    "/": {"get": {"200", "303"}},
    "/agents/{agent}": {"get": {"200", "303"}},
    "/signin": {"get": {"200"}, "post": {"303", "401", "403", "413"}},
    "/signout": {"get": {"200"}, "post": {"303"}},
    "/api/agents": {"get": {"200", "400", "401", "404"}, "post": {"201", "400", "401", "404", "413", "422"}},
    AGENT: {"get": {"200", "401", "404"}, "delete": {"200", "400", "401", "403", "404"}},
    "/agents/{agent}/delete": {"post": {"303", "403", "404", "413"}},
    # the panel's Share dialog (same-origin fetches, as the cookie's account)
    "/agents/{agent}/share": {"post": {"201", "401", "403", "404", "413", "422"}},
    "/shares/{share}/revoke": {"post": {"204", "401", "403", "404", "413"}},
    "/api/samples": {"delete": {"200", "401"}},
    "/samples/remove": {"post": {"303"}},
    AGENT + "/export": {"get": {"200", "400", "401", "404", "429", "503"}},
    **{prefix + path: ops for path, ops in CONVERSATION.items() for prefix in (AGENT, SUB)},
    # share links: made, listed and revoked by members; read by whoever holds one (never a 401)
    AGENT + "/shares": {"get": {"200", "401", "404"}, "post": {"201", "400", "401", "404", "413", "422"}},
    "/api/shares/{share}": {"delete": {"204", "401", "404"}},
    "/s/{token}": {"get": {"200", "404"}},
    SHARED: {"get": {"200", "404"}},
    SHARED + "/search": {"get": {"200", "400", "404", "429", "503"}},
    SHARED + "/agents/{agent}": {"get": {"200", "404"}},
    SHARED + "/agents/{agent}/export": {"get": {"200", "400", "404", "429", "503"}},
    **{prefix + path: {"get": ops["get"] - {"401"}} for path, ops in CONVERSATION.items() if "get" in ops
       for prefix in (SHARED + "/agents/{agent}", SHARED + "/agents/{agent}/subagents/{call}")},
}
WRITES = {"put", "post", "delete"}


@pytest.fixture(scope="module")
def document(server: Any) -> Json:
    found: Json = httpx.get(f"{server.url}/api/openapi.json").json()
    return found


def operations(document: Json) -> Iterator[tuple[str, str, Json]]:
    for path, ops in document["paths"].items():
        for method, op in ops.items():
            yield path, method, op


def test_each_operation_lists_the_statuses_it_answers_with_the_error_shape(document: Json) -> None:
    listed = {path: {m: set(op["responses"]) - {"default"} for m, op in ops.items()}
              for path, ops in document["paths"].items()}
    assert listed == STATUSES
    for path, _, op in operations(document):
        for status, answer in op["responses"].items():
            if status[0] in "4d" and (path.startswith("/api") or status == "413"):
                assert answer["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/Error"}
    error = document["components"]["schemas"]["ErrorDetail"]
    assert error["required"] == ["code", "message"] and set(error["properties"]) == {"code", "message", "where"}


def test_no_validation_error_is_advertised(document: Json) -> None:
    assert "ValidationError" not in str(document)


def test_the_token_is_a_bearer_scheme_and_the_cookie_only_reads(document: Json) -> None:
    assert document["components"]["securitySchemes"]["bearerAuth"] == {
        "type": "http", "scheme": "bearer", "description": "an account's token"}
    for path, method, op in operations(document):
        if not path.startswith("/api") or path.startswith(SHARED):
            # the panel's pages are open (each checks its cookie itself); a share's token is its path
            assert "security" not in op, path
            continue
        schemes = {name for requirement in op["security"] for name in requirement}
        assert schemes == ({"bearerAuth"} if method in WRITES else {"bearerAuth", "panelCookie"}), (path, method)
        assert all(p["in"] != "header" or p["name"] != "authorization" for p in op.get("parameters", []))


def parameter(document: Json, path: str, name: str) -> Json:
    [found] = [p for p in document["paths"][path]["get"]["parameters"] if p["name"] == name]
    return found


@pytest.mark.parametrize("prefix", [AGENT, SUB])
def test_parameters_have_their_real_types(document: Json, prefix: str) -> None:
    limit = parameter(document, prefix + "/messages", "limit")["schema"]
    assert (limit["type"], limit["minimum"], limit["maximum"]) == ("integer", 1, 1000)
    assert parameter(document, prefix + "/messages", "parts")["schema"]["enum"] == ["cut", "whole"]
    assert parameter(document, prefix + "/messages", "before")["schema"]["pattern"] == "^[0-9]{1,10}$"
    since = parameter(document, prefix + "/events", "since")["schema"]
    assert (since["type"], since["minimum"], since["maximum"]) == ("integer", 0, 2**31 - 1)


def test_the_agents_list_documents_each_of_its_parameters(document: Json) -> None:
    names = [p["name"] for p in document["paths"]["/api/agents"]["get"]["parameters"]]
    assert names == ["workspace_id", "sort", "order", "source", "project", "no_project", "limit", "cursor"]
    assert parameter(document, "/api/agents", "no_project")["schema"]["enum"] == ["true", "false"]


def test_both_prefixes_have_distinct_operation_ids(document: Json) -> None:
    ids = [op["operationId"] for _, _, op in operations(document)]
    assert len(ids) == len(set(ids)) == 45  # 21 of the API, 13 of share links, 11 of the panel
    assert document["paths"][SUB + "/messages"]["get"]["operationId"] == "subagent_read_messages"
    assert [p["name"] for p in document["paths"][SUB + "/turn-end"]["post"]["parameters"]] == ["call", "agent"]


def test_the_message_body_and_the_part_are_the_published_shapes(document: Json) -> None:
    assert document["components"]["schemas"] | schemas.components() == document["components"]["schemas"]
    put_op = document["paths"][AGENT + "/messages/{message}"]["put"]
    assert put_op["requestBody"]["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/UIMessage"}
    part = document["components"]["schemas"]["UIPart"]
    assert {branch["title"] for branch in part["oneOf"]} == {*shape.PARTS, "data-*", "tool-*", "dynamic-tool"}


# -- the published message shape agrees with the write door ------------------------------------


def validator(name: str) -> Draft202012Validator:
    components = {"schemas": schemas.components()}
    return Draft202012Validator({"$ref": f"#/components/schemas/{name}", "components": components})


UI_MESSAGE = validator("UIMessage")
UI_PART = validator("UIPart")
REGISTRY = Registry.load(None)


def door_accepts(message: Json) -> bool:
    try:
        shape.check_message(message, REGISTRY)
    except Invalid:
        return False
    return True


def shape_accepts(part: Any) -> bool:
    """The door's structural pass on one part (what it checks beyond it is the registry's)."""
    try:
        shape.check_shape(part, "")
    except Invalid:
        return False
    return True


VALUES: Json = {"input": {"command": "ls"}, "output": "ok", "errorText": "failed", "rawInput": "ls",
          "preliminary": False}


def tool(kind: str, state: str, full: bool = False) -> Json:
    """A tool part in ``state`` with the fields it requires (``full``: and those it allows)."""
    part: Json = {"type": kind, "toolCallId": "c1", "state": state}
    values = {**VALUES, "approval": approval(state)}
    part.update({name: values[name] for name, rule in shape.TOOL_STATES[state].items() if full or rule == "req"})
    return {**part, **({"toolName": "mcp__x"} if kind == "dynamic-tool" else {})}


def approval(state: str) -> Json:
    answers: dict[str, Json] = {"approval-requested": {}, "approval-responded": {"approved": True},
                                "output-denied": {"approved": False}}
    return {"id": "ap1", **answers.get(state, {"approved": True})}


def parts() -> list[Json]:
    """A part of each type the door knows, every tool state, with and without its optional fields."""
    found: list[Json] = [
        {"type": "text", "text": "hi"}, {"type": "text", "text": "hi", "state": "done", "providerMetadata": {}},
        {"type": "reasoning", "text": "hmm", "id": "r1", "state": "streaming"},
        {"type": "source-url", "sourceId": "s", "url": "https://example.org", "title": "t"},
        {"type": "source-document", "sourceId": "s", "mediaType": "text/plain", "title": "t", "filename": "f"},
        {"type": "file", "mediaType": "image/png", "url": "data:image/png;base64,AA", "filename": "a.png"},
        {"type": "reasoning-file", "mediaType": "image/png", "url": "https://example.org/a.png"},
        {"type": "custom", "kind": "note"}, {"type": "step-start"},
        {"type": "steering-message", "id": "s1", "parts": [{"type": "text", "text": "focus"}]},
        {"type": "data-weather", "data": {"t": 20}, "id": "w"}, {"type": "data-x", "data": None},
    ]
    for state in shape.TOOL_STATES:
        for kind in ("dynamic-tool", "tool-bash"):
            found += [tool(kind, state), tool(kind, state, full=True)]
    return found


def test_every_message_the_door_accepts_matches_the_published_schema() -> None:
    for part in parts():
        message = {"id": new_id(), "role": "assistant", "parts": [part], "metadata": {}, "extra": 1}
        assert door_accepts(message), part
        assert UI_MESSAGE.is_valid(message), part
    assert UI_MESSAGE.is_valid({"role": "assistant", "parts": []})
    assert not UI_MESSAGE.is_valid({"role": "user", "parts": []})


ODD_VALUES: list[Any] = [None, 0, True, "x", [], {}, {"id": "a"}, {"id": "a", "approved": True},
                         {"id": "a", "approved": False}, {"approved": True}]
STATES = [*shape.TOOL_STATES, *shape.TEXT_STATES]
TOOL_FIELDS = {"state", "toolName", *shape.STATE_FIELDS}


def mutants(part: Json) -> Iterator[Json]:
    """``part`` with each of its fields taken away or given each odd value (a tool part: each state
    field too, and each state tried)."""
    tool_like = part["type"] == "dynamic-tool" or part["type"].startswith("tool-")
    for name in sorted(set(part) | (TOOL_FIELDS if tool_like else set())):
        if name in part:
            yield {k: v for k, v in part.items() if k != name}
        for value in [*ODD_VALUES, *(STATES if name == "state" else [])]:
            yield {**copy.deepcopy(part), name: value}


def test_the_door_and_the_schema_agree_on_the_shape_of_each_part() -> None:
    """Both ways, on the structural pass (a static tool's input and output answer to the registry)."""
    disagree = [m for part in parts() for m in mutants(part) if shape_accepts(m) != UI_PART.is_valid(m)]
    assert disagree == []


@pytest.mark.parametrize("message", [
    {"role": "user", "parts": [{"type": "text", "text": "x"}], "id": 12},
    {"role": 1, "parts": []}, {"role": "user", "parts": "text"}, {"role": "user", "parts": [None]},
    {"role": "user", "parts": [1]}, {"role": "user", "parts": [{"type": None}]}, {"role": "user"}, {"parts": []},
])
def test_messages_the_door_refuses_by_shape_do_not_match(message: Json) -> None:
    assert not door_accepts(message)
    assert not UI_MESSAGE.is_valid(message)


# -- what the routes answer matches what the document says -------------------------------------


def answer_schema(document: Json, path: str, method: str, status: int) -> Draft202012Validator:
    response = document["paths"][path][method]["responses"][str(status)]
    schema = response["content"]["application/json"]["schema"]
    return Draft202012Validator({**schema, "components": document["components"]})


def conforms(document: Json, path: str, method: str, response: httpx.Response) -> None:
    validator = answer_schema(document, path, method, response.status_code)
    errors = [e.message for e in validator.iter_errors(response.json())]
    assert errors == [], (path, method, response.status_code)


@pytest.mark.parametrize("call", [None, "toolu_01"])
def test_every_answer_matches_its_documented_schema(world: World, document: Json, call: str | None) -> None:
    auth = {"Authorization": f"Bearer {world.alice_token}"}
    base = f"{world.url}/api/agents/{world.agent}" + (f"/subagents/{call}" if call else "")
    prefix = SUB if call else AGENT
    message = assistant([bash(BIG_OUTPUT), {"type": "tool-bash", "toolCallId": "o", "state": "input-available",
                                            "input": {"command": "x"}}])
    written = httpx.put(f"{base}/messages/{message['id']}", json=message, headers=auth)
    conforms(document, prefix + "/messages/{message}", "put", written)
    put(world.alice, world.agent, user("again"), call=call)
    for params in ({}, {"parts": "cut"}, {"parts": "cut", "limit": "1"}, {"limit": "x"}):
        conforms(document, prefix + "/messages", "get", httpx.get(f"{base}/messages", params=params, headers=auth))
    for index in ("0", "1", "9"):
        part = httpx.get(f"{base}/messages/{message['id']}/parts/{index}", headers=auth)
        conforms(document, prefix + "/messages/{message}/parts/{index}", "get", part)
    conforms(document, prefix + "/turn-end", "post", httpx.post(f"{base}/turn-end", headers=auth))
    conforms(document, prefix + "/turn-end", "post", httpx.post(f"{base}/turn-end"))
    bob = {"Authorization": f"Bearer {world.bob_token}"}
    conforms(document, prefix + "/messages/{message}", "put", httpx.put(f"{base}/messages/{new_id()}", headers=bob))
    conforms(document, AGENT, "get", httpx.get(f"{world.url}/api/agents/{world.agent}", headers=auth))
    agents = httpx.get(f"{world.url}/api/agents", params={"workspace_id": world.workspace}, headers=auth)
    conforms(document, "/api/agents", "get", agents)
    conforms(document, "/api/status", "get", httpx.get(f"{world.url}/api/status", headers=auth))
    conforms(document, "/api/me", "get", httpx.get(f"{world.url}/api/me", headers=auth))
    created = httpx.post(f"{world.url}/api/agents", json={"workspace_id": world.workspace}, headers=auth)
    conforms(document, "/api/agents", "post", created)


def test_share_answers_match_their_documented_schemas(world: World, document: Json) -> None:
    auth = {"Authorization": f"Bearer {world.alice_token}"}
    message = put(world.alice, world.agent, assistant([bash(BIG_OUTPUT)]))
    put(world.alice, world.agent, user("a worker"), call="toolu_01")
    made = httpx.post(f"{world.url}/api/agents/{world.agent}/shares", json={"expires_in": 60}, headers=auth)
    conforms(document, AGENT + "/shares", "post", made)
    listed = httpx.get(f"{world.url}/api/agents/{world.agent}/shares", headers=auth)
    conforms(document, AGENT + "/shares", "get", listed)
    shared = f"{world.url}/api/shared/{made.json()['token']}"
    agent = f"{SHARED}/agents/{{agent}}"
    conforms(document, SHARED, "get", httpx.get(shared))
    conforms(document, agent, "get", httpx.get(f"{shared}/agents/{world.agent}"))
    conforms(document, SHARED + "/search", "get", httpx.get(f"{shared}/search", params={"q": "line"}))
    for prefix, path in ((agent, f"/agents/{world.agent}"), (agent + "/subagents/{call}",
                                                              f"/agents/{world.agent}/subagents/toolu_01")):
        for params in ({}, {"parts": "cut", "limit": "1"}, {"limit": "x"}):
            conforms(document, prefix + "/messages", "get", httpx.get(f"{shared}{path}/messages", params=params))
    part = httpx.get(f"{shared}/agents/{world.agent}/messages/{message['id']}/parts/0", params={"field": "output"})
    conforms(document, agent + "/messages/{message}/parts/{index}", "get", part)
    conforms(document, agent, "get", httpx.get(f"{shared}/agents/{new_id()}"))
    revoked = httpx.delete(f"{world.url}/api/shares/{made.json()['id']}", headers=auth)
    assert revoked.status_code == 204 and revoked.content == b""
    unknown = httpx.delete(f"{world.url}/api/shares/{new_id()}", headers=auth)
    conforms(document, "/api/shares/{share}", "delete", unknown)
