"""How ``foldline serve`` runs the app under uvicorn: slow clients timed out, connections capped,
no secret in a log line, and repeated log lines held back.

uvicorn (0.54) times out an idle keep-alive connection but not a client that sends its headers
or its body slowly, so :class:`GuardedH11` adds two deadlines to uvicorn's h11 protocol: a
request's headers must arrive within ``header_timeout`` seconds of the connection (or of its
first byte after a keep-alive pause), and its body within ``body_timeout`` seconds of the
headers. A third, ``send_timeout``, drops a client that stops reading: it runs while a
response waits for the client to take what was sent (the transport's buffer full), and starts
again each time the client takes some. A response that streams for long (the event stream) is
not affected: the deadlines only run while Foldline waits on the client. A request whose body is
a stream by nature (the AI SDK's UI message stream, ``POST …/stream``) has an idle deadline
instead of the body's: each byte received gives it ``stream_idle_timeout`` seconds more (an
app's keep-alive comments count).
"""

from __future__ import annotations

import asyncio
import ctypes
import errno
import logging
import platform
import re
import resource
import socket
import sys
import time
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from .errors import Unusable
from .settings import Settings

log = logging.getLogger("foldline")
SECRET_QUERY = re.compile(r"(?i)((?:^|[?&])(?:token|access_token)=)[^&\s\"]*")
# A share link's token is in its path: the panel's /s/{token} and the API's /api/shared/{token}/….
SHARE_PATH = re.compile(r"(?:^|(?<=[\s\"']))(/s/|/api/shared/)[^/?#\s\"]+")
# What a search looks for is in its query string (q=…): a search's address is logged without it.
SEARCH_QUERY = re.compile(r"((?:^|(?<=[\s\"']))/api/(?:shared/[^/?#\s\"]+/)?search)\?[^\s\"]*")


class GuardedH11(H11Protocol):
    """uvicorn's h11 protocol with a deadline on each request's headers and on its body, and
    one on a client that stops taking a response."""

    header_timeout = 10.0
    body_timeout = 60.0
    send_timeout = 30.0
    stream_idle_timeout = 300.0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self._deadline: asyncio.TimerHandle | None = None
        self._send_deadline: asyncio.TimerHandle | None = None
        self._waiting: object = None
        super().connection_made(transport)
        self._arm(h11.IDLE)

    def pause_writing(self) -> None:
        super().pause_writing()
        if self._send_deadline is None:
            self._send_deadline = self.loop.call_later(self.send_timeout, self._not_reading)

    def resume_writing(self) -> None:
        self._stop_send_deadline()
        super().resume_writing()

    def _stop_send_deadline(self) -> None:
        if self._send_deadline is not None:
            self._send_deadline.cancel()
            self._send_deadline = None

    def _not_reading(self) -> None:
        """The client took nothing of the response for ``send_timeout`` seconds: drop it (abort:
        a close would wait for it to take what is buffered). The response's sending ends as on a
        client gone, and lets go of what it holds."""
        self._send_deadline = None
        if not self.transport.is_closing():
            log.info("dropped a client that stopped reading its response")
        self.transport.abort()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._arm(self.conn.their_state)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        self._stop_send_deadline()
        super().connection_lost(exc)

    def _arm(self, state: object) -> None:
        """Keep one deadline for what the client still owes: headers (IDLE) or a body (SEND_BODY)."""
        if state not in (h11.IDLE, h11.SEND_BODY):
            self._disarm()
            return
        streamed = state is h11.SEND_BODY and self._streamed_body()
        if state is self._waiting and self._deadline is not None and not streamed:
            return
        self._disarm()
        seconds = self.header_timeout if state is h11.IDLE else self.body_timeout
        seconds = self.stream_idle_timeout if streamed else seconds
        self._waiting = state
        self._deadline = self.loop.call_later(seconds, self._too_slow)

    def _streamed_body(self) -> bool:
        """The request being read sends a UI message stream (``POST /api/agents/…/stream``)."""
        scope = getattr(self, "scope", None)
        path = scope.get("path", "") if isinstance(scope, dict) else ""
        return scope is not None and scope.get("method") == "POST" and path.endswith("/stream")

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
        self._deadline, self._waiting = None, None

    def _too_slow(self) -> None:
        self._deadline = None
        if self.conn.their_state in (h11.IDLE, h11.SEND_BODY) and not self.transport.is_closing():
            what = "headers" if self.conn.their_state is h11.IDLE else "body"
            log.info("closed a connection whose request %s came too slowly", what)
            self.transport.close()


def guarded(settings: Settings) -> type[GuardedH11]:
    """The protocol class with ``settings``' deadlines."""
    return type(
        "FoldlineH11",
        (GuardedH11,),
        {
            "header_timeout": settings.header_timeout,
            "body_timeout": settings.body_timeout,
            "send_timeout": settings.send_timeout,
        },
    )


class RedactSecrets(logging.Filter):
    """Keep secrets out of a logged address: a token (``?token=…``) and a share link's token
    (``/s/…``, ``/api/shared/…``) become ``[redacted]``, and a search's query string (what it
    looked for) is left out, its path kept."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple) and record.args:
            record.args = tuple(redact(a) if isinstance(a, str) else a for a in record.args)
        elif isinstance(record.msg, str):
            record.msg = redact(record.msg)
        return True


def redact(text: str) -> str:
    text = SHARE_PATH.sub(r"\1[redacted]", SECRET_QUERY.sub(r"\1[redacted]", text))
    return SEARCH_QUERY.sub(r"\1?[redacted]", text)


class HoldRepeats(logging.Filter):
    """Let the same message template through at most ``burst`` times per ``window`` seconds;
    the next line after a window says how many were held back."""

    def __init__(self, burst: int = 20, window: float = 10.0) -> None:
        super().__init__()
        self.burst, self.window = burst, window
        self.seen: dict[tuple[str, str], list[float]] = {}  # key -> [window start, count]

    def filter(self, record: logging.LogRecord) -> bool:
        key = (record.name, str(record.msg))
        now = time.monotonic()
        start, count = self.seen.get(key, (now, 0))
        if now - start >= self.window:
            held = count - self.burst
            if held > 0:
                record.msg = f"{record.msg} (and {held} more like it held back)"
            start, count = now, 0
        self.seen[key] = [start, count + 1]
        if len(self.seen) > 10_000:  # a flood of distinct messages must not grow this for ever
            self.seen.clear()
        return count < self.burst


def install_log_filters() -> None:
    """Redact secrets and hold back repeats on every handler that Foldline and uvicorn log to."""
    for name in ("", "foldline", "uvicorn", "uvicorn.error", "uvicorn.access"):
        for handler in logging.getLogger(name).handlers:
            if not any(isinstance(f, RedactSecrets) for f in handler.filters):
                handler.addFilter(RedactSecrets())
                handler.addFilter(HoldRepeats())


def raise_open_file_limit(wanted: int) -> int:
    """Raise this process's open-file limit toward ``wanted`` (within the hard limit); the limit now."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):
            pass
    return int(soft)


# glibc's malloc: free heap memory past 128 KB is given back to the system at once, and a block
# past 128 KB is mapped afresh, so each page read (a few hundred KB to a few MB of bytes) paid
# page faults for its own memory: a 1 MB page was put together in 1.4 ms instead of 0.33 ms.
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
KEEP_FREED, MAP_PAST = 32 << 20, 4 << 20


def keep_freed_memory() -> None:
    """Let glibc keep up to ``KEEP_FREED`` bytes of freed memory for the next requests, and map
    only blocks past ``MAP_PAST`` (elsewhere: nothing to do)."""
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return
    libc.mallopt(M_MMAP_THRESHOLD, MAP_PAST)
    libc.mallopt(M_TRIM_THRESHOLD, KEEP_FREED)


# CPython makes a thread that holds the interpreter lock hand it over after 5 ms when another
# asks for it. A server's event loop asks for it again after each wait on a socket, so each of
# its steps waited up to 5 ms behind a thread building a big page or running a search, and a
# small request (a cut page, /api/me) takes several steps. Handed over every 1 ms, the others'
# p99 under one member's attacks fell in six of eight medians (/api/me under the pathological
# search on SQLite 420 -> 205 ms) while their p50 rose (12 -> 25 ms): more hand-overs for every
# request, fewer long waits (bench/abuse.py, docs/benchmarks.md; the goal is the p99).
SWITCH_SECONDS = 0.001


def hand_over_often() -> None:
    """Let the interpreter lock change hands every :data:`SWITCH_SECONDS` (the process serves)."""
    sys.setswitchinterval(SWITCH_SECONDS)


def __getattr__(name: str) -> Any:
    """``WorkerH11``: the protocol of worker processes (``--workers``), which read their settings
    from the environment; made when a worker asks for it, so a bad setting is said by the command
    (not raised while ``foldline`` imports this module)."""
    if name == "WorkerH11":
        return guarded(Settings())
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def config(app: Any, settings: Settings, host: str, port: int, **extra: Any) -> uvicorn.Config:
    """The uvicorn configuration ``foldline serve`` runs (and the tests run the same). ``app`` is
    the app, or with ``workers=N`` an app factory's import string (each worker makes its own)."""
    files = raise_open_file_limit(settings.max_connections + 256)
    connections = min(settings.max_connections, max(files - 64, 16))
    workers = extra.get("workers") or 1
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        http=guarded(settings) if workers == 1 else "foldline.server:WorkerH11",
        timeout_keep_alive=int(settings.keep_alive),
        limit_concurrency=connections,
        h11_max_incomplete_event_size=64 * 1024,
        **extra,
    )


class Server(uvicorn.Server):
    """uvicorn's server, with Foldline's log filters installed once its logging is set up."""

    async def startup(self, sockets: Any = None) -> None:
        install_log_filters()
        keep_freed_memory()
        hand_over_often()
        await super().startup(sockets)


def check_address(host: str, port: int) -> None:
    """Bind ``host:port`` for a moment, as uvicorn will: an address that cannot be served is
    :class:`Unusable`, said before anything is printed or imported."""
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise Unusable(f"cannot serve on {host}: not a known host ({exc.strerror})", USE_HOST) from None
    family, kind, proto, _, address = found[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
        try:
            probe.bind(address)
        except OSError as exc:
            where = f"{host}:{port}"
            if exc.errno == errno.EADDRINUSE:
                raise Unusable(f"{where} is already in use by another program", PICK_PORT) from None
            if exc.errno == errno.EADDRNOTAVAIL:
                raise Unusable(f"cannot serve on {where}: {host} is not an address of this machine", USE_HOST) from None
            if exc.errno == errno.EACCES:
                raise Unusable(f"cannot serve on {where}: ports below 1024 need privileges", PICK_PORT) from None
            raise Unusable(f"cannot serve on {where}: {exc.strerror}", PICK_PORT) from None


PICK_PORT = "stop the program using it, or choose another port (--port)"
USE_HOST = "use 127.0.0.1 (this machine only) or 0.0.0.0 (every network interface)"


def run(app: Any, settings: Settings, host: str, port: int, workers: int = 1, **extra: Any) -> None:
    """Serve until stopped: in this process, or with ``workers > 1`` in that many processes
    sharing one socket (``app`` is then an app factory's import string)."""
    if workers == 1:
        Server(config(app, settings, host, port, **extra)).run()
        return
    from uvicorn.supervisors import Multiprocess

    cfg = config(app, settings, host, port, factory=True, workers=workers, **extra)
    Multiprocess(cfg, sockets=[cfg.bind_socket()]).run()  # each worker's app installs the log filters
