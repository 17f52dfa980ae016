"""A tool's input while it streams: the JSON text received so far, closed and read as the AI SDK
reads it (its ``parsePartialJson``: the text as it is if it parses, else the text cut back to its
last complete token and closed, else nothing).

The repair is one linear pass that keeps a stack of what is open (a string, an object before or
after a key, an array, a number, a literal) and where the last token that can stand ended; the
open containers are then closed from the inside out. It does not judge the JSON: the parser
after it does.
"""

from __future__ import annotations

from typing import Any

import orjson

ABSENT: Any = object()  # what the SDK leaves undefined: no value (and no key in a part)

LITERALS = ("true", "false", "null")
DIGITS = frozenset("0123456789")
HEX = frozenset("0123456789abcdefABCDEF")


def read_partial(text: str) -> Any:
    """The value of ``text`` as far as it goes, or :data:`ABSENT` when even the repair does not parse."""
    for candidate in (text, close(text)):
        try:
            return orjson.loads(candidate)
        except orjson.JSONDecodeError:
            continue
    return ABSENT


class _Scan:
    """The state of one pass: what is open (innermost last), and how much of the text stands."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.open: list[str] = ["root"]
        self.last = -1  # the index of the last character kept
        self.literal_at = 0
        self.hex_digits = 0

    def begin_value(self, char: str, at: int, after: str) -> None:
        """A value may start at ``char``; once it ends, the container waits in state ``after``."""
        opens = {'"': "string", "{": "object-start", "[": "array-start", "-": "number"}
        if char in opens:
            kind = opens[char]
        elif char in DIGITS:
            kind = "number"
        elif char in "tfn":
            kind, self.literal_at = "literal", at
        else:
            return
        if char != "-":
            self.last = at
        self.open[-1] = after
        self.open.append(kind)

    def after_member(self, char: str, at: int, container: str) -> None:
        """In an object (``container`` "object") or array past a value: a comma, or its close."""
        if char == ",":
            self.open[-1] = f"{container}-comma"
        elif char == ("}" if container == "object" else "]"):
            self.last = at
            self.open.pop()

    def step(self, char: str, at: int) -> None:
        state = self.open[-1]
        if state == "root":
            self.begin_value(char, at, "finish")
        elif state in ("object-start", "object-comma"):
            if char == '"':
                self.open[-1] = "object-key"
            elif char == "}" and state == "object-start":
                self.last = at
                self.open.pop()
        elif state == "object-key":
            if char == '"':
                self.open[-1] = "object-colon"
        elif state == "object-colon":
            if char == ":":
                self.open[-1] = "object-value"
        elif state == "object-value":
            self.begin_value(char, at, "object-after")
        elif state == "object-after":
            self.after_member(char, at, "object")
        elif state == "array-start":
            if char == "]":
                self.last = at
                self.open.pop()
            else:
                self.begin_value(char, at, "array-after")
        elif state == "array-after":
            if char in ",]":
                self.after_member(char, at, "array")
            else:
                self.last = at
        elif state == "array-comma":
            self.begin_value(char, at, "array-after")
        else:
            self.inside_token(state, char, at)

    def inside_token(self, state: str, char: str, at: int) -> None:
        if state == "string":
            if char == "\\":
                self.open.append("escape")
            else:
                self.last = at
                if char == '"':
                    self.open.pop()
        elif state == "escape":
            self.open.pop()
            if char == "u":
                self.hex_digits = 0
                self.open.append("unicode")
            else:
                self.last = at
        elif state == "unicode":
            if char in HEX:
                self.hex_digits += 1
                if self.hex_digits == 4:
                    self.open.pop()
                    self.last = at
        elif state == "number":
            self.in_number(char, at)
        elif state == "literal":
            self.in_literal(char, at)

    def in_number(self, char: str, at: int) -> None:
        if char in DIGITS:
            self.last = at
        elif char in "eE-.":
            return
        else:
            self.open.pop()
            self.end_of_value(char, at, ",}]")

    def in_literal(self, char: str, at: int) -> None:
        so_far = self.text[self.literal_at : at + 1]
        if any(word.startswith(so_far) for word in LITERALS):
            self.last = at
        else:
            self.open.pop()
            self.end_of_value(char, at, ",}]")

    def end_of_value(self, char: str, at: int, enders: str) -> None:
        """A number or literal ended at ``char``: the container around it may take that character."""
        if char not in enders:
            return
        if self.open[-1] == "array-after" and char in ",]":
            self.after_member(char, at, "array")
        elif self.open[-1] == "object-after" and char in ",}":
            self.after_member(char, at, "object")

    def closing(self) -> str:
        """What closes everything still open, innermost first."""
        tail = []
        for state in reversed(self.open):
            if state == "string":
                tail.append('"')
            elif state.startswith("object"):
                tail.append("}")
            elif state.startswith("array"):
                tail.append("]")
            elif state == "literal":
                so_far = self.text[self.literal_at :]
                word = next((w for w in LITERALS if w.startswith(so_far)), None)
                if word is not None:
                    tail.append(word[len(so_far) :])
        return "".join(tail)


def close(text: str) -> str:
    """``text`` cut back to its last complete token and closed (see the module's docstring)."""
    scan = _Scan(text)
    for at, char in enumerate(text):
        scan.step(char, at)
    return text[: scan.last + 1] + scan.closing()
