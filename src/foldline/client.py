"""The Python client: ``foldline.Client``, on httpx.

    >>> client = Client("http://127.0.0.1:8765", token="fl_…")
    >>> agent = client.create_agent(workspace_id, title="fix the build")
    >>> client.put_message(agent["id"], {"id": str(uuid4()), "role": "user",
    ...                                   "parts": [{"type": "text", "text": "hello"}]})
    >>> page = client.messages(agent["id"], cut=True, limit=50)
    >>> whole = client.part(agent["id"], page["messages"][-1]["id"], 0)
    >>> with client.events(agent["id"], since=page["seq"]) as events:
    ...     for seq, message in events: ...

Every method takes ``call=`` to address a subagent's conversation (the subagent the agent
started with that tool call) instead of the agent's own.

Every method raises a :mod:`foldline.errors` class on an error answer (``NotFound``,
``Invalid`` with ``where``, …) and ``TransportError`` when the server cannot be reached.
``transport=`` takes any synchronous httpx transport (``httpx.HTTPTransport(retries=3)``, or a
bridge to an app in the same process, as the tests' ``InProcess`` over ``httpx.ASGITransport``).
"""

from __future__ import annotations

import uuid
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from contextlib import ExitStack
from typing import Any, BinaryIO, Required, TypedDict
from urllib.parse import quote

import httpx
import orjson
from httpx_sse import EventSource, SSEError

from .errors import FoldlineError, TransportError, from_body

Json = dict[str, Any]
Part = dict[str, Any]
"""One UIMessage part (``{"type": "text", "text": …}``, ``{"type": "tool-bash", …}``, …), as written."""


class Workspace(TypedDict):
    id: str
    name: str
    samples: bool  # the workspace of the sample sessions a first run imported


class Me(TypedDict):
    """The caller (``GET /api/me``) and the workspaces it is a member of."""

    id: str
    name: str
    workspaces: list[Workspace]


class Usage(TypedDict):
    """Tokens (``input_tokens`` counts cache reads and writes too) and the estimated cost in US
    dollars, ``None`` when a model's price is not known."""

    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    total_tokens: int
    cost_usd: float | None
    priced_cost_usd: float  # what the messages of models with a known price cost
    unpriced_messages: int  # messages with tokens whose model has no known price


class ModelUsage(Usage):
    """An agent's usage on one model (``model`` None: messages that named none)."""

    model: str | None
    messages: int


class Prices(TypedDict):
    """The price table costs come from: ``{"source": "genai-prices", "version": "…"}``."""

    source: str
    version: str | None


class AgentSummary(TypedDict):
    """An agent as listed (``GET /api/agents``). Times are ISO 8601 UTC strings. ``source`` is
    an importer's name (``claude-code``, ``codex``, ``gemini-cli``, … as ``foldline.sources``
    lists them) or ``api``; ``messages`` and ``usage`` count its subagents' too; ``live``:
    written to in the last 5 minutes."""

    id: str
    workspace_id: str
    owner_id: str
    title: str | None
    created_at: str
    updated_at: str
    source: str | None
    project: str | None
    branch: str | None
    model: str | None
    messages: int
    usage: Usage
    live: bool


class Agent(AgentSummary, total=False):
    """One agent (``GET /api/agents/{agent}``), with the call ids of its subagents, oldest first,
    and (on a read, not on creation) its usage by model and the price table."""

    subagents: Required[list[str]]
    usage_by_model: list[ModelUsage]
    prices: Prices


class Facet(TypedDict):
    value: str | None
    agents: int


class Facets(TypedDict):
    sources: list[Facet]
    projects: list[Facet]


class AgentList(TypedDict, total=False):
    """A page of agents (``GET /api/agents``): pass ``next`` back as ``cursor``; ``facets`` (the
    sources and projects to filter by) comes with the first page only."""

    agents: Required[list[AgentSummary]]
    next: Required[str | None]
    prices: Required[Prices]
    facets: Facets


class CutPart(TypedDict):
    """Where a cut read left out a big field of a part: fetch it whole with :meth:`Client.part`."""

    index: int
    field: str
    bytes: int
    head: str
    tail: str


class _MessageKeys(TypedDict):
    id: str
    role: str
    parts: list[Part]


class Message(_MessageKeys, total=False):
    """An AI SDK UIMessage as read back (``id``, ``role`` and ``parts`` always). Keys the writer
    added are kept (``metadata``, …); a cut read adds ``cutParts`` for the parts it sent without
    their big field, and ``createdAt`` (when the service first stored the message)."""

    metadata: Any
    cutParts: list[CutPart]
    createdAt: str


class Page(TypedDict):
    """One page of a transcript, oldest message first.

    ``next`` is the ``before`` cursor of the older page (``None``: this is the oldest);
    ``seq`` is the conversation's write number read with the page: follow
    :meth:`Client.events` from it to miss nothing.
    """

    messages: list[Message]
    next: str | None
    seq: int


class WriteResult(TypedDict):
    """A stored write: the message's id, the write's seq and whether the message is new."""

    id: str
    seq: int
    created: bool


class Streamed(TypedDict):
    """How a UI message stream ended (:meth:`Client.stream`): the message's Foldline ``id``, the
    id its ``start`` chunk gave (``messageId``), the ``seq`` of its last write, whether ``finish``
    and ``[DONE]`` arrived, the tool parts ``ended`` with an unknown outcome, and the ``writes``."""

    id: str | None
    messageId: str | None  # the AI SDK's spelling
    seq: int | None
    finished: bool
    done: bool
    ended: list[int]
    writes: int


class Slice(TypedDict):
    """Code points ``[start, end)`` of one field of a part, and the field's whole ``length``."""

    field: str
    start: int
    end: int
    length: int
    text: str


class Span(TypedDict):
    start: int
    end: int


class Snippet(TypedDict):
    """Plain text around a result's first match, with its offsets inside it and every match it shows."""

    text: str
    start: int
    end: int
    matches: list[Span]


class Match(TypedDict):
    """One match: code-point offsets in the field, and whether a cut read leaves it out."""

    start: int
    end: int
    hidden: bool


class Hit(TypedDict):
    """A result: one field of one part (the conversation, message, part and field) with every
    match in it (``matches``, ``count``; ``more`` when the next page goes on in it); ``start``,
    ``end`` and ``hidden`` are its first match's."""

    agent_id: str
    call: str | None
    message_id: str
    part: int
    field: str
    start: int
    end: int
    hidden: bool
    count: int
    more: bool
    matches: list[Match]
    role: str
    tool: str | None
    title: str | None
    snippet: Snippet


class SearchPage(TypedDict):
    """A page of hits, newest first; ``next`` is the cursor of the following page, or ``None``;
    ``partial`` is true when the search ran out of time before the page was full (it may hold
    fewer hits than asked, or none, and ``next`` goes on from where it stopped)."""

    hits: list[Hit]
    next: str | None
    partial: bool


class Share(TypedDict):
    """A share link: whoever holds its token reads one agent and its subagents, and nothing else
    (``expires_at`` None: it never expires)."""

    id: str
    agent_id: str
    created_at: str
    expires_at: str | None


class NewShare(Share):
    """A share just made: its panel address (``/s/{token}``) and its token, shown once."""

    url: str
    token: str


class Deleted(TypedDict):
    """What a delete did: the agent's id, its subagents deleted with it, and whether imports
    pass its session over from now on."""

    id: str
    deleted: bool
    subagents: int
    forgotten: bool


class TurnEnd(TypedDict):
    """What a turn-end did: the last assistant message (``None``: there is none) and the
    indexes of its open tool parts it gave an unknown outcome."""

    message: str | None
    ended: list[int]


class Client:
    """A Foldline server, seen by one account (its bearer token).

    ``base_url`` is the server's root (``http://127.0.0.1:8765``). ``transport`` replaces
    httpx's (a synchronous ``httpx.BaseTransport``); ``timeout`` bounds each request in seconds.
    Use it as a context manager, or call :meth:`close`.
    """

    def __init__(
        self, base_url: str, token: str, *, transport: httpx.BaseTransport | None = None, timeout: float = 30.0
    ) -> None:
        self._http = httpx.Client(
            base_url=base_url.rstrip("/"),
            transport=transport,
            timeout=timeout,
            headers={"Authorization": f"Bearer {token}"},
        )

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connections (an open :meth:`events` stream stops reading)."""
        self._http.close()

    def _call(self, method: str, path: str, body: Any = None, params: dict[str, Any] | None = None) -> Any:
        content = orjson.dumps(body) if body is not None else None
        headers = {"Content-Type": "application/json"} if content is not None else None
        try:
            response = self._http.request(method, path, content=content, params=params, headers=headers)
        except httpx.TransportError as exc:
            raise TransportError(f"could not reach Foldline: {exc}") from exc
        if not response.is_success:
            raise error_of(response)
        return decode(response.content)

    @staticmethod
    def _base(agent: str, call: str | None) -> str:
        path = f"/api/agents/{quote(agent, safe='')}"
        return path if call is None else f"{path}/subagents/{quote(call, safe='')}"

    # -- agents --------------------------------------------------------------------------

    def me(self) -> Me:
        """The caller and the workspaces it is a member of."""
        result: Me = self._call("GET", "/api/me")
        return result

    def create_agent(self, workspace_id: str, title: str | None = None) -> Agent:
        """A new agent owned by the caller in one of its workspaces."""
        body: Json = {"workspace_id": workspace_id}
        if title is not None:
            body["title"] = title
        result: Agent = self._call("POST", "/api/agents", body)
        return result

    def agents(self, workspace_id: str, **filters: Any) -> list[AgentSummary]:
        """Every agent of the workspace (page after page), the most recently active first, or
        as ``sort``/``order`` say; ``source``, ``project`` and ``no_project`` filter (see
        :meth:`agents_page`)."""
        found: list[AgentSummary] = []
        cursor: str | None = None
        while True:
            page = self.agents_page(workspace_id, cursor=cursor, limit=200, **filters)
            found.extend(page["agents"])
            cursor = page["next"]
            if cursor is None:
                return found

    def agents_page(
        self,
        workspace_id: str,
        *,
        sort: str | None = None,
        order: str | None = None,
        source: str | None = None,
        project: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
        no_project: bool = False,
    ) -> AgentList:
        """One page of the workspace's agents: ``sort`` is activity (default), messages, tokens,
        cost or title; ``order`` asc or desc; ``source`` an importer's name or api; ``project`` a
        folder (``no_project``: only the agents with none); ``limit`` 1–200 (default 50); ``cursor``
        the ``next`` of the page before."""
        asked = {"workspace_id": workspace_id, "sort": sort, "order": order, "source": source, "project": project,
                 "no_project": "true" if no_project else None, "limit": limit, "cursor": cursor}  # fmt: skip
        result: AgentList = self._call("GET", "/api/agents", params={k: v for k, v in asked.items() if v is not None})
        return result

    def agent(self, agent: str) -> Agent:
        """One agent the caller can read, with its subagents' call ids."""
        result: Agent = self._call("GET", self._base(agent, None))
        return result

    # -- writes --------------------------------------------------------------------------

    def delete_agent(self, agent: str, *, forget: bool = False) -> Deleted:
        """Delete an agent the caller owns, with its subagents and everything stored of them
        (a member who is not its owner gets ``Forbidden``); its followers are told. An imported
        session comes back on the next import unless ``forget`` (then imports pass it over)."""
        result: Deleted = self._call("DELETE", self._base(agent, None), params={"forget": "true"} if forget else None)
        return result

    def put_message(self, agent: str, message: Mapping[str, Any], *, call: str | None = None) -> WriteResult:
        """Create or replace ``message`` (a UIMessage; its ``id`` names it, and one is made if it
        has none) in the agent's conversation or, with ``call``, its subagent's (made on its
        first write). Only the agent's owner writes; a refused field raises ``Invalid``."""
        if message.get("id") is None:
            message = {**message, "id": str(uuid.uuid4())}
        path = f"{self._base(agent, call)}/messages/{quote(str(message['id']), safe='')}"
        result: WriteResult = self._call("PUT", path, message)
        return result

    def stream(
        self, agent: str, chunks: Iterable[Mapping[str, Any] | str | bytes], *, call: str | None = None
    ) -> Streamed:
        """Send an AI SDK UI message stream to the agent (or, with ``call``, its subagent): each
        chunk a UI message chunk (``{"type": "text-delta", ...}``), sent as the SDK's server-sent
        event as it is taken from ``chunks`` (a generator streams it), or bytes already in that
        form (an app's stream, copied). The assistant message is stored as it grows, as the SDK's
        ``readUIMessageStream`` assembles it; the answer says how the stream ended."""

        def events() -> Iterator[bytes]:
            for chunk in chunks:
                if isinstance(chunk, bytes):
                    yield chunk
                else:
                    yield b"data: " + (chunk.encode() if isinstance(chunk, str) else orjson.dumps(chunk)) + b"\n\n"

        try:
            response = self._http.post(
                f"{self._base(agent, call)}/stream", content=events(), headers={"Content-Type": "text/event-stream"}
            )
        except httpx.TransportError as exc:
            raise TransportError(f"could not reach Foldline: {exc}") from exc
        if not response.is_success:
            raise error_of(response)
        result: Streamed = decode(response.content)
        return result

    def end_turn(self, agent: str, *, call: str | None = None) -> TurnEnd:
        """End the turn: the open tool parts of the last assistant message get an unknown outcome."""
        result: TurnEnd = self._call("POST", f"{self._base(agent, call)}/turn-end")
        return result

    # -- reads ---------------------------------------------------------------------------

    def messages(
        self,
        agent: str,
        *,
        call: str | None = None,
        cut: bool = False,
        limit: int | None = None,
        before: str | None = None,
    ) -> Page:
        """One page, the newest ``limit`` messages before the cursor ``before`` (a page's
        ``next``); without ``limit``, the whole transcript. ``cut=True`` sends big tool outputs,
        thoughts and files as a head and a tail (listed in each message's ``cutParts``)."""
        params: dict[str, Any] = {}
        if cut:
            params["parts"] = "cut"
        if limit is not None:
            params["limit"] = limit
        if before is not None:
            params["before"] = before
        result: Page = self._call("GET", f"{self._base(agent, call)}/messages", params=params)
        return result

    def iter_messages(
        self, agent: str, *, call: str | None = None, cut: bool = False, page_size: int = 100
    ) -> Iterator[Message]:
        """Every message, newest first, read ``page_size`` at a time (stop early to read less)."""
        before = None
        while True:
            page = self.messages(agent, call=call, cut=cut, limit=page_size, before=before)
            yield from reversed(page["messages"])
            before = page["next"]
            if before is None:
                return

    def part(self, agent: str, message: str, index: int, *, call: str | None = None) -> Part:
        """One part of a message, whole: what a cut read left out (``cutParts[i]["index"]``)."""
        path = f"{self._base(agent, call)}/messages/{quote(message, safe='')}/parts/{index}"
        result: Part = self._call("GET", path)
        return result

    def export(self, agent: str, out: BinaryIO, format: str = "json") -> int:
        """The agent's whole export (its subagents included) written to ``out`` as it arrives:
        ``format`` is ``json``, ``md`` or ``html``. Returns how many bytes were written."""
        path = f"{self._base(agent, None)}/export"
        written = 0
        try:
            with self._http.stream("GET", path, params={"format": format}) as response:
                if not response.is_success:
                    response.read()
                    raise error_of(response)
                for chunk in response.iter_bytes():
                    out.write(chunk)
                    written += len(chunk)
        except httpx.TransportError as exc:
            raise TransportError(f"could not reach Foldline: {exc}") from exc
        return written

    def part_slice(
        self,
        agent: str,
        message: str,
        index: int,
        field: str,
        *,
        start: int = 0,
        end: int | None = None,
        call: str | None = None,
    ) -> Slice:
        """Code points ``[start, end)`` of one field (``text``, ``output``, ``errorText``,
        ``input``) of one part, of the agent or its subagent ``call``: ``{"field", "start",
        "end", "length", "text"}``; ``end`` defaults to (and is clamped to) the field's length."""
        params: dict[str, Any] = {"field": field, "start": start}
        if end is not None:
            params["end"] = end
        path = f"{self._base(agent, call)}/messages/{quote(message, safe='')}/parts/{index}"
        result: Slice = self._call("GET", path, params=params)
        return result

    # -- search --------------------------------------------------------------------------

    def search(
        self,
        q: str,
        *,
        workspace_id: str | None = None,
        agent: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> SearchPage:
        """Hits for ``q`` in every transcript the caller may read (narrowed to a workspace, or
        an agent with its subagents), newest first: ``{"hits", "next"}``; pass ``next`` back as
        ``cursor`` for the following page."""
        params: dict[str, Any] = {"q": q}
        for name, value in (("workspace_id", workspace_id), ("agent", agent), ("limit", limit), ("cursor", cursor)):
            if value is not None:
                params[name] = value
        result: SearchPage = self._call("GET", "/api/search", params=params)
        return result

    # -- share links -------------------------------------------------------------------

    def create_share(self, agent: str, *, expires_in: int | None = None) -> NewShare:
        """A share link of an agent the caller may read: ``url`` opens it in the panel,
        read-only, without signing in; it expires after ``expires_in`` seconds (default: never).
        The token is shown once."""
        body: Json = {} if expires_in is None else {"expires_in": expires_in}
        result: NewShare = self._call("POST", f"{self._base(agent, None)}/shares", body)
        return result

    def shares(self, agent: str) -> list[Share]:
        """The agent's share links that have not expired, oldest first (never their tokens)."""
        result: list[Share] = self._call("GET", f"{self._base(agent, None)}/shares")["shares"]
        return result

    def revoke_share(self, share_id: str) -> None:
        """Revoke a share link by its id: it opens nothing from now on, and its open streams end."""
        self._call("DELETE", f"/api/shares/{quote(share_id, safe='')}")

    # -- live --------------------------------------------------------------------------

    def events(self, agent: str, *, call: str | None = None, since: int | None = None) -> Events:
        """Follow the conversation live: each message written after ``since`` (a page's ``seq``;
        default 0, every message) arrives cut, as ``(seq, message)``, in the order written; a
        message written again arrives again.

        The stream is open when this returns: the server has taken its first look, so every
        write from then on arrives. It ends when the conversation is deleted (``deleted`` is
        then true) or the caller may no longer read it; otherwise close it (``with``) to stop.
        """
        params = {} if since is None else {"since": since}
        return Events(self._http, f"{self._base(agent, call)}/events", params)


class Events:
    """A live event stream from :meth:`Client.events`: iterate it for ``(seq, message)`` pairs."""

    def __init__(self, http: httpx.Client, path: str, params: dict[str, Any]) -> None:
        self._exits = ExitStack()
        self._pending: deque[tuple[int, Message]] = deque()
        self.deleted = False  # the stream ended because its conversation was deleted
        t = http.timeout  # the server says something at least every 15 s: a minute's silence is a broken stream
        timeout = httpx.Timeout(connect=t.connect, read=60.0, write=t.write, pool=t.pool)
        try:
            response = self._exits.enter_context(
                http.stream("GET", path, params=params, headers={"Accept": "text/event-stream"}, timeout=timeout)
            )
            if not response.is_success:
                response.read()
                raise error_of(response)
            self._sse = EventSource(response).iter_sse()
            self._frames = self._read()
            self._opened()
        except BaseException as exc:
            self.close()
            if isinstance(exc, httpx.TransportError):
                raise TransportError(f"could not reach Foldline: {exc}") from exc
            raise

    def _opened(self) -> None:
        """Read up to the ``retry`` frame, which the server sends after its first look."""
        for found in self._frames:
            if found is None:
                return
            self._pending.append(found)
        raise TransportError("the event stream ended before it opened")

    def _read(self) -> Iterator[tuple[int, Message] | None]:
        """The stream's messages, with ``None`` where it said how soon to reconnect."""
        try:
            for sse in self._sse:
                if sse.event == "deleted":
                    self.deleted = True
                    return
                if sse.data:
                    yield int(sse.id), orjson.loads(sse.data)
                elif sse.retry is not None:
                    yield None
        except (httpx.TransportError, SSEError) as exc:
            raise TransportError(f"the event stream broke: {exc}") from exc

    def __iter__(self) -> Iterator[tuple[int, Message]]:
        return self

    def __next__(self) -> tuple[int, Message]:
        if self._pending:
            return self._pending.popleft()
        for found in self._frames:
            if found is not None:
                return found
        raise StopIteration

    def __enter__(self) -> Events:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop following: the connection is closed."""
        self._exits.close()


def decode(content: bytes) -> Any:
    try:
        return orjson.loads(content) if content else None
    except orjson.JSONDecodeError:
        return None


def error_of(response: httpx.Response) -> FoldlineError:
    return from_body(response.status_code, decode(response.content))
