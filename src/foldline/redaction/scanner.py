"""The scanner: a text with every known secret replaced by ``[REDACTED:rule-id]``, and the count."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import product
from typing import Any

from ahocorasick_rs import AhoCorasick

from .rules import BUILTIN, Rule

MARKED = "[REDACTED:"


def marker(rule_id: str) -> str:
    return f"{MARKED}{rule_id}]"


@dataclass(frozen=True)
class Allowlist:
    """Values never redacted: literals (compared whole) and regexes (a full match)."""

    values: frozenset[str] = frozenset()
    patterns: tuple[re.Pattern[str], ...] = ()

    def allows(self, secret: str) -> bool:
        return secret in self.values or any(p.fullmatch(secret) for p in self.patterns)


WINDOW = 1 << 20  # code points of a text searched per call: a text full of one literal never
# builds one huge list of matches


def ascii_cases(literal: str) -> list[str]:
    """Every spelling of ``literal`` in upper and lower case ASCII letters (``pwd``: 8)."""
    return ["".join(chars) for chars in product(*({c.lower(), c.upper()} for c in literal))]


class Gate:
    """Which rules may match a text: every rule's prefilter literals looked for in one pass
    (Aho-Corasick), so a text costs one sweep however many rules there are; a rule with no
    prefilter is always asked. For a rule that says where its matches start (``Rule.back``),
    the sweep also gives those places."""

    def __init__(self, rules: Sequence[Rule]) -> None:
        self.always = frozenset(i for i, rule in enumerate(rules) if not rule.prefilter)
        backs: dict[str, dict[int, int | None]] = {}  # each literal (each case of a folded one): its rules
        for i, rule in enumerate(rules):
            for n, literal in enumerate(rule.prefilter):
                for form in ascii_cases(literal) if rule.fold else (literal,):
                    backs.setdefault(form, {})[i] = None if rule.back is None else rule.back[n]
        literals = sorted(backs)
        self.rules_of = [frozenset(backs[literal]) for literal in literals]
        self.starts_of = [[(i, back) for i, back in backs[literal].items() if back is not None] for literal in literals]
        self.automaton = AhoCorasick(literals) if literals else None
        self.overlap = max(map(len, literals), default=1) - 1  # a literal across two windows is in the first
        self.every = frozenset(range(len(rules)))

    def scan(self, text: str) -> tuple[frozenset[int], dict[int, set[int]] | None]:
        """The indexes of the rules whose literals occur in ``text`` (or that have none), and for
        each of them that says where its matches start, the places in ``text`` where one may
        (None: not known, every rule is searched whole)."""
        found = set(self.always)
        starts: dict[int, set[int]] = {}
        if self.automaton is not None:
            for start in range(0, len(text), WINDOW):
                piece = text[start : start + WINDOW + self.overlap] if len(text) > WINDOW else text
                for literal, at, _ in self.automaton.find_matches_as_indexes(piece, overlapping=True):
                    found |= self.rules_of[literal]
                    for i, back in self.starts_of[literal]:
                        starts.setdefault(i, set()).add(start + at - back)
                if len(found) == len(self.every) and start + WINDOW < len(text):
                    return frozenset(found), None  # every rule is asked: the rest is not swept
        return frozenset(found), starts


@dataclass
class Redactor:
    rules: Sequence[Rule] = BUILTIN
    allow: Allowlist = field(default_factory=Allowlist)
    _gate: Gate = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._gate = Gate(self.rules)

    def text(self, text: str) -> tuple[str, int]:
        """``text`` with every secret replaced by its rule's marker, and how many were."""
        asked, starts = self._gate.scan(text)
        if not asked:
            return text, 0
        found = 0
        for i, rule in enumerate(self.rules):
            if i in asked:  # a marker written by an earlier rule makes no match for a later one
                text, n = self._apply(rule, text, None if starts is None else starts.get(i))
                found += n
                if n:
                    starts = None  # the places were in the text before this rule changed it
        return text, found

    def _apply(self, rule: Rule, text: str, starts: set[int] | None = None) -> tuple[str, int]:
        """``text`` with ``rule``'s secrets replaced, and how many: searched whole, or tried only
        at ``starts`` (where its matches can start), which finds what the search would."""
        count = 0
        group = "secret" if "secret" in rule.regex.groupindex else 0

        def replace(match: re.Match[str]) -> str:
            nonlocal count
            secret = match.group(group)
            if (
                secret.startswith(MARKED)
                or (rule.check is not None and not rule.check(match))
                or self.allow.allows(secret)
            ):
                return match.group(0)
            count += 1
            whole, start = match.group(0), match.start(group) - match.start()
            return whole[:start] + marker(rule.id) + whole[start + len(secret) :]

        if starts is None:
            return rule.regex.sub(replace, text), count
        # As sub: from the left, each match taken whole before the next is looked for.
        out: list[str] = []
        end = 0
        for start in sorted(starts):
            if start < end or start < 0:
                continue
            match = rule.regex.match(text, start)
            if match is not None:
                out += (text[end:start], replace(match))
                end = match.end()
        return ("".join(out) + text[end:], count) if out else (text, 0)

    def value(self, value: Any) -> tuple[Any, int]:
        """A JSON value with every string in it redacted (object keys kept), and the count."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return self._items(value, range(len(value)))
        if isinstance(value, dict):
            return self._items(value, list(value))
        return value, 0

    def _items(self, container: Any, keys: Iterable[Any]) -> tuple[Any, int]:
        found = 0
        out = container.copy()
        for key in keys:
            out[key], n = self.value(container[key])
            found += n
        return (out, found) if found else (container, 0)

    def message(self, message: dict[str, Any]) -> tuple[dict[str, Any], int]:
        """A ``UIMessage`` with every stored string redacted (its parts' text, reasoning, tool
        input and output, error text, and its metadata), and how many secrets were; when any
        were, the count is recorded in ``metadata.foldline.redacted``."""
        redacted, found = self.value(message)
        if found:
            meta = redacted.get("metadata")
            meta = dict(meta) if isinstance(meta, dict) else {}
            own = meta.get("foldline")
            meta["foldline"] = {**(own if isinstance(own, dict) else {}), "redacted": found}
            redacted = {**redacted, "metadata": meta}
        return redacted, found
