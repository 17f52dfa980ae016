"""The MCP SDK's own client, over streamable HTTP or over stdio (``foldline mcp`` in a process of
its own), driven from synchronous tests: each tool call's answer decoded, or its error."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import orjson
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

FOLDLINE = str(Path(sys.executable).with_name("foldline"))

Call = tuple[str, dict[str, Any]]


@dataclass
class Answer:
    """A tool's answer: its JSON decoded, or its error (``{"code", "message", "where"?}``)."""

    text: str
    error: dict[str, Any] | None

    @property
    def data(self) -> Any:
        assert self.error is None, self.text
        return orjson.loads(self.text)


def answer_of(result: Any) -> Answer:
    text = "".join(block.text for block in result.content)
    if not result.is_error:
        return Answer(text, None)
    if "{" not in text:  # refused by the tool's input schema, before Foldline saw it
        return Answer(text, {"message": text})
    return Answer(text, orjson.loads(text[text.index("{") :])["error"])


Opener = Callable[[], Any]


@asynccontextmanager
async def over_http(url: str, token: str | None) -> AsyncIterator[ClientSession]:
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers) as http,
        streamable_http_client(url + "/mcp", http_client=http) as (read, write, *_),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


@asynccontextmanager
async def over_stdio(db: str, args: Sequence[str] = (), token: str | None = None) -> AsyncIterator[ClientSession]:
    env = {key: value for key, value in os.environ.items() if key != "FOLDLINE_TOKEN"}
    if token is not None:
        env["FOLDLINE_TOKEN"] = token
    params = StdioServerParameters(command=FOLDLINE, args=["mcp", "--db", db, *args], env=env)
    with open(os.devnull, "w") as quiet:
        async with stdio_client(params, errlog=quiet) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            yield session


def run(open_session: Callable[[], Any], calls: Sequence[Call]) -> list[Answer]:
    """Each call's answer, in one session."""

    async def go() -> list[Answer]:
        async with open_session() as session:
            return [answer_of(await session.call_tool(name, args)) for name, args in calls]

    return in_a_loop_of_its_own(go())


def tool_list(open_session: Callable[[], Any]) -> list[Any]:
    async def go() -> list[Any]:
        async with open_session() as session:
            return list((await session.list_tools()).tools)

    return in_a_loop_of_its_own(go())


def in_a_loop_of_its_own(work: Any) -> Any:
    """``asyncio.run(work)`` in a thread of its own: a test before this one in the same worker
    (Playwright's sync API) may have left an event loop running in this thread."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, work).result()
