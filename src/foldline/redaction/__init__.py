"""Redaction at the write door: known secret formats replaced before anything is stored."""

from __future__ import annotations

from .config import RulesError, load
from .rules import BUILTIN, Rule
from .scanner import Allowlist, Redactor, marker

__all__ = ["BUILTIN", "Allowlist", "Redactor", "Rule", "RulesError", "load", "marker"]
