"""Aider chat histories (``<git root>/.aider.chat.history.md``) as Foldline messages.

One Markdown file collects every launch of Aider in a repository; each launch, from its
``# aider chat started at <local time>`` heading to the next, is one session. Inside it, a run of
``#### `` lines is one prompt (its lines joined), a run of ``> `` lines is Aider's own output
(banner, confirmations, ``Applied edit to``, ``/run`` output) kept as a ``system`` message marked
``aiderOutput``, and the plain Markdown between them is the model's reply, one assistant message
each; its ``<thinking-content-…>`` sections are ``reasoning``. Aider writes no tool calls: edits
are the reply's own SEARCH/REPLACE text. ``> Tokens: 3.2k sent, 21 received`` (with cache reads
and writes when given) is the usage of the reply before it; ``Main model:`` / ``Model:`` names the
model of the replies that follow. A prompt's exact time comes from ``.aider.input.history``
beside the log when it holds the same text (its ``# <time>`` blocks of ``+`` lines); otherwise
the launch's own time. Both are local times with no zone, and are read as UTC.
"""

from __future__ import annotations

import hashlib
import re
import uuid
from dataclasses import dataclass
from pathlib import Path

from ..registry import Registry
from .formats import Finding, Format, Group, Head
from .session import Conversation, Json, Session, add_usage, is_idle, settle_conversation, short_title, usage_of

NAME = "aider"
INPUT_HISTORY = ".aider.input.history"
HEADING = re.compile(r"^# aider chat started at (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) *$", re.M)
# the log opens with its first launch's heading (after blank lines): a Markdown file that quotes
# one, or mentions Aider, is not a log
OPENING = re.compile(rb"\A(?:\xef\xbb\xbf)?\s*# aider chat started at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d *\r?$", re.M)
THINKING = re.compile(r"<thinking-content-[0-9a-f]+>(.*?)(?:</thinking-content-[0-9a-f]+>|\Z)", re.S)
TOKENS = re.compile(r"^Tokens: (.*?)\.(?: Cost:|$)")
COUNT = re.compile(r"([\d.]+)([kKmM]?) (sent|received|cache write|cache hit)")
MODEL = re.compile(r"^(?:Main model|Model): (\S+) with ")
INPUT_STAMP = re.compile(r"^# (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?)$")


@dataclass
class Launch:
    started: str  # the heading's local time, as written
    blocks: list[tuple[str, str]]  # (kind: "user" | "output" | "reply", text), in order

    @property
    def prompts(self) -> list[str]:
        return [text for kind, text in self.blocks if kind == "user"]

    @property
    def session_id(self) -> str:
        """The launch's time and its first prompt: stable as the log grows, the same in a copy."""
        first = self.prompts[0] if self.prompts else ""
        return f"{self.started.replace(' ', 'T')}-{hashlib.blake2b(first.encode(), digest_size=4).hexdigest()}"


def read_launches(path: Path) -> list[Launch]:
    text = path.read_text(encoding="utf-8", errors="replace").replace("\r\n", "\n")
    starts = list(HEADING.finditer(text))
    return [
        Launch(m.group(1), blocks(text[m.end() : starts[i + 1].start() if i + 1 < len(starts) else len(text)]))
        for i, m in enumerate(starts)
    ]


def line_kind(line: str) -> tuple[str, str]:
    if line == "####" or line.startswith("#### "):
        return "user", line[5:].rstrip()
    if line == ">" or line.startswith("> "):
        return "output", line[2:].rstrip()
    return "reply", line


def blocks(body: str) -> list[tuple[str, str]]:
    """The runs of lines of one kind; blank lines belong to a reply, and end a prompt or an output."""
    found: list[tuple[str, list[str]]] = []
    for line in body.split("\n"):
        kind, text = line_kind(line)
        if not line.strip() and not (found and found[-1][0] == "reply"):
            continue
        if found and found[-1][0] == kind and (kind == "reply" or line.strip()):
            found[-1][1].append(text)
        else:
            found.append((kind, [text]))
    kept = [(kind, "\n".join(lines).strip("\n")) for kind, lines in found]
    return [(kind, text) for kind, text in kept if text.strip()]


def input_times(path: Path) -> list[tuple[str, str]]:
    """The entries of ``.aider.input.history``: (time, text), in order."""
    try:
        raw = path.read_text(encoding="utf-8", errors="replace").replace("\r\n", "\n")
    except OSError:
        return []
    entries: list[tuple[str, list[str]]] = []
    for line in raw.split("\n"):
        stamp = INPUT_STAMP.match(line)
        if stamp:
            entries.append((stamp.group(1), []))
        elif line.startswith("+") and entries:
            entries[-1][1].append(line[1:])
    return [(stamp, "\n".join(lines).strip()) for stamp, lines in entries]


def tokens(number: str, scale: str) -> int:
    return round(float(number) * {"k": 1_000, "m": 1_000_000}.get(scale.lower(), 1))


def usage_line(line: str) -> Json | None:
    found = TOKENS.match(line)
    if not found:
        return None
    counts = {what: tokens(n, scale) for n, scale, what in COUNT.findall(found.group(1))}
    hit, write = counts.get("cache hit", 0), counts.get("cache write", 0)
    sent = max(counts.get("sent", 0) - hit - write, 0)
    return usage_of(sent, counts.get("received", 0), hit, write)


def reply_parts(text: str) -> list[Json]:
    parts: list[Json] = []
    for thought in THINKING.findall(text):
        if thought.strip():
            parts.append({"type": "reasoning", "text": thought.strip(), "state": "done"})
    answer = THINKING.sub("", text).strip()
    if answer:
        parts.append({"type": "text", "text": answer, "state": "done"})
    return parts


@dataclass
class Reader:
    conv: Conversation
    started: str | None
    times: list[tuple[str, str]]  # the input history's entries not yet matched
    model: str | None = None
    last_reply: Json | None = None

    def meta(self, kind: str) -> Json:
        meta: Json = {"source": NAME, "lineType": kind}
        if self.conv.last_at:
            meta["timestamp"] = self.conv.last_at
        if self.model and kind == "reply":
            meta["model"] = self.model
        return meta

    def prompt_time(self, text: str) -> str | None:
        """The input history's time of this prompt (the first entry at or after the launch with its text)."""
        for i, (stamp, said) in enumerate(self.times):
            if said == text.strip() and (self.started is None or stamp >= self.started):
                del self.times[: i + 1]
                return stamp
        return None

    def block(self, number: int, kind: str, text: str) -> None:
        if kind == "user":
            stamp = self.prompt_time(text)
            self.conv.saw(stamp.replace(" ", "T") if stamp else None)
            meta = self.meta("prompt")
            message, _ = self.conv.message(f"b:{number}", "user", meta)
            message["parts"].append({"type": "text", "text": text, "state": "done"})
            self.conv.title = self.conv.title or short_title(text)
            self.last_reply = None
        elif kind == "reply":
            message, _ = self.conv.message(f"b:{number}", "assistant", self.meta("reply"))
            message["parts"].extend(reply_parts(text))
            self.last_reply = message
        else:
            self.output(number, text)

    def output(self, number: int, text: str) -> None:
        for line in text.split("\n"):
            named = MODEL.match(line)
            if named:
                self.model = named.group(1)
            usage = usage_line(line)
            if usage and self.last_reply is not None:
                meta = self.last_reply["metadata"]
                meta["usage"] = add_usage(meta.get("usage"), usage)
        message, _ = self.conv.message(f"b:{number}", "system", {**self.meta("output"), "aiderOutput": True})
        message["parts"].append({"type": "text", "text": text, "state": "done"})


def sniff(head: Head) -> bool:
    return OPENING.match(head.data) is not None


def history_of(path: Path) -> list[Path]:
    beside = path.with_name(INPUT_HISTORY)
    return [beside] if beside.is_file() else []


def groups(head: Head, finding: Finding) -> None:
    """One session per launch that holds a prompt (a log with none is reported as holding no conversation)."""
    spoken = [launch for launch in read_launches(head.path) if launch.prompts]
    if not spoken:
        from .importer import NO_CONVERSATION

        finding.skipped.append((str(head.path), NO_CONVERSATION))
    for launch in spoken:
        finding.add(Group(NAME, head.path, launch.session_id, history_of(head.path), shared=True))


def parse(group: Group, registry: Registry, namespace: uuid.UUID) -> Session:
    conv = Conversation(namespace, idle=is_idle(group.main))
    launch = next((x for x in read_launches(group.main) if x.session_id == group.session_id), None)
    if launch is not None:
        started = launch.started.replace(" ", "T")
        conv.saw(started)
        times = [t for history in group.agents for t in input_times(history)]
        reader = Reader(conv, launch.started, times)
        for number, (kind, text) in enumerate(launch.blocks):
            reader.block(number, kind, text)
    settle_conversation(conv, registry)
    return Session(str(group.main), NAME, group.session_id, conv, files=[str(p) for p in group.files])


def locations() -> list[Path]:
    """None: Aider writes into the repository it runs in, which is imported by naming it."""
    return []


FORMAT = Format(NAME, "Aider", (".aider.chat.history.md",), sniff, groups, parse, locations)
