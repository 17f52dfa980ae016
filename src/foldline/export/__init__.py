"""Whole exports drawn as documents: Markdown (:mod:`.markdown`) and one self-contained HTML file
(:mod:`.html`). Storage-free: :mod:`foldline.service.exports` walks the store and hands each
message and part to a :class:`~.view.Writer`, which gives back the document's text in pieces.
The JSON export is the stored JSON itself, so the service writes it without a writer.
"""

from __future__ import annotations

from .html import Html
from .markdown import Markdown
from .view import PartView, Writer

FORMATS = ("json", "md", "html")
MEDIA_TYPES = {
    "json": "application/json",
    "md": "text/markdown; charset=utf-8",
    "html": "text/html; charset=utf-8",
}
WRITERS: dict[str, type[Writer]] = {"md": Markdown, "html": Html}

__all__ = ["FORMATS", "MEDIA_TYPES", "WRITERS", "Html", "Markdown", "PartView", "Writer"]
