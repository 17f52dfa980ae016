"""The Python client: ``foldline.Client``, on httpx.

    >>> client = Client("http://127.0.0.1:8765", token="fl_…")
    >>> agent = client.create_agent(workspace_id, title="fix the build")
    >>> client.put_message(agent["id"], {"id": str(uuid4()), "role": "user",
    ...                                   "parts": [{"type": "text", "text": "hello"}]})
    >>> page = client.messages(agent["id"], cut=True, limit=50)

Every method raises a :mod:`foldline.errors` class on an error answer (``NotFound``,
``Invalid`` with ``where``, …) and ``TransportError`` when the server cannot be reached.
Pass ``transport=httpx.ASGITransport(app)`` to talk to an app in the same process.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import httpx
import orjson

from .errors import TransportError, from_body

Json = dict[str, Any]


class Client:
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
        self._http.close()

    def _call(self, method: str, path: str, body: Any = None, params: dict[str, Any] | None = None) -> Any:
        content = orjson.dumps(body) if body is not None else None
        headers = {"Content-Type": "application/json"} if content is not None else None
        try:
            response = self._http.request(method, path, content=content, params=params, headers=headers)
        except httpx.TransportError as exc:
            raise TransportError(f"could not reach Foldline: {exc}") from exc
        try:
            data = orjson.loads(response.content) if response.content else None
        except orjson.JSONDecodeError:
            data = None
        if not response.is_success:
            raise from_body(response.status_code, data)
        return data

    @staticmethod
    def _base(agent: str, call: str | None) -> str:
        path = f"/api/agents/{quote(agent, safe='')}"
        return path if call is None else f"{path}/subagents/{quote(call, safe='')}"

    # -- agents --------------------------------------------------------------------------

    def me(self) -> Json:
        result: Json = self._call("GET", "/api/me")
        return result

    def create_agent(self, workspace_id: str, title: str | None = None) -> Json:
        body: Json = {"workspace_id": workspace_id}
        if title is not None:
            body["title"] = title
        result: Json = self._call("POST", "/api/agents", body)
        return result

    def agents(self, workspace_id: str) -> list[Json]:
        result: list[Json] = self._call("GET", "/api/agents", params={"workspace_id": workspace_id})["agents"]
        return result

    def agent(self, agent: str) -> Json:
        result: Json = self._call("GET", self._base(agent, None))
        return result

    # -- writes --------------------------------------------------------------------------

    def put_message(self, agent: str, message: Json, *, call: str | None = None) -> Json:
        """Create or replace ``message`` (its ``id`` names it; one is made if it has none) in the
        agent or its subagent. Returns ``{"id", "seq", "created"}``."""
        if message.get("id") is None:
            message = {**message, "id": str(uuid.uuid4())}
        path = f"{self._base(agent, call)}/messages/{quote(str(message['id']), safe='')}"
        result: Json = self._call("PUT", path, message)
        return result

    def end_turn(self, agent: str, *, call: str | None = None) -> Json:
        result: Json = self._call("POST", f"{self._base(agent, call)}/turn-end")
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
    ) -> Json:
        """One page: ``{"messages", "next", "seq"}``. Without ``limit``, the whole transcript."""
        params: dict[str, Any] = {}
        if cut:
            params["parts"] = "cut"
        if limit is not None:
            params["limit"] = limit
        if before is not None:
            params["before"] = before
        result: Json = self._call("GET", f"{self._base(agent, call)}/messages", params=params)
        return result

    def iter_messages(
        self, agent: str, *, call: str | None = None, cut: bool = False, page_size: int = 100
    ) -> Iterator[Json]:
        """Every message, newest first, read ``page_size`` at a time (stop early to read less)."""
        before = None
        while True:
            page = self.messages(agent, call=call, cut=cut, limit=page_size, before=before)
            yield from reversed(page["messages"])
            before = page["next"]
            if before is None:
                return

    def agent_part(self, agent: str, message: str, index: int) -> Json:
        result: Json = self._call("GET", f"{self._base(agent, None)}/messages/{quote(message, safe='')}/parts/{index}")
        return result

    def subagent_part(self, agent: str, call: str, message: str, index: int) -> Json:
        result: Json = self._call("GET", f"{self._base(agent, call)}/messages/{quote(message, safe='')}/parts/{index}")
        return result

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
    ) -> Json:
        """Code points ``[start, end)`` of one field (``text``, ``output``, ``errorText``,
        ``input``) of one part, of the agent or its subagent ``call``: ``{"field", "start",
        "end", "length", "text"}``; ``end`` defaults to (and is clamped to) the field's length."""
        params: dict[str, Any] = {"field": field, "start": start}
        if end is not None:
            params["end"] = end
        path = f"{self._base(agent, call)}/messages/{quote(message, safe='')}/parts/{index}"
        result: Json = self._call("GET", path, params=params)
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
    ) -> Json:
        """Hits for ``q`` in every transcript the caller may read (narrowed to a workspace, or
        an agent with its subagents), newest first: ``{"hits", "next"}``; pass ``next`` back as
        ``cursor`` for the following page."""
        params: dict[str, Any] = {"q": q}
        for name, value in (("workspace_id", workspace_id), ("agent", agent), ("limit", limit), ("cursor", cursor)):
            if value is not None:
                params[name] = value
        result: Json = self._call("GET", "/api/search", params=params)
        return result
