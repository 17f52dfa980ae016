"""Small builders of messages and parts for the core's tests."""

from __future__ import annotations

import uuid
from typing import Any

from foldline import Client
from foldline.service import Transcripts
from foldline.store import Store

Json = dict[str, Any]
BIG_OUTPUT = "line of bash output\n" * 105_000  # about 2 MB
LONG_THOUGHT = "I think about the build. " * 400  # 10 000 characters


def caught_up(store: Store) -> int:
    """Run the indexer until the backlog is empty (tests have no indexer running); the chunks indexed."""
    done = 0
    while chunks := store.index_pending()[0]:
        done += chunks
    return done


def new_id() -> str:
    return str(uuid.uuid4())


def text(value: str) -> Json:
    return {"type": "text", "text": value}


def thought(value: str) -> Json:
    return {"type": "reasoning", "text": value}


def tool(name: str, output: Any, *, input: Json | None = None, call: str | None = None) -> Json:
    return {
        "type": f"tool-{name}",
        "toolCallId": call or new_id(),
        "state": "output-available",
        "input": input if input is not None else {"command": "make"},
        "output": output,
    }


def bash(output: Any) -> Json:
    return tool("bash", output, input={"command": "make test"})


def user(value: str, message_id: str | None = None) -> Json:
    return {"id": message_id or new_id(), "role": "user", "parts": [text(value)]}


def assistant(parts: list[Json], message_id: str | None = None) -> Json:
    return {"id": message_id or new_id(), "role": "assistant", "parts": parts}


def put(client: Client, agent: str, message: Json, call: str | None = None) -> Json:
    client.put_message(agent, message, call=call)
    return message


def add_member(transcripts: Transcripts, workspace: str, name: str) -> Json:
    """A second account added to ``workspace``: its id and token."""
    account = transcripts.create_account(name)
    transcripts.add_member(workspace, account["id"])
    return account
