"""The scanner: a text with every known secret replaced by ``[REDACTED:rule-id]``, and the count."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

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


def literals(rules: Sequence[Rule]) -> tuple[str, ...] | None:
    """Every rule's prefilter literals, so a clean text (most of them) is passed over after one
    C-level sweep of substring tests instead of a Python call per rule; None when some rule has no
    prefilter (it runs on every text, so there is nothing to skip)."""
    if any(not rule.prefilter for rule in rules):
        return None
    return tuple(sorted({literal for rule in rules for literal in rule.prefilter}))


@dataclass
class Redactor:
    rules: Sequence[Rule] = BUILTIN
    allow: Allowlist = field(default_factory=Allowlist)
    _literals: tuple[str, ...] | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._literals = literals(self.rules)

    def text(self, text: str) -> tuple[str, int]:
        """``text`` with every secret replaced by its rule's marker, and how many were."""
        if self._literals is not None and not any(map(text.__contains__, self._literals)):
            return text, 0
        found = 0
        for rule in self.rules:
            if not rule.may_match(text):
                continue
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
