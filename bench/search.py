"""Benchmark: search and slices over a growing store, on SQLite and PostgreSQL side by side.

    .venv/bin/python bench/search.py                     # 1 GB per backend; rewrites docs/benchmarks.md
    .venv/bin/python bench/search.py --size 100MB        # a quick run (steps of 1, 10 and 100 MB)
    .venv/bin/python bench/search.py --backends sqlite --no-write

The corpus is recombined from the real session logs in ``tests/data/transcripts``: their user
prompts, assistant texts, thoughts, tool inputs and tool outputs are pooled, then drawn at random
(seeded) into agents of user and assistant messages, with some outputs lengthened by drawing
more real output lines, plus four outputs of ``size / 20`` (50 MB at 1 GB), one of ``size / 10``
(100 MB) and one of 1 MB. It is written once as JSONL (one file per agent, one message a line:
the grep anchor reads these), then, on each backend, through the write door in-process
(``Transcripts.put_message``, so the chunks and the engine's index are written as in
production), in three steps: ``size / 100``, ``size / 10`` and ``size`` stored (10 MB, 100 MB,
1 GB), where "stored" is the JSON of the messages sent to the write door.

After each step the queries are timed over HTTP against a real uvicorn running as a separate
process: a rare word (a random hex token planted in five messages of the first step: a prompt,
a text, a thought, a tool input and a tool output), a common word (first page), two words and a
quoted phrase; at the last step also the token planted in the middle of a 50 MB output. Every
answer is checked (the rare words' hits and offsets exactly). ``grep -c`` over the JSONL of the
same step is the anchor. Then: the index's size against the text it indexes; write-door
throughput on a fresh store with the index as it is, with the engine's index off, and with no
searchable text at all; a 64 KB slice of the 1 MB part against the same of the biggest part; and
the server's peak memory (VmHWM, a fresh server process) while it sends the biggest part whole.

PostgreSQL is a fresh database made at ``FOLDLINE_BENCH_PG`` (default the local server; bench/databases.py) and
dropped after; SQLite a file in a temp directory, removed after. Servers listen on 127.0.0.1.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import random
import re
import secrets
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import orjson
from databases import postgres_url, sqlite_url
from sqlalchemy import text

from foldline.errors import Invalid
from foldline.indexer import Indexer
from foldline.message import check_message
from foldline.registry import Registry
from foldline.search.fields import searchable
from foldline.service import Transcripts
from foldline.service.door import Door
from foldline.settings import Settings
from foldline.store import Store, StoredPart, open_store

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "transcripts"
DOC = ROOT / "docs" / "benchmarks.md"
SEED = 20261130
RUNS = 40  # timed runs of each query at each step (fewer when one run is slow: see BUDGET)
BUDGET = 30.0  # seconds of timed runs per query and step at most (at least MIN_RUNS)
MIN_RUNS = 3
SLICE = 65_536  # code points in the slice
SLICE_RUNS = 50
COMMON, AND, PHRASE = "error", "import function", '"let me check"'

Json = dict[str, Any]


# -- the corpus ----------------------------------------------------------------------------


@dataclass
class Pools:
    """The real text of the test transcripts, by kind."""

    prompts: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    thoughts: list[str] = field(default_factory=list)
    tools: list[Json] = field(default_factory=list)  # tool parts, each valid on its own
    lines: list[str] = field(default_factory=list)  # lines of tool outputs, to lengthen outputs


def joined(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(joined(c.get("text", c.get("content", ""))) for c in content if isinstance(c, dict))
    return ""


def tool_part(name: str, call: str, args: Any, output: str, registry: Registry) -> Json:
    """A finished tool part, as ``tool-NAME`` when the registry takes it, else a dynamic tool."""
    args = args if isinstance(args, dict) else {"arguments": args}
    part = {"type": f"tool-{name}", "toolCallId": call, "state": "output-available", "input": args, "output": output}
    try:
        check_message({"role": "assistant", "parts": [part]}, registry, str(uuid.uuid4()))
    except Invalid:
        part = {**part, "type": "dynamic-tool", "toolName": name}
    return part


def read_pools(registry: Registry) -> Pools:
    pools = Pools()
    calls: dict[str, tuple[str, Any]] = {}
    outputs: dict[str, str] = {}
    for path in sorted(DATA.rglob("*.jsonl")):
        for line in path.read_bytes().splitlines():
            try:
                entry = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue
            if not isinstance(entry, dict):
                continue
            message, payload = entry.get("message"), entry.get("payload")
            if isinstance(message, dict):  # Claude Code
                role, content = message.get("role"), message.get("content")
                if isinstance(content, str):
                    (pools.prompts if role == "user" else pools.texts).append(content)
                    continue
                for block in content if isinstance(content, list) else []:
                    kind = block.get("type") if isinstance(block, dict) else None
                    if kind == "text":
                        (pools.prompts if role == "user" else pools.texts).append(block.get("text") or "")
                    elif kind == "thinking":
                        pools.thoughts.append(block.get("thinking") or "")
                    elif kind == "tool_use":
                        calls[block.get("id", "")] = (block.get("name", "tool"), block.get("input", {}))
                    elif kind == "tool_result":
                        outputs[block.get("tool_use_id", "")] = joined(block.get("content"))
            elif isinstance(payload, dict):  # Codex
                kind = payload.get("type")
                if kind == "message":
                    body = joined(payload.get("content"))
                    (pools.prompts if payload.get("role") == "user" else pools.texts).append(body)
                elif kind == "reasoning":
                    pools.thoughts.append(joined(payload.get("summary")))
                elif kind == "function_call":
                    try:
                        args = orjson.loads(payload.get("arguments") or "{}")
                    except orjson.JSONDecodeError:
                        args = {"arguments": payload.get("arguments")}
                    calls[payload.get("call_id", "")] = (payload.get("name", "tool"), args)
                elif kind == "function_call_output":
                    out = payload.get("output")
                    outputs[payload.get("call_id", "")] = out if isinstance(out, str) else orjson.dumps(out).decode()
    for call, (name, args) in calls.items():
        if call in outputs:
            pools.tools.append(tool_part(name, call, args, outputs[call], registry))
            pools.lines += [line for line in outputs[call].splitlines() if line.strip()]
    for pool in (pools.prompts, pools.texts, pools.thoughts):
        pool[:] = [t for t in pool if t.strip()]
    return pools


@dataclass
class Needle:
    token: str
    count: int  # occurrences planted (one per message)
    offset: int | None = None  # code-point offset in its field, for the one in a big output


@dataclass
class Big:
    """A known part: where it is, for slices and whole reads."""

    agent: int  # the agent's number in the corpus
    message_id: str
    length: int  # code points of its output


@dataclass
class Step:
    target: int
    files: list[Path] = field(default_factory=list)
    stored: int = 0  # bytes of message JSON up to the end of this step


@dataclass
class Corpus:
    steps: list[Step]
    rare: Needle
    middle: Needle
    bigs: dict[str, Big]
    titles: dict[int, str]


class Writer:
    """Draws the corpus and writes it as JSONL, one file per agent."""

    def __init__(self, root: Path, pools: Pools, size: int) -> None:
        self.root, self.pools, self.size = root, pools, size
        self.rng = random.Random(SEED)
        self.agent = -1
        self.file: Any = None
        self.stored = 0
        self.titles: dict[int, str] = {}
        self.calls = 0

    def uid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def new_agent(self, files: list[Path]) -> None:
        if self.file:
            self.file.close()
        self.agent += 1
        path = self.root / f"agent-{self.agent:05d}.jsonl"
        files.append(path)
        self.file = path.open("wb")
        self.left = self.rng.randint(20, 120)  # messages in this agent
        words = " ".join(self.rng.choice(self.pools.prompts).split()[:8])
        self.titles[self.agent] = "".join(c for c in words if c.isprintable())[:80] or "untitled"

    def write(self, message: Json) -> None:
        line = orjson.dumps(message) + b"\n"
        self.file.write(line)
        self.stored += len(line)
        self.left -= 1

    def lines(self, chars: int) -> str:
        out: list[str] = []
        n = 0
        while n < chars:
            line = self.rng.choice(self.pools.lines)
            out.append(line)
            n += len(line) + 1
        return "\n".join(out)

    def output_size(self) -> int:
        r = self.rng.random()
        if r < 0.6:
            return 0  # the real output as it is
        if r < 0.9:
            return self.rng.randint(5_000, 40_000)
        if r < 0.98:
            return self.rng.randint(100_000, 500_000)
        return self.rng.randint(800_000, 1_200_000)

    def tool(self) -> Json:
        part = dict(self.rng.choice(self.pools.tools))
        self.calls += 1
        part["toolCallId"] = f"call-{self.calls}"
        extra = self.output_size()
        if extra and isinstance(part["output"], str):
            part["output"] = part["output"] + "\n" + self.lines(extra)
        return part

    def bash(self, command: str, output: str) -> Json:
        self.calls += 1
        return {"type": "tool-Bash", "toolCallId": f"call-{self.calls}", "state": "output-available",
                "input": {"command": command}, "output": output}  # fmt: skip

    def user(self) -> Json:
        return {
            "id": self.uid(),
            "role": "user",
            "parts": [{"type": "text", "text": self.rng.choice(self.pools.prompts)}],
        }

    def assistant(self) -> Json:
        parts: list[Json] = []
        if self.rng.random() < 0.5:
            parts.append({"type": "reasoning", "text": self.rng.choice(self.pools.thoughts)})
        if self.rng.random() < 0.7:
            parts.append({"type": "text", "text": self.rng.choice(self.pools.texts)})
        parts += [self.tool() for _ in range(self.rng.choice((0, 1, 1, 1, 2, 2, 3)))]
        return {"id": self.uid(), "role": "assistant", "parts": parts or [{"type": "text", "text": "Done."}]}

    def regular(self, files: list[Path]) -> None:
        """One turn (a user message and an assistant message), in a new agent when one is full."""
        if self.file is None or self.left <= 0:
            self.new_agent(files)
        self.write(self.user())
        self.write(self.assistant())

    def planted(self, kind: str, token: str) -> Json:
        """A message holding ``token`` once, in a part of ``kind``."""
        if kind == "prompt":
            message = self.user()
            message["parts"][0]["text"] = plant(message["parts"][0]["text"], token, self.rng)
            return message
        message = self.assistant()
        if kind in ("text", "thought"):
            part = {"type": "text" if kind == "text" else "reasoning", "text": ""}
            source = self.pools.texts if kind == "text" else self.pools.thoughts
            part["text"] = plant(self.rng.choice(source), token, self.rng)
            message["parts"].insert(0, part)
        elif kind == "input":
            message["parts"].append(self.bash(f"grep -rn {token} src/", self.lines(2_000)))
        else:
            message["parts"].append(self.bash("cat build.log", plant(self.lines(8_000), token, self.rng)))
        return message


def plant(body: str, token: str, rng: random.Random) -> str:
    at = rng.randint(0, len(body))
    return f"{body[:at]} {token} {body[at:]}"


def giant(writer: Writer, files: list[Path], chars: int, needle: str | None) -> tuple[str, int, int | None]:
    """An agent of one user message and one assistant message whose bash output is ``chars``
    code points (with ``needle`` in its middle); its message id, its length, the needle's offset."""
    writer.new_agent(files)
    writer.write(writer.user())
    half = writer.lines(chars // 2)
    rest = writer.lines(chars - len(half) - 1)
    offset = None
    if needle is not None:
        offset = len(half) + 1
        output = f"{half} {needle} {rest}"
    else:
        output = f"{half}\n{rest}"
    message_id = writer.uid()
    writer.write({"id": message_id, "role": "assistant", "parts": [writer.bash("make -k all 2>&1", output)]})
    writer.left = 0
    return message_id, len(output), offset


def make_corpus(root: Path, pools: Pools, size: int, targets: list[int] | None = None, giants: bool = True) -> Corpus:
    """The corpus in steps of ``size / 100``, ``size / 10`` and ``size`` stored, or of ``targets``
    (the last ``size``); ``giants``: the big outputs in the last step (see the module's text)."""
    writer = Writer(root, pools, size)
    rare = Needle("fl" + secrets.token_hex(8), 5)
    middle = Needle("fl" + secrets.token_hex(8), 1)
    steps = [Step(t) for t in targets or (size // 100, size // 10, size)]
    bigs: dict[str, Big] = {}
    kinds = ["prompt", "text", "thought", "input", "output"]
    for n, step in enumerate(steps):
        if n == 0:  # the rare word: five messages spread over the first step
            marks = [step.target * (k + 1) // (len(kinds) + 1) for k in range(len(kinds))]
            for kind, mark in zip(kinds, marks, strict=True):
                while writer.stored < mark:
                    writer.regular(step.files)
                if writer.file is None or writer.left <= 0:
                    writer.new_agent(step.files)
                writer.write(writer.planted(kind, rare.token))
        if giants and n == len(steps) - 1:  # the big outputs, spread through the last step
            specs = [("50a", size // 20, middle.token), ("50b", size // 20, None), ("slice-1MB", 1_000_000, None),
                     ("50c", size // 20, None), ("slice-big", size // 10, None), ("50d", size // 20, None)]  # fmt: skip
            gap = (step.target - writer.stored - sum(s[1] for s in specs)) // (len(specs) + 1)
            for name, chars, needle in specs:
                mark = writer.stored + gap
                while writer.stored < mark:
                    writer.regular(step.files)
                message_id, length, offset = giant(writer, step.files, chars, needle)
                bigs[name] = Big(writer.agent, message_id, length)
                if needle is not None:
                    middle.offset = offset
        while writer.stored < step.target:
            writer.regular(step.files)
        writer.left = 0  # a step ends an agent, so each step's files are whole
        step.stored = writer.stored
    if writer.file:
        writer.file.close()
    return Corpus(steps, rare, middle, bigs, writer.titles)


def agent_number(path: Path) -> int:
    return int(path.stem.split("-")[1])


# -- the server, as a separate process -----------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class Server:
    """``bench/search.py --serve URL --port N`` in a child process; its pid for /proc."""

    def __init__(self, url: str) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--serve", url, "--port", str(self.port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_until_up(self.base, self.proc)

    def status(self, key: str) -> int:
        """A /proc/PID/status memory line in bytes (VmRSS, VmHWM)."""
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
        raise KeyError(key)

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def serve(url: str, port: int) -> None:
    import uvicorn

    from foldline.app import create_app

    transcripts = Transcripts(open_store(url), settings=Settings(db=url))
    uvicorn.run(create_app(transcripts), host="127.0.0.1", port=port, log_level="error")


# -- timing --------------------------------------------------------------------------------


def ms(call: Callable[[], object]) -> float:
    start = time.perf_counter()
    call()
    return (time.perf_counter() - start) * 1000


def p99(values: list[float]) -> float:
    """Nearest rank: with 40 runs, the slowest."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.99 * len(ordered)) - 1)]


def human(n: float) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n:.0f} B"


def parse_size(value: str) -> int:
    found = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMG]?B)?\s*", value.upper())
    if not found:
        raise argparse.ArgumentTypeError("a size such as 1GB, 100MB")
    scale = {"KB": 1e3, "MB": 1e6, "GB": 1e9, "B": 1, None: 1}[found.group(2)]
    return int(float(found.group(1)) * scale)


# -- what each backend measures ------------------------------------------------------------


@dataclass
class Query:
    name: str
    q: str
    check: Callable[[Json], str]  # what the answer says, after asserting it is right


def term_hits(page: Json, terms: list[str]) -> None:
    for h in page["hits"]:
        s = h["snippet"]
        found = s["text"][s["start"] : s["end"]].casefold()
        assert found in [t.casefold() for t in terms], (found, terms)


def queries(corpus: Corpus, last: bool) -> list[Query]:
    def rare(page: Json) -> str:
        hits = page["hits"]
        assert len(hits) == corpus.rare.count and page["next"] is None, f"rare word: {len(hits)} hits"
        term_hits(page, [corpus.rare.token])
        fields = sorted(h["field"] for h in hits)
        assert fields == ["input", "output", "text", "text", "text"], fields
        return f"{len(hits)} hits (all)"

    def middle(page: Json) -> str:
        hits = page["hits"]
        assert len(hits) == 1 and page["next"] is None, f"middle: {len(hits)} hits"
        assert hits[0]["start"] == corpus.middle.offset and hits[0]["hidden"] is True, hits[0]
        return "1 hit (all), in the cut middle"

    def first_page(terms: list[str]) -> Callable[[Json], str]:
        def check(page: Json) -> str:
            assert page["hits"] or not last, f"no hit for {terms}"
            term_hits(page, terms)
            matches = sum(int(h.get("count", 1)) for h in page["hits"])
            return f"{len(page['hits'])} hits, {matches} matches" + (" (first page)" if page["next"] else " (all)")

        return check

    out = [
        Query("rare word", corpus.rare.token, rare),
        Query("common word", COMMON, first_page([COMMON])),
        Query("two words", AND, first_page(AND.split())),
        Query("phrase", PHRASE, first_page([PHRASE.strip('"')])),
    ]
    if last:
        out.append(Query("rare word in a 50 MB middle", corpus.middle.token, middle))
    return out


def time_queries(
    http: httpx.Client, workspace: str, qs: list[Query], runs: int = RUNS
) -> list[tuple[Query, str, list[float]]]:
    """Each query checked once, then timed in rounds (queries interleaved) until ``runs`` or BUDGET."""

    def get(q: str) -> Json:
        """The first page as the panel shows it: pages the server ended early for time
        (``partial``) are followed until it is full; the answer says how many requests it took."""
        params = {"q": q, "workspace_id": workspace}
        hits: list[Json] = []
        requests = 0
        while True:
            response = http.get("/api/search", params=params)
            response.raise_for_status()
            page = response.json()
            hits += page["hits"]
            requests += 1
            if not page["partial"] or page["next"] is None or len(hits) >= 20:
                return {"hits": hits, "next": page["next"], "requests": requests}
            params["cursor"] = page["next"]

    def answer(q: Query) -> str:
        page = get(q.q)
        said = q.check(page)
        return said if page["requests"] == 1 else f"{said}, {page['requests']} requests"

    answers = {q.name: answer(q) for q in qs}
    times: dict[str, list[float]] = {q.name: [] for q in qs}
    spent = dict.fromkeys(times, 0.0)
    for _ in range(runs):
        for q in qs:
            if len(times[q.name]) >= MIN_RUNS and spent[q.name] > BUDGET:
                continue
            start = time.perf_counter()
            get(q.q)
            took = (time.perf_counter() - start) * 1000
            times[q.name].append(took)
            spent[q.name] += took / 1000
    return [(q, answers[q.name], times[q.name]) for q in qs]


def sizes_of(store: Store, backend: str) -> Json:
    """Bytes: the chunk rows (table and key), the engine's index, the whole database."""
    with store.engine.connect() as conn:
        if backend == "SQLite":
            # Summed here: dbstat's own aggregate (aggregate = 1) wraps past 2 GB on older SQLite.
            query = text("SELECT name, sum(pgsize) FROM dbstat GROUP BY name")
            rows: dict[str, int] = {name: int(size) for name, size in conn.execute(query)}
            index = sum(v for k, v in rows.items() if k.startswith("part_text_fts"))
            chunks = rows.get("part_text", 0) + rows.get("part_text_by_part", 0)
            total = sum(rows.values())
        else:
            one = conn.execute(
                text(
                    "SELECT pg_table_size('part_text') + pg_relation_size('part_text_by_part'),"
                    " pg_relation_size('part_text_trgm'), pg_database_size(current_database())"
                )
            ).one()
            chunks, index, total = int(one[0]), int(one[1]), int(one[2])
    return {"chunks": chunks, "index": index, "total": total}


def searchable_bytes(message: Json) -> int:
    return sum(len(t.encode("utf-8", "replace")) for p in message["parts"] for _, t in searchable(p))


class UnindexedDoor(Door):
    def _stored_part(self, index: int, part: Json) -> StoredPart:
        return dataclasses.replace(super()._stored_part(index, part), texts=())


class Unindexed(Transcripts):
    """The write door with no searchable text: parts carry no ``texts``, so no chunk row and
    no index entry is written (the store as it was before search). For this benchmark only."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.door = UnindexedDoor(self.registry, self.settings)


def no_engine_index(store: Store, backend: str) -> None:
    """Chunks written, the engine's index not kept: SQLite's FTS5 rows are not added; the
    PostgreSQL GIN index is dropped. For this benchmark only."""
    if backend == "SQLite":

        def skip(*args: object) -> tuple[int, int]:
            return 0, 0  # (index_batch: nothing indexed, so the chunks stay pending)

        for hook in ("index_batch", "index_texts_after"):  # the store's hooks that add FTS5 rows
            setattr(store, hook, skip)
    else:
        with store.engine.begin() as conn:
            conn.exec_driver_sql("DROP INDEX part_text_trgm")



BACKENDS: dict[str, tuple[str, Callable[[], AbstractContextManager[str]]]] = {
    "sqlite": ("SQLite", sqlite_url),
    "postgres": ("PostgreSQL", postgres_url),
}


class Backend:
    """One backend's store, written in-process, and its server process."""

    def __init__(self, name: str, url: str, corpus: Corpus, state: Json) -> None:
        self.name, self.url, self.corpus = name, url, corpus
        self.state = state.setdefault("backends", {}).setdefault(name, {})
        self.store = open_store(url)
        self.transcripts = Transcripts(self.store, settings=Settings(db=url))
        owner = self.transcripts.create_account("bench")
        self.owner, self.token = owner["id"], owner["token"]
        self.workspace = self.transcripts.create_workspace("bench", [self.owner])["id"]
        self.agents: dict[int, str] = {}
        self.server = Server(url)
        self.http = httpx.Client(base_url=self.server.base, timeout=600, headers=self.auth)

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    def build(self, step: Step) -> float:
        """Write one step's agents through the write door and let the indexer catch up (the
        searches measure the index, not the backlog: see bench/index_backlog.py); the seconds it took."""
        start = time.perf_counter()
        for path in step.files:
            number = agent_number(path)
            agent = self.transcripts.create_agent(self.owner, self.workspace, self.corpus.titles[number])["id"]
            self.agents[number] = agent
            with path.open("rb") as f:
                for line in f:
                    message = orjson.loads(line)
                    self.transcripts.put_message(self.owner, agent, message["id"], message)
        Indexer(self.transcripts).catch_up()
        return time.perf_counter() - start

    def measure(self, n: int, log: Callable[[str], None]) -> None:
        step, last = self.corpus.steps[n], n == len(self.corpus.steps) - 1
        if self.name == "PostgreSQL":  # what autovacuum does on a live server, done now
            with self.store.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
                conn.exec_driver_sql("ANALYZE")
        rows = self.state.setdefault("latency", [])
        for q, answer, times in time_queries(self.http, self.workspace, queries(self.corpus, last)):
            row = {"step": n, "stored": step.stored, "query": q.name, "answer": answer, "runs": len(times),
                   "p50": statistics.median(times), "p99": p99(times)}  # fmt: skip
            rows.append(row)
            log(f"  {self.name} {q.name}: {answer}; p50 {row['p50']:.1f} ms, p99 {row['p99']:.1f} ms over {len(times)}")
        self.state.setdefault("sizes", []).append({"step": n, "stored": step.stored, **sizes_of(self.store, self.name)})
        log(f"  {self.name} sizes {self.state['sizes'][-1]}")

    def slices(self) -> Json:
        """A 64 KB slice from the middle of the 1 MB part and of the biggest, interleaved."""
        small, big = self.corpus.bigs["slice-1MB"], self.corpus.bigs["slice-big"]

        def get(b: Big) -> httpx.Response:
            start = b.length // 2
            params: dict[str, str | int] = {"field": "output", "start": start, "end": start + SLICE}
            response = self.http.get(self.part_path(b), params=params)
            response.raise_for_status()
            return response

        for b in (small, big):
            body = get(b).json()
            assert body["length"] == b.length and len(body["text"]) == SLICE, (body["length"], len(body["text"]))
        times: dict[str, list[float]] = {"small": [], "big": []}
        for _ in range(SLICE_RUNS):
            times["small"].append(ms(lambda: get(small)))
            times["big"].append(ms(lambda: get(big)))
        return {
            "small_length": small.length,
            "big_length": big.length,
            "small_p50": statistics.median(times["small"]),
            "big_p50": statistics.median(times["big"]),
            "small_p99": p99(times["small"]),
            "big_p99": p99(times["big"]),
            **self.whole_read(small, big, get(big).json()["text"]),
        }

    def part_path(self, b: Big) -> str:
        return f"/api/agents/{self.agents[b.agent]}/messages/{b.message_id}/parts/0"

    def whole_read(self, small: Big, big: Big, expect: str) -> Json:
        """The biggest part read whole from a fresh server process (warmed by reading the 1 MB
        part whole): the time, and the server's resident memory before and at its peak."""
        server = Server(self.url)
        try:
            with httpx.Client(base_url=server.base, timeout=600, headers=self.auth) as http:
                http.get(self.part_path(small)).raise_for_status()
                idle = server.status("VmRSS")
                start = time.perf_counter()
                response = http.get(self.part_path(big))
                took = (time.perf_counter() - start) * 1000
                response.raise_for_status()
                peak = server.status("VmHWM")
                output = response.json()["output"]
                middle = big.length // 2
                assert len(output) == big.length and output[middle : middle + SLICE] == expect
                del output, response
        finally:
            server.close()
        return {"whole_ms": took, "idle_rss": idle, "peak_rss": peak}

    def close(self) -> None:
        self.http.close()
        self.server.close()
        self.store.close()


def write_batch(transcripts: Transcripts, files: list[Path], limit: int) -> Json:
    """Write whole agents from ``files`` until ``limit`` bytes: messages, bytes, seconds."""
    owner = transcripts.create_account("writer")
    workspace = transcripts.create_workspace("writer", [owner["id"]])["id"]
    count = stored = 0
    took = 0.0
    for path in files:
        if stored >= limit:
            break
        agent = transcripts.create_agent(owner["id"], workspace, path.stem)["id"]
        with path.open("rb") as f:
            for line in f:
                message = orjson.loads(line)
                start = time.perf_counter()
                transcripts.put_message(owner["id"], agent, message["id"], message)
                took += time.perf_counter() - start
                count += 1
                stored += len(line)
    return {"messages": count, "bytes": stored, "seconds": took}


WAYS = ("as it is", "engine index off", "no searchable text")


def write_speeds(
    key: str, corpus: Corpus, limit: int, log: Callable[[str], None], rounds: int = 2, median: bool = False
) -> list[Json]:
    """The same batch, each way on a fresh store, ``rounds`` times (ways in turn, then in
    reverse, and so on): the faster of the runs, as the one least slowed by the rest of the
    machine, or (``median``) the median run of each way."""
    backend, make_url = BACKENDS[key]
    files = [p for step in corpus.steps for p in step.files]
    runs: dict[str, list[Json]] = {}
    order = [way for r in range(rounds) for way in (WAYS if r % 2 == 0 else WAYS[::-1])]
    for way in order:
        with make_url() as url:
            store = open_store(url)
            try:
                if way == "engine index off":
                    no_engine_index(store, backend)
                kind = Unindexed if way == "no searchable text" else Transcripts
                got = write_batch(kind(store, settings=Settings(db=url)), files, limit)
            finally:
                store.close()
        log(f"{backend} write, {way}: {got['messages']} messages, {human(got['bytes'])}, {got['seconds']:.1f} s")
        runs.setdefault(way, []).append({**got, "way": way})
    if median:  # the middle run (the lower middle of an even number)
        return [sorted(runs[way], key=lambda g: g["seconds"])[(len(runs[way]) - 1) // 2] for way in WAYS]
    return [min(runs[way], key=lambda g: g["seconds"]) for way in WAYS]


# -- the anchor ----------------------------------------------------------------------------


def grep_anchor(corpus: Corpus, words: dict[str, str]) -> list[Json]:
    """``grep -c -i -F WORD`` over the JSONL of each step: lines (messages) found, and time."""
    out = []
    env = {**os.environ, "LC_ALL": "C.UTF-8"}
    for n in range(len(corpus.steps)):
        files = [str(p) for s in corpus.steps[: n + 1] for p in s.files]
        for name, word in words.items():
            command = ["grep", "-c", "-H", "-i", "-F", "--", word, *files]

            def run(command: list[str] = command) -> subprocess.CompletedProcess[str]:
                return subprocess.run(command, capture_output=True, text=True, env=env, check=False)

            run()  # the files in the page cache, as for a user's second search
            times, found = [], 0
            for _ in range(5):
                start = time.perf_counter()
                done = run()
                times.append((time.perf_counter() - start) * 1000)
                found = sum(int(line.rsplit(":", 1)[1]) for line in done.stdout.splitlines())
            if name == "rare word":
                assert found == corpus.rare.count, found
            out.append({"step": n, "query": name, "lines": found, "p50": statistics.median(times)})
    return out


# -- the run -------------------------------------------------------------------------------


def run(keys: list[str], size: int, save: Path | None, log: Callable[[str], None]) -> Json:
    state: Json = {"size": size, "date": time.strftime("%Y-%m-%d", time.gmtime()), "load": [os.getloadavg()[0]]}

    def saved() -> None:
        if save is not None:
            save.write_bytes(orjson.dumps(state, option=orjson.OPT_INDENT_2))

    tmp = Path(tempfile.mkdtemp(prefix="foldline-bench-corpus-"))
    try:
        pools = read_pools(Registry.load(Settings().registry))
        log(f"pools: {len(pools.prompts)} prompts, {len(pools.texts)} texts, {len(pools.thoughts)} thoughts, "
            f"{len(pools.tools)} tool calls, {len(pools.lines)} output lines")  # fmt: skip
        corpus = make_corpus(tmp, pools, size)
        text_bytes: list[int] = []
        for step in corpus.steps:
            total = text_bytes[-1] if text_bytes else 0
            for path in step.files:
                with path.open("rb") as f:
                    total += sum(searchable_bytes(orjson.loads(line)) for line in f)
            text_bytes.append(total)
        state.update(stored=[s.stored for s in corpus.steps], searchable=text_bytes, agents=len(corpus.titles))
        log(f"corpus: {human(corpus.steps[-1].stored)} of JSONL, {human(text_bytes[-1])} searchable, "
            f"{len(corpus.titles)} agents")  # fmt: skip
        words = {"rare word": corpus.rare.token, "common word": COMMON, "phrase": PHRASE.strip('"')}
        state["grep"] = grep_anchor(corpus, words)
        saved()
        with ExitStack() as stack:
            backends = []
            for key in keys:
                name, make_url = BACKENDS[key]
                backends.append(Backend(name, stack.enter_context(make_url()), corpus, state))
                stack.callback(backends[-1].close)
            for n, step in enumerate(corpus.steps):
                # The backends are built side by side (one thread each), then measured one at a time.
                with ThreadPoolExecutor(len(backends)) as pool:
                    took = list(pool.map(lambda b: b.build(step), backends))  # noqa: B023
                for b, seconds in zip(backends, took, strict=True):
                    b.state.setdefault("build", []).append({"step": n, "seconds": seconds})
                    log(f"{b.name}: {human(step.stored)} stored; this step written in {seconds:.0f} s")
                for b in backends:
                    b.measure(n, log)
                    saved()
            for b in backends:
                b.state["slices"] = b.slices()
                log(f"{b.name} slices {b.state['slices']}")
                saved()
            flatness(keys, backends, corpus, stack, log)
            saved()
        batch = write_batch_size(corpus)
        for key, b in zip(keys, backends, strict=True):
            b.state["writes"] = write_speeds(key, corpus, batch, log)
            saved()
        state["load"].append(os.getloadavg()[0])
        saved()
        return state
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def flatness(
    keys: list[str], backends: list[Backend], corpus: Corpus, stack: ExitStack, log: Callable[[str], None]
) -> None:
    """The rare word on fresh stores of the first step and of the first two, beside the whole
    store, timed in the same rounds: the growth from the smallest to the largest store without
    the drift of a shared machine between steps (each step's own figure is taken minutes apart)."""
    smaller: list[list[Backend]] = []
    for key, whole in zip(keys, backends, strict=True):
        stores = [Backend(whole.name, stack.enter_context(BACKENDS[key][1]()), corpus, {}) for _ in corpus.steps[:-1]]
        for b in stores:
            stack.callback(b.close)
        smaller.append(stores)
    for n, step in enumerate(corpus.steps[:-1]):
        # stores[k] holds steps 0..k: step n goes into every store from the n-th on.
        with ThreadPoolExecutor(len(backends)) as pool:
            list(pool.map(lambda stores: [b.build(step) for b in stores[n:]], smaller))  # noqa: B023
    rare = queries(corpus, last=False)[:1]
    for whole, stores in zip(backends, smaller, strict=True):
        ladder = [*stores, whole]
        for b in ladder:
            time_queries(b.http, b.workspace, rare, runs=1)  # its answer checked, and warmed
        times: list[list[float]] = [[] for _ in ladder]
        for _ in range(RUNS):
            for b, runs in zip(ladder, times, strict=True):
                runs.append(search_ms(b, corpus.rare.token))
        whole.state["flat"] = [
            {"stored": step.stored, "p50": statistics.median(runs), "p99": p99(runs)}
            for step, runs in zip(corpus.steps, times, strict=True)
        ]
        log(f"{whole.name} rare word, same rounds: {whole.state['flat']}")


def search_ms(b: Backend, q: str) -> float:
    start = time.perf_counter()
    b.http.get("/api/search", params={"q": q, "workspace_id": b.workspace}).raise_for_status()
    return (time.perf_counter() - start) * 1000


def write_batch_size(corpus: Corpus) -> int:
    return min(max(corpus.steps[1].stored // 4, 10_000_000), 32_000_000, corpus.steps[-1].stored)


def writes_only(keys: list[str], size: int, batch: int | None, rounds: int, log: Callable[[str], None]) -> Json:
    """Only the write door, each way ``rounds`` times interleaved, the median run of each: the
    quick comparison for a change to how a write keeps its text (``--writes-only``)."""
    state: Json = {"size": size, "date": time.strftime("%Y-%m-%d", time.gmtime()), "load": [os.getloadavg()[0]]}
    tmp = Path(tempfile.mkdtemp(prefix="foldline-bench-corpus-"))
    try:
        corpus = make_corpus(tmp, read_pools(Registry.load(Settings().registry)), size)
        limit = min(batch or write_batch_size(corpus), corpus.steps[-1].stored)
        for key in keys:
            name = BACKENDS[key][0]
            state.setdefault("backends", {})[name] = {"writes": write_speeds(key, corpus, limit, log, rounds, True)}
        state["load"].append(os.getloadavg()[0])
        return state
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# -- the tables ----------------------------------------------------------------------------


def at(rows: list[Json], **match: Any) -> Json | None:
    return next((r for r in rows if all(r.get(k) == v for k, v in match.items())), None)


def latency_table(state: Json) -> str:
    names = list(state["backends"])
    lines = [
        "| stored | query | answer | " + " | ".join(f"{b} p50 / p99 (ms)" for b in names) + " | grep -c p50 (ms) |",
        "|---|---|---|" + "---:|" * len(names) + "---:|",
    ]
    for n, stored in enumerate(state["stored"]):
        first = state["backends"][names[0]].get("latency", [])
        for row in [r for r in first if r["step"] == n]:
            cells = []
            for b in names:
                found = at(state["backends"][b].get("latency", []), step=n, query=row["query"])
                cells.append(f"{found['p50']:.1f} / {found['p99']:.1f}" if found else "not measured")
            g = at(state.get("grep", []), step=n, query=row["query"])
            anchor = f"{g['p50']:.0f} ({g['lines']:,} lines)" if g else "–"
            lines.append(f"| {human(stored)} | {row['query']} | {row['answer']} | {' | '.join(cells)} | {anchor} |")
    return "\n".join(lines)


def size_table(state: Json) -> str:
    lines = [
        "| backend | stored | searchable text | chunk rows (table + key) | engine index | index / text "
        "| whole database |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, b in state["backends"].items():
        for s in b.get("sizes", []):
            text_bytes = state["searchable"][s["step"]]
            lines.append(
                f"| {name} | {human(s['stored'])} | {human(text_bytes)} | {human(s['chunks'])} | {human(s['index'])} "
                f"| {s['index'] / text_bytes:.2f}x | {human(s['total'])} |"
            )
    return "\n".join(lines)


def build_table(state: Json) -> str:
    lines = ["| backend | step | written in (s) | MB/s |", "|---|---|---:|---:|"]
    for name, b in state["backends"].items():
        for row in b.get("build", []):
            n = row["step"]
            grown = state["stored"][n] - (state["stored"][n - 1] if n else 0)
            prev = human(state["stored"][n - 1]) if n else "0"
            lines.append(
                f"| {name} | {prev} → {human(state['stored'][n])} | {row['seconds']:.0f} "
                f"| {grown / 1e6 / row['seconds']:.1f} |"
            )
    return "\n".join(lines)


def write_table(state: Json) -> str:
    lines = ["| backend | write door | messages | stored | seconds | messages/s | MB/s | vs no searchable text |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
    for name, b in state["backends"].items():
        writes = b.get("writes", [])
        base = at(writes, way="no searchable text")
        for w in writes:
            slower = w["seconds"] / base["seconds"] - 1 if base else math.nan
            lines.append(
                f"| {name} | {w['way']} | {w['messages']:,} | {human(w['bytes'])} | {w['seconds']:.1f} "
                f"| {w['messages'] / w['seconds']:.0f} | {w['bytes'] / 1e6 / w['seconds']:.2f} | {100 * slower:+.0f}% |"
            )
    return "\n".join(lines)


def slice_table(state: Json) -> str:
    lines = [
        "| backend | 64 KB slice of 1 MB, p50 / p99 (ms) | of the big part, p50 / p99 (ms) | big / 1 MB "
        "| big part read whole (ms) | server RSS idle → peak | peak growth / part size |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, b in state["backends"].items():
        s = b.get("slices")
        if not s:
            continue
        lines.append(
            f"| {name} | {s['small_p50']:.1f} / {s['small_p99']:.1f} | {s['big_p50']:.1f} / {s['big_p99']:.1f} "
            f"| {s['big_p50'] / s['small_p50']:.2f}x | {s['whole_ms']:.0f} | {human(s['idle_rss'])} → "
            f"{human(s['peak_rss'])} | {(s['peak_rss'] - s['idle_rss']) / s['big_length']:.2f}x |"
        )
    return "\n".join(lines)


def met(ok: bool) -> str:
    return "met" if ok else "**missed**"


def verdicts(state: Json) -> list[str]:
    out = []
    for name, b in state["backends"].items():
        rare = [r for r in b.get("latency", []) if r["query"] == "rare word"]
        if rare:
            last = rare[-1]
            ok = last["p50"] < 50 and last["p99"] < 250
            spread = max(r["p50"] for r in rare) / min(r["p50"] for r in rare)
            each = ", ".join(f"{r['p50']:.1f} ms at {human(r['stored'])}" for r in rare)
            flat = b.get("flat")
            if flat:  # the same rounds on three stores: the figure the goal is judged by
                same = max(r["p50"] for r in flat) / min(r["p50"] for r in flat)
                each_flat = ", ".join(f"{r['p50']:.1f} ms at {human(r['stored'])}" for r in flat)
                judged = (f"; timed in the same rounds on stores of each size, {each_flat}: {same:.2f}x "
                          f"(goal flat, at most 2x: {met(same <= 2)})")  # fmt: skip
            else:
                judged = f" (goal flat, at most 2x: {met(spread <= 2)})"
            out.append(
                f"- {name}: rare word at {human(last['stored'])}: p50 {last['p50']:.1f} ms, p99 {last['p99']:.1f} ms "
                f"(goal under 50 and 250 ms: {met(ok)}); its p50 is {each}, measured as each step was written: "
                f"the slowest {spread:.2f}x the fastest{judged}."
            )
        base, indexed = at(b.get("writes", []), way="no searchable text"), at(b.get("writes", []), way="as it is")
        if base and indexed:
            slower = indexed["seconds"] / base["seconds"] - 1
            out.append(
                f"- {name}: the write door is {100 * slower:+.0f}% slower than with no searchable text "
                f"(goal at most +30%: {met(slower <= 0.3)})."
            )
        s = b.get("slices")
        if s:
            ratio = s["big_p50"] / s["small_p50"]
            memory = (s["peak_rss"] - s["idle_rss"]) / s["big_length"]
            out.append(
                f"- {name}: a 64 KB slice of the {human(s['big_length'])} part costs {ratio:.2f}x one of the 1 MB part "
                f"(goal at most 1.2x: {met(ratio <= 1.2)}); reading the {human(s['big_length'])} part whole grew the "
                f"server by {memory:.2f}x its size (goal under 2x: {met(memory < 2)})."
            )
    return out


def report(state: Json) -> str:
    loads = " and ".join(f"{x:.1f}" for x in state.get("load", []))
    stored = state["stored"][-1]
    complete = all("writes" in b for b in state["backends"].values())
    return "\n".join([
        f"Run of {state['date']}: `--size {human(state['size']).replace(' ', '')}`, a corpus of {human(stored)} of "
        f"message JSON ({human(state['searchable'][-1])} of searchable text) in {state['agents']} agents. "
        f"Load average of the shared machine at the start and end: {loads} (2 cores)."
        + ("" if complete else " **The run did not finish: what it measured is below, the rest is missing.**"),
        "",
        "Query latency, over HTTP from a separate server process (p99 is the slowest run):",
        "",
        latency_table(state),
        "",
        "Building the corpus through the write door (both backends side by side, one thread each):",
        "",
        build_table(state),
        "",
        "The index against the text it indexes:",
        "",
        size_table(state),
        "",
        "The write door, the same batch of whole agents each way on a fresh store (the faster of two runs):",
        "",
        write_table(state),
        "",
        "Slices and whole reads (the 1 MB part and the big part are bash outputs in the corpus):",
        "",
        slice_table(state),
        "",
        *verdicts(state),
    ])  # fmt: skip


def write_doc(block: str) -> None:
    write_block("search", "Search and slices: `bench/search.py`", block)


def write_block(marker: str, heading: str, block: str) -> None:
    """``block`` between docs/benchmarks.md's ``<!-- marker:start -->`` and ``:end`` markers
    (a new section under ``heading`` at the end when they are not there)."""
    doc = DOC.read_text()
    start, end = f"<!-- {marker}:start -->", f"<!-- {marker}:end -->"
    if start in doc and end in doc:
        doc = doc[: doc.index(start)] + f"{start}\n{block}\n{end}" + doc[doc.index(end) + len(end) :]
    else:
        doc += f"\n## {heading}\n\n{start}\n{block}\n{end}\n"
    DOC.write_text(doc)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=parse_size, default=parse_size("1GB"), help="corpus stored (default 1GB)")
    parser.add_argument("--backends", default="sqlite,postgres", help="comma-separated: sqlite, postgres")
    parser.add_argument("--no-write", action="store_true", help="do not update docs/benchmarks.md")
    parser.add_argument("--save", type=Path, help="keep the figures as JSON here, after each stage")
    parser.add_argument("--report", type=Path, help="only write the tables of figures kept by --save")
    parser.add_argument("--writes-only", type=int, metavar="ROUNDS",
                        help="only time the write door, each way ROUNDS times interleaved, and print the medians")
    parser.add_argument("--batch", type=parse_size, help="with --writes-only: bytes written each way")
    parser.add_argument("--serve", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.port)
        return
    if args.report:
        state = orjson.loads(args.report.read_bytes())
    else:
        keys = [b.strip() for b in args.backends.split(",") if b.strip()]
        if not keys or any(b not in BACKENDS for b in keys):
            parser.error(f"--backends takes {', '.join(BACKENDS)}")
        started = time.perf_counter()

        def log(line: str) -> None:
            print(f"[{time.perf_counter() - started:6.0f} s] {line}", flush=True)

        if args.writes_only:
            state = writes_only(keys, args.size, args.batch, args.writes_only, log)
            load = " → ".join(f"{x:.1f}" for x in state["load"])
            print(f"\nload average {load}; the median of {args.writes_only} runs each way\n")
            print(write_table(state))
            return
        state = run(keys, args.size, args.save, log)
    block = report(state)
    print()
    print(block)
    if not args.no_write:
        write_doc(block)
        print(f"\nwritten to {DOC.relative_to(ROOT)}")


if __name__ == "__main__":
    main()


def wait_until_up(base: str, proc: subprocess.Popen[bytes]) -> None:
    """Until the server at ``base`` answers (a minute at most; an exited ``proc`` is a failure)."""
    deadline = time.monotonic() + 60
    while True:
        try:
            httpx.get(f"{base}/api/me", timeout=2)
            return
        except httpx.TransportError:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the bench server did not start") from None
            time.sleep(0.1)
