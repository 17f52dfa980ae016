"""Sessions parsed ahead, in worker processes: while the importing process writes one session,
others parse the next ones and make their messages ready for the write door
(:class:`~foldline.service.door.Door`: checked, redacted, cut, chunked, priced).

Parsing and making ready are most of an import's work and need no store, so an import of many
sessions runs about as many times faster as there are cores, up to ``FOLDLINE_IMPORT_WORKERS``.
The writes stay in the importing process, in the order they always had, so what is stored is the
same as a one-process import stores (the golden comparisons in the tests hold it).

The workers are forked once, before the store is opened or any thread started, so they inherit
neither; each builds its own :class:`~foldline.service.door.Door` from the same settings. A
session is parsed ahead under the key the import expects to write it under; the importer uses the
result only if the key is still the one (:meth:`Ahead.take`), else it parses again itself.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import uuid
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import FoldlineError
from ..registry import Registry
from ..service.core import canonical_uuid
from ..service.door import Door
from ..settings import Settings
from ..store import MessageWrite
from ..usage import load_prices
from .detect import log_files
from .formats import Group, by_name
from .jsonl import LongLine, bounded
from .session import Session
from .writer import marked

WINDOW = 2  # sessions parsed ahead per worker at most (their messages are held in memory)
NICE = 10  # how much a worker yields to the importing process (whose writes, one at a time, are the pace)
SMALL = 4 * 2**20  # bytes of logs: a smaller import is done in one process (forking costs more)

_door: Door | None = None  # a worker's own, made by _start
_nice_later = False  # a worker's own: it is the first, and yields once its first session is parsed
log = logging.getLogger("foldline")


@dataclass
class Ready:
    """A session parsed ahead: the session, its messages' writes by conversation (call, "" for the
    main one) and message id, the
    long lines its files had; or why it could not be parsed."""

    session: Session | None
    writes: dict[str, dict[str, MessageWrite]] = field(default_factory=dict)
    long: list[LongLine] = field(default_factory=list)
    marks: dict[str, dict[str, tuple[str, int]]] = field(default_factory=dict)
    failure: str | None = None


def parse_session(group: Group, registry: Registry, namespace: uuid.UUID) -> Session:
    """One session parsed by its format, what its log left undated dated by its file (``Session.date_untimed``)."""
    session = by_name(group.format).parse(group, registry, namespace)
    session.date_untimed()
    return session


def failure(exc: BaseException) -> str:
    """Why a session was passed over, as the import's summary says it."""
    if isinstance(exc, OSError):
        return f"cannot be read: {exc.strerror or exc}"
    return f"cannot be parsed: {type(exc).__name__}: {exc}"


def _start(settings: Settings, first: Any) -> None:
    """A worker's start: its door, and the price table loaded while the importing process
    opens the store and plans the first sessions (not at the first session's first message).

    Workers yield to the importing process (``NICE``), whose writes set the pace once they
    begin; but at the start a parsed session is what it waits for, so the first worker to
    start keeps its priority until it has parsed one (``first``: a flag they share)."""
    global _door, _nice_later
    with first.get_lock():
        _nice_later, first.value = bool(first.value), 0
    if not _nice_later:
        os.nice(NICE)
    _door = Door.of(settings)
    load_prices()


def _ready(group: Group, namespace: uuid.UUID) -> Ready:
    """In a worker: the session parsed and each of its messages made ready (a message the door
    refuses is left out: the importing process checks it again and reports the refusal)."""
    try:
        return _made_ready(group, namespace)
    finally:
        _yield_now()


def _made_ready(group: Group, namespace: uuid.UUID) -> Ready:
    assert _door is not None
    with bounded(_door.settings.import_max_line) as bound:
        try:
            session = parse_session(group, _door.registry, namespace)
        except Exception as exc:  # a shape no importer foresaw: reported as the importer reports it
            return Ready(None, failure=failure(exc), long=list(bound.long.values()))
    writes: dict[str, dict[str, MessageWrite]] = {}
    marks: dict[str, dict[str, tuple[str, int]]] = {}
    for call, conv in (("", session.main), *session.subagents.items()):
        marks[call] = {message["id"]: marked(message) for message in conv.messages}
        for message in conv.messages:
            try:
                made = _door.ready(message, canonical_uuid(message["id"]))
                writes.setdefault(call, {})[message["id"]] = made
            except FoldlineError:
                pass
    return Ready(session, writes, list(bound.long.values()), marks=marks)


def _yield_now() -> None:
    """The first worker, its first session parsed: from now on it yields to the importer too."""
    global _nice_later
    if _nice_later:
        os.nice(NICE)
        _nice_later = False


class Ahead:
    """A pool of forked workers parsing sessions ahead of the writes."""

    def __init__(self, settings: Settings, workers: int) -> None:
        context = multiprocessing.get_context("fork")
        first = context.Value("b", 1)  # the first worker to start takes it (_start)
        self._pool = ProcessPoolExecutor(
            workers, mp_context=context, initializer=_start, initargs=(settings, first)
        )
        self.window = WINDOW * workers
        self._asked: dict[int, tuple[uuid.UUID, Future[Ready], object]] = {}
        # Fork every worker now, while this process has one thread and no store open: with
        # "fork", the pool forks them all at its first task, before its own thread starts. It
        # is not waited for: they load the price table while the store is opened.
        self._pool.submit(os.getpid)

        self.broken = False  # a worker died (or an answer could not be sent): the importer parses itself

    def ask(self, group: Group, namespace: uuid.UUID, plan: object = None) -> None:
        """Start parsing ``group`` under ``namespace`` (its agent's id); ``plan``, the importer's
        plan it was asked under, is kept for :meth:`plan_of`."""
        if self.broken:
            return
        try:
            self._asked[id(group)] = (namespace, self._pool.submit(_ready, group, namespace), plan)
        except BrokenProcessPool:
            self._broke()

    def plan_of(self, group: Group) -> object:
        """The plan ``group`` was asked for under (None if it was not)."""
        asked = self._asked.get(id(group))
        return asked[2] if asked is not None else None

    def asked(self, group: Group) -> bool:
        """Whether ``group`` is being parsed (or was, and is not taken yet)."""
        return id(group) in self._asked

    @property
    def in_flight(self) -> int:
        return len(self._asked)

    def take(self, group: Group, namespace: uuid.UUID) -> Ready | None:
        """What was parsed ahead for ``group``, if it was parsed under ``namespace``."""
        asked = self._asked.pop(id(group), None)
        if asked is None:
            return None
        if asked[0] != namespace:
            asked[1].cancel()
            return None
        try:
            return asked[1].result()
        except Exception:  # not the session's doing (_ready reports those): a worker is gone
            self._broke()
            return None

    def _broke(self) -> None:
        if not self.broken:
            log.warning("foldline import: a worker process failed; the rest is parsed in this process")
        self.broken = True
        self._asked.clear()

    def drop(self, group: Group) -> None:
        """Forget what was asked for ``group`` (it is not wanted any more)."""
        asked = self._asked.pop(id(group), None)
        if asked is not None:
            asked[1].cancel()

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


def workers(settings: Settings) -> int:
    """How many workers an import gets: ``FOLDLINE_IMPORT_WORKERS``, at most one per core; none
    on one core (the importing process would only wait for its one worker)."""
    cores = os.cpu_count() or 1
    return min(settings.import_workers, cores) if cores > 1 else 0


def logs_size(paths: Iterable[str | Path]) -> int:
    """The bytes of the files an import of ``paths`` may read (up to :data:`SMALL`: enough to decide)."""
    total = 0
    for path in log_files(paths):
        try:
            total += path.stat().st_size
        except OSError:
            continue
        if total >= SMALL:
            break
    return total


@contextmanager
def ahead(settings: Settings, paths: Iterable[str | Path]) -> Iterator[Ahead | None]:
    """An :class:`Ahead` of :func:`workers` workers for an import of ``paths`` (None for none, or
    for logs of less than :data:`SMALL` bytes). Made before the store is opened: the workers are
    forked at once."""
    count = workers(settings)
    if count < 1 or logs_size(paths) < SMALL:
        yield None
        return
    pool = Ahead(settings, count)
    try:
        yield pool
    finally:
        pool.close()
