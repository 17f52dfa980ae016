"""A UI message stream taken in as it arrives (``POST …/stream``): the body read event by event,
each chunk applied to the :class:`~foldline.uistream.Assembly`, and the message's states written
through the write door (:meth:`Transcripts.put_message`), coalesced.

A delta does not make a write: the state waits at most :data:`WINDOW` seconds (so at most a few
writes a second per message, whatever the model's pace), while the end of a part (a text's or a
thought's end, a tool call's new state, a source, file or data part) and the stream's end are
written at once. A follower of the conversation sees each write as it commits, so text and tool
outputs grow in the panel, and a part that grows past the bound is cut again by each write.

A stream that ends without ``finish`` (the app crashed, the client dropped) keeps what arrived,
with its open tool calls given the unknown outcome, as the turn-end gives it. A chunk that is not
JSON, not a chunk, or does not fit the message so far is a 400 naming it (``chunks[12].id``); the
stored message is then what came before it, ended the same way.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from typing import Any

import orjson
from starlette.requests import ClientDisconnect, Request

from .errors import FoldlineError, PayloadTooLarge
from .message import canonical, close_open_tools
from .pool import in_pool
from .service import Transcripts
from .uistream import DONE, Assembly, Events, Urgency, decode_chunk

WINDOW = 0.25  # seconds a delta's state may wait for the next write
# A stream's whole body may be this many times the body limit: each chunk wraps a few characters
# of a delta in its JSON (a 4-character delta is a 60-byte event), and a tool's raw input streams
# beside the input. One chunk and the message are each held to the body limit itself.
STREAM_BODIES = 16
# The AI SDK's own message ids are not UUIDs (its generateId makes 16 letters and digits): such an
# id names the Foldline message uuid5(SDK_IDS, id), the same for every stream that names it.
SDK_IDS = uuid.UUID("3f0e8a52-6c1d-5b8e-9a47-0d2c61f4b7e9")
Json = dict[str, Any]


def message_id(sdk_id: str) -> str:
    """The Foldline id of the stream's message: its own id if that is a UUID, else derived from it."""
    return canonical(sdk_id) or str(uuid.uuid5(SDK_IDS, sdk_id))


class Intake:
    """One stream's message: its assembly, and its writes through the service, coalesced."""

    def __init__(self, request: Request, t: Transcripts, account: str, agent: str, call: str | None) -> None:
        self.request, self.t, self.account, self.agent, self.call = request, t, account, agent, call
        self.assembly = Assembly()
        self.id = str(uuid.uuid4())  # until a `start` names the message
        self.named: str | None = None  # the id the stream gave, as it gave it
        self.limit = t.settings.max_body
        self.lock = asyncio.Lock()
        self.dirty = False
        self.last_write = 0.0
        self.timer: asyncio.Task[None] | None = None
        self.failure: BaseException | None = None
        self.writes = 0
        self.seq: int | None = None

    async def begin(self, sdk_id: str) -> None:
        """A ``start`` that names a message: go on from it if stored (an assistant message), as the
        SDK goes on from a chat's last message; a message already under way here is ended first."""
        if self.named is not None:
            await self.end(finished=self.assembly.finished)
        self.named, self.id = sdk_id, message_id(sdk_id)
        stored = await in_pool(self.request, self.t.streamed_from, self.account, self.agent, self.id, self.call)
        if stored is not None:
            stored["id"] = sdk_id
        self.assembly.restart(sdk_id, stored)

    async def offer(self, urgency: Urgency) -> None:
        """The state changed: write it now, or within the window."""
        if self.failure is not None:
            raise self.failure
        if urgency is Urgency.NONE:
            return
        self.dirty = True
        wait = self.last_write + WINDOW - time.monotonic()
        if urgency is Urgency.NOW or wait <= 0:
            await self.write()
        elif self.timer is None:
            self.timer = asyncio.create_task(self.later(wait))

    async def later(self, wait: float) -> None:
        await asyncio.sleep(wait)
        self.timer = None
        try:
            await self.write()
        except Exception as failed:  # said by the next offer, or at the end
            self.failure = failed

    async def write(self, message: Json | None = None) -> None:
        async with self.lock:
            if message is None:
                if not self.dirty:
                    return
                message = self.assembly.snapshot()
            self.dirty = False
            message["id"] = self.id
            if len(orjson.dumps(message)) > self.limit:
                raise PayloadTooLarge(f"the message is over the limit of {self.limit} bytes", where="message")
            written = await in_pool(
                self.request, self.t.put_message, self.account, self.agent, self.id, message, self.call
            )
            self.writes += 1
            self.seq = written["seq"]
            self.last_write = time.monotonic()

    async def end(self, finished: bool) -> list[int]:
        """The stream's end (or the message's, when a new one starts): the last state written,
        its open tool calls given the unknown outcome unless the stream finished."""
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        message = self.assembly.snapshot()
        ended = [] if finished else close_open_tools(message["parts"])
        await self.write(message)
        return ended


async def take(request: Request, t: Transcripts, account: str, agent: str, call: str | None) -> Json:
    """Read the request's UI message stream to its end, writing the message as it grows; the answer
    says which message, how it ended and how many writes it took."""
    await in_pool(request, t.check_stream, account, agent, call)
    intake = Intake(request, t, account, agent, call)
    events = Events(intake.limit)
    done = False
    try:
        async for raw in request.stream():
            for data in events.feed(raw):
                if data == DONE:
                    done = True
                    continue
                where = f"chunks[{events.count - 1}]"
                chunk = decode_chunk(data, events.count - 1)
                named = chunk.get("messageId") if chunk["type"] == "start" else None
                if isinstance(named, str) and named != intake.named:
                    await intake.begin(named)
                await intake.offer(intake.assembly.apply(chunk, where))
    except ClientDisconnect:
        pass  # the app went away: what arrived is kept, ended below
    except FoldlineError:
        if events.count > 1 or intake.writes:
            # What came before the bad chunk, ended as a dropped stream's (if the door takes it:
            # else the last write it took stands).
            with contextlib.suppress(FoldlineError):
                await intake.end(finished=False)
        raise
    if events.count == 0:
        return {"id": None, "messageId": None, "seq": None, "finished": False, "done": done, "ended": [], "writes": 0}
    finished = intake.assembly.finished
    ended = await intake.end(finished)
    return {
        "id": intake.id, "messageId": intake.named, "seq": intake.seq, "finished": finished, "done": done,
        "ended": ended, "writes": intake.writes,
    }  # fmt: skip
