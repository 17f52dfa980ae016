"""Searchable text stored in fixed-size chunks, so a search reads rows of bounded size and a
slice of a 100 MB field reads only the chunks it covers.

A field's text is cut into chunks of ``CHUNK`` code points. Chunk ``k`` *owns* the code points
``[k * CHUNK, (k + 1) * CHUNK)`` and its stored text runs ``OVERLAP`` code points further, into
the next chunk, so a match that crosses a boundary is still inside one row. A match counts only
in the row where it starts (in that row's owned range), so it is found once. A search term is
therefore at most ``OVERLAP`` code points long (see :data:`foldline.search.MAX_QUERY`).
"""

from __future__ import annotations

from dataclasses import dataclass

CHUNK = 32_768
OVERLAP = 512


@dataclass(frozen=True, slots=True)
class FieldText:
    """One searchable field of a part: its name, whole text, and, when the field is stored cut,
    how many code points its head and its tail each show (``None`` when it is not cut)."""

    field: str
    text: str
    shown: int | None = None


@dataclass(frozen=True, slots=True)
class Chunk:
    start: int  # code-point offset of the chunk in its field
    owned: int  # code points this chunk owns (the rest of ``text`` is the next chunk's overlap)
    text: str


def chunks(text: str) -> list[Chunk]:
    """``text`` in chunks; an empty text is one empty chunk (so the field is still known)."""
    if not text:
        return [Chunk(0, 0, "")]
    return [
        Chunk(start, min(CHUNK, len(text) - start), text[start : start + CHUNK + OVERLAP])
        for start in range(0, len(text), CHUNK)
    ]


def chunk_rows(conversation_id: str, message_id: str, idx: int, field: FieldText) -> list[dict[str, object]]:
    """The ``part_text`` rows of one field."""
    length = len(field.text)
    return [
        {
            "conversation_id": conversation_id,
            "message_id": message_id,
            "idx": idx,
            "field": field.field,
            "start": c.start,
            "length": length,
            "owned": c.owned,
            "shown": field.shown,
            "text": c.text,
        }
        for c in chunks(field.text)
    ]
