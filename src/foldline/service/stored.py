"""Stored rows read back: decoded, and put through the read's cheap checks.

A message's ``checked`` stamp (:func:`read_stamp`) vouches that it passed the write door under
today's checks; a read sends such a message from its stored text. Any other is decoded and
checked here, part by part.
"""

from __future__ import annotations

import hashlib
from typing import Any

import orjson

from ..errors import Invalid
from ..message import READ_CHECKS, readable_metadata, readable_part
from ..registry import Registry
from ..store import MessageRow

Json = dict[str, Any]


def read_stamp(registry: Registry) -> str:
    """What a message's ``checked`` stamp vouches for: the read checks of this version of
    :mod:`foldline.message` (:data:`READ_CHECKS`) and the registry's metadata schemas by role,
    passed at the write door. Retired tools are not in it: they are asked of every read."""
    schemas = orjson.dumps(registry.metadata, option=orjson.OPT_SORT_KEYS)
    return f"{READ_CHECKS}:{hashlib.sha256(schemas).hexdigest()[:16]}"


def as_bytes(text: str | bytes) -> bytes:
    return text if isinstance(text, bytes) else text.encode()


# Keys a stored head may not hold for its message to be sent from its stored text (a read adds them).
ADDED_KEYS = (b'"parts"', b'"cutParts"', b'"skippedParts"', b'"createdAt"')


def as_stored(head: bytes, checked: str | None, tools: list[str | None], stamp: str, retired: frozenset[str]) -> bool:
    """Whether a read sends a message from its stored texts as they are: its stamp is today's,
    its head is an object without the keys a read adds, and none of its parts' tools is retired."""
    return (
        checked == stamp
        and head[-1:] == b"}"
        and not any(key in head for key in ADDED_KEYS)
        and not (retired and any(tool in retired for tool in tools))
    )


def decoded(text: str | bytes) -> Any:
    """A stored JSON text, or ``None`` when the row is not JSON (the read then drops it)."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return None


def whole(row: MessageRow) -> Json:
    """A stored message, whole, to be written again (turn-end): every row must be readable."""
    message = decoded(row.head)
    parts = [decoded(body) for _, body, _ in row.parts]
    if not isinstance(message, dict) or not all(isinstance(p, dict) for p in parts):
        raise Invalid("the last message holds a stored part that cannot be read; it was left as it is")
    message["parts"] = parts
    return message


def whole_or_none(row: MessageRow) -> Json | None:
    try:
        return whole(row)
    except Invalid:
        return None


def passes_read_checks(message: Json, registry: Registry) -> bool:
    """Whether a whole message passes every check a read runs (so it may be stamped)."""
    return readable_metadata(message, registry) and all(readable_part(part, registry) for part in message["parts"])


def readable(row: MessageRow, registry: Registry, dated: bool = False) -> Json:
    """A stored message after the read's cheap checks, in the form it was read (cut or whole).

    ``dated`` (cut reads and live changes, which add keys of their own anyway) adds
    ``createdAt``: when the service first stored the message. A whole read returns the
    message as written, nothing added."""
    head = decoded(row.head)
    message: Json = head if isinstance(head, dict) else {"id": row.id}
    if not readable_metadata(message, registry):
        message.pop("metadata", None)
    sent, cut_parts, skipped = [], [], []
    for index, body, ref in row.parts:
        part = decoded(body)
        cut = decoded(ref) if ref else None
        if not part_ok(part, cut if isinstance(cut, dict) else None, registry):
            skipped.append(index)
            continue
        sent.append(part)
        if isinstance(cut, dict):
            cut_parts.append(cut)
    message["parts"] = sent
    if cut_parts:
        message["cutParts"] = cut_parts
    if skipped:
        message["skippedParts"] = skipped
    if dated and row.created_at:
        message["createdAt"] = row.created_at
    return message


def part_ok(part: Any, cut: Json | None, registry: Registry) -> bool:
    if cut is None or not isinstance(part, dict):
        return readable_part(part, registry)
    field = cut.get("field")
    if not isinstance(field, str) or not isinstance(cut.get("index"), int):
        return False
    # A cut part lacks its field; check its shape as if the field were there.
    return readable_part({**part, field: ""}, registry)
