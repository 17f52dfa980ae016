"""The scanner: a text with every known secret replaced by ``[REDACTED:rule-id]``, and the count."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
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


class Gate:
    """Which rules may match a text: every rule's prefilter literals looked for in one pass
    (Aho-Corasick), so a text costs one sweep however many rules there are; a rule with no
    prefilter is always asked."""

    def __init__(self, rules: Sequence[Rule]) -> None:
        self.always = frozenset(i for i, rule in enumerate(rules) if not rule.prefilter)
        literals = sorted({literal for rule in rules for literal in rule.prefilter})
        self.rules_of = [
            frozenset(i for i, rule in enumerate(rules) if literal in rule.prefilter) for literal in literals
        ]
        self.automaton = AhoCorasick(literals) if literals else None
        self.overlap = max(map(len, literals), default=1) - 1  # a literal across two windows is in the first
        self.every = frozenset(range(len(rules)))

    def rules(self, text: str) -> frozenset[int]:
        """The indexes of the rules whose literals occur in ``text`` (or that have none)."""
        found = set(self.always)
        if self.automaton is not None:
            for start in range(0, len(text), WINDOW):
                piece = text[start : start + WINDOW + self.overlap] if len(text) > WINDOW else text
                for literal, _, _ in self.automaton.find_matches_as_indexes(piece, overlapping=True):
                    found |= self.rules_of[literal]
                if len(found) == len(self.every):
                    break
        return frozenset(found)


@dataclass
class Redactor:
    rules: Sequence[Rule] = BUILTIN
    allow: Allowlist = field(default_factory=Allowlist)
    _gate: Gate = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._gate = Gate(self.rules)

    def text(self, text: str) -> tuple[str, int]:
        """``text`` with every secret replaced by its rule's marker, and how many were."""
        asked = self._gate.rules(text)
        if not asked:
            return text, 0
        found = 0
        for i, rule in enumerate(self.rules):
            if i in asked:  # a marker written by an earlier rule makes no match for a later one
                text, n = self._apply(rule, text)
                found += n
        return text, found

    def _apply(self, rule: Rule, text: str) -> tuple[str, int]:
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

        return rule.regex.sub(replace, text), count

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
