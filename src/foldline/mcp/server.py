"""The tools declared to the MCP SDK, their descriptions (written for the agent that reads them),
who is calling, and the stdio transport (``foldline mcp``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from .. import __version__
from ..errors import FoldlineError, error_body
from ..service import Transcripts
from .answers import ANSWER_MAX, HIT_CONTEXT, SLICE_MAX, text_of
from .tools import HIT_MATCHES, Json, Tools

ACCOUNT_KEY = "foldline.account"  # where the HTTP endpoint leaves the caller in the request's scope

Caller = Callable[[Context], str]  # who is calling, from the tool call's context

INSTRUCTIONS = f"""Foldline keeps coding agents' transcripts: messages made of parts (text, reasoning, tool \
calls with input and output). Big fields are stored whole but sent cut (head and tail); search finds \
words anywhere, cut middles included. Every answer is at most about {ANSWER_MAX // 1024} KB of JSON: \
when one is cut it says so ("cut": true, a "note") and how to read on (a cursor, a slice). \
From a hit to the lines around it takes two calls: search, then read_part with the hit's "read_part" \
arguments as they are (the match and {HIT_CONTEXT} code points either side)."""

SEARCH = f"""Search every transcript you may read (or one workspace's, or one agent's and its subagents'), \
newest first. Words must all match, case-insensitive substrings; "quoted phrases" as written. Each hit \
is one field of one part (agent_id, call for a subagent, message_id, part, field) with every match in it: \
"count", "matches" (the first {HIT_MATCHES}: start and end in code points, "hidden" when a transcript read \
does not show it: a cut middle), the first match's start, end and hidden, a snippet around it, and \
"read_part": the arguments of the read_part call that returns the first match with {HIT_CONTEXT} code \
points either side; call read_part with them as they are (or with another match's start and end). "next", \
when not null, is the cursor of the next page."""

LIST_AGENTS = """The agents of a workspace, newest activity first: id, title, where they ran (source, \
project, branch, model), message count, tokens and estimated cost, and whether they are live. Without \
workspace_id, your first workspace; "workspaces" lists all of yours. "next" pages on."""

READ_TRANSCRIPT = """A window of an agent's transcript (or a subagent's, with call), oldest first: the \
newest messages, or with before (a previous answer's "next") the ones before those. Messages are in the \
cut form: a big field is sent as head and tail, its full size in the message's cutParts; read any field \
whole or in slices with read_part. A "next" is bound to the transcript as it was: if the agent has \
written since, the call says so (read again without before) instead of returning a shifted window."""

READ_PART = f"""One part of a message. With field (text, output, errorText or input), code points \
[start, end) of that field as the transcript shows it (at most {SLICE_MAX} in one answer; "length" is \
the field's whole length and "more" the arguments for the next slice). Without field, the whole part \
when it fits in one answer, else each big field's head and its length. Use a search hit's "read_part" \
arguments to read the lines around a match."""

USAGE = """Tokens and estimated cost over every agent you may read, summed by UTC day, by model or by agent."""

Agent = Annotated[str, Field(description="the agent's id (a UUID)")]
Call = Annotated[str | None, Field(description="a subagent's call id: the tool call that started it")]
Workspace = Annotated[str | None, Field(description="only this workspace (a UUID)")]
Cursor = Annotated[str | None, Field(description="a previous answer's 'next'")]


def mcp_server(transcripts: Transcripts, caller: Caller) -> MCPServer:
    """The MCP server of ``transcripts``; ``caller`` says which account each call is for."""
    tools = Tools(transcripts)
    server: MCPServer = MCPServer("foldline", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING")
    read_only = ToolAnnotations(read_only_hint=True, open_world_hint=False)

    def answer(ctx: Context, ask: Callable[[str], Json]) -> str:
        try:
            return text_of(ask(caller(ctx)))
        except FoldlineError as refused:
            raise ToolError(text_of(error_body(refused))) from None

    @server.tool(description=SEARCH, annotations=read_only, structured_output=False)
    def search(
        query: Annotated[str, Field(description="the words to find")],
        ctx: Context,
        workspace_id: Workspace = None,
        agent_id: Annotated[str | None, Field(description="only this agent and its subagents (a UUID)")] = None,
        limit: Annotated[int | None, Field(description="hits per answer, 1 to 50 (default 10)")] = None,
        cursor: Cursor = None,
    ) -> str:
        return answer(ctx, lambda who: tools.search(who, query, workspace_id, agent_id, limit, cursor))

    @server.tool(description=LIST_AGENTS, annotations=read_only, structured_output=False)
    def list_agents(
        ctx: Context,
        workspace_id: Workspace = None,
        limit: Annotated[int | None, Field(description="agents per answer, 1 to 200 (default 20)")] = None,
        cursor: Cursor = None,
    ) -> str:
        return answer(ctx, lambda who: tools.list_agents(who, workspace_id, limit, cursor))

    @server.tool(description=READ_TRANSCRIPT, annotations=read_only, structured_output=False)
    def read_transcript(
        agent_id: Agent,
        ctx: Context,
        call: Call = None,
        before: Annotated[str | None, Field(description="a previous answer's 'next': the messages before")] = None,
        limit: Annotated[int | None, Field(description="messages, 1 to 1000 (default 20)")] = None,
    ) -> str:
        return answer(ctx, lambda who: tools.read_transcript(who, agent_id, call, before, limit))

    @server.tool(description=READ_PART, annotations=read_only, structured_output=False)
    def read_part(
        agent_id: Agent,
        message_id: Annotated[str, Field(description="the message's id")],
        part: Annotated[int, Field(description="the part's index in the message, from 0")],
        ctx: Context,
        call: Call = None,
        field: Annotated[
            Literal["text", "output", "errorText", "input"] | None, Field(description="slice this field")
        ] = None,
        start: Annotated[int | None, Field(description="first code point of the slice (default 0)")] = None,
        end: Annotated[int | None, Field(description="code point after the slice's last")] = None,
    ) -> str:
        return answer(ctx, lambda who: tools.read_part(who, agent_id, message_id, part, call, field, start, end))

    @server.tool(description=USAGE, annotations=read_only, structured_output=False)
    def usage(ctx: Context, by: Literal["day", "model", "agent"] = "day") -> str:
        return answer(ctx, lambda who: tools.usage(who, by))

    return server


def http_caller(ctx: Context) -> str:
    """The account the HTTP endpoint signed in for this request (:mod:`.http`)."""
    request: Any = ctx.request_context.request
    account: str = request.scope[ACCOUNT_KEY]
    return account


def run_stdio(transcripts: Transcripts, account: str) -> None:
    """Serve the tools on stdin and stdout for ``account`` until the client closes them."""
    mcp_server(transcripts, lambda _: account).run("stdio")
