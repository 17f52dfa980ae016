"""The redactor the settings ask for: the built-in rules, a file's extra rules and allowlist.

The file (``FOLDLINE_REDACT_RULES``) is TOML::

    [[rule]]                   # any number of them, applied after the built-in ones
    id = "acme-key"            # the marker says [REDACTED:acme-key]
    regex = "acme_[a-z0-9]{32}"  # Python syntax; a group named "secret" is all that is replaced
    prefilter = "acme_"        # optional: the regex runs only on texts holding this literal

    [allow]                    # never redacted
    values = ["AKIAIOSFODNN7EXAMPLE"]   # literal values, compared whole
    patterns = ["sk_test_.*"]           # regexes a whole value must match
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

from .rules import BUILTIN, Rule
from .scanner import Allowlist, Redactor

RULE_ID = re.compile(r"[a-z0-9][a-z0-9-]{0,63}")


class RulesError(ValueError):
    """A redaction rules file that cannot be used, and why."""


def load(path: Path | None) -> Redactor:
    """The built-in rules with ``path``'s extra rules and allowlist (none without a path)."""
    if path is None:
        return Redactor()
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise RulesError(f"FOLDLINE_REDACT_RULES: cannot read {path.name}: {exc}") from None
    extra = tuple(_rule(i, entry) for i, entry in enumerate(_list(raw, "rule")))
    allow = raw.get("allow", {})
    if not isinstance(allow, dict):
        raise RulesError("FOLDLINE_REDACT_RULES: [allow] must be a table")
    values = frozenset(_strings(allow, "values"))
    patterns = tuple(_regex(p, "allow.patterns") for p in _strings(allow, "patterns"))
    return Redactor(BUILTIN + extra, Allowlist(values, patterns))


def _list(raw: dict[str, Any], key: str) -> list[Any]:
    value = raw.get(key, [])
    if not isinstance(value, list):
        raise RulesError(f"FOLDLINE_REDACT_RULES: {key} must be a list ([[{key}]] tables)")
    return value


def _strings(table: dict[str, Any], key: str) -> list[str]:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise RulesError(f"FOLDLINE_REDACT_RULES: allow.{key} must be a list of non-empty strings")
    return value


def _regex(pattern: str, where: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise RulesError(f"FOLDLINE_REDACT_RULES: {where}: not a regex ({exc})") from None


def _rule(index: int, entry: Any) -> Rule:
    where = f"rule {index + 1}"
    if not isinstance(entry, dict) or set(entry) - {"id", "regex", "prefilter"}:
        raise RulesError(f"FOLDLINE_REDACT_RULES: {where} takes id, regex and prefilter only")
    rule_id, regex, prefilter = entry.get("id"), entry.get("regex"), entry.get("prefilter")
    if not isinstance(rule_id, str) or not RULE_ID.fullmatch(rule_id):
        raise RulesError(f"FOLDLINE_REDACT_RULES: {where}: id is lower-case letters, digits and '-'")
    if not isinstance(regex, str) or not regex:
        raise RulesError(f"FOLDLINE_REDACT_RULES: {where}: regex must be a non-empty string")
    if prefilter is not None and (not isinstance(prefilter, str) or not prefilter):
        raise RulesError(f"FOLDLINE_REDACT_RULES: {where}: prefilter must be a non-empty string")
    compiled = _regex(regex, where)
    if compiled.search(""):
        raise RulesError(f"FOLDLINE_REDACT_RULES: {where}: the regex matches an empty text")
    return Rule(rule_id, compiled, (prefilter,) if prefilter else ())
