"""The HTML export: one self-contained file that opens offline with the panel's look and folds.

The panel's own stylesheet is inlined (no script, no external style, font or image: a
Content-Security-Policy says so to the browser, which then fetches nothing); folds are
``<details>``, so they open without script; every text from the transcript is escaped, and a
redaction marker is drawn as the panel draws it. Images sent inline (``data:`` URLs of PNG, JPEG,
GIF or WebP) are shown; any other URL is text, never a link or a source."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator
from importlib import resources
from typing import Any

from .text import escaped, one_line
from .view import PartView

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
IMAGE_URL = re.compile(r"data:image/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/=]*\Z")
EXTRA_CSS = """
.export-head { margin: 16px 0 12px; }
.export-head h1 { font-size: 20px; margin: 0 0 4px; overflow-wrap: anywhere; }
.part.text .export-text, .thought-text { white-space: pre-wrap; overflow-wrap: anywhere; }
.fold-body pre.out { white-space: pre-wrap; overflow-wrap: anywhere; }
.fold.subagent > .fold-body { border-left: 2px solid var(--line); padding-left: 8px; }
"""
STATES = {
    "input-streaming": "writing input…",
    "input-available": "running",
    "approval-requested": "waiting for approval",
    "approval-responded": "answered",
    "output-available": "done",
    "output-error": "error",
    "output-denied": "denied",
}
FIELDS = (("input", "Input", "field input"), ("output", "Output", "field"), ("errorText", "Error", "field error"))


def stylesheet() -> str:
    return (resources.files("foldline") / "static" / "panel.css").read_text(encoding="utf-8") + EXTRA_CSS


def esc(text: str) -> str:
    return next(escaped((text,)), "")


def short(value: Any, most: int = 120) -> str:
    if isinstance(value, dict):
        for key in ("command", "file_path", "path", "pattern", "query", "url", "description"):
            if isinstance(value.get(key), str):
                return one_line(value[key], most)
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return one_line(text, most)


class Html:
    def __init__(self) -> None:
        self.open_message = False

    def begin(self, title: str, agent: dict[str, Any]) -> Iterator[str]:
        name = one_line(title) or "Transcript"
        yield (
            '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{html.escape(name)}</title><style>{stylesheet()}</style></head>\n<body><main>"
            f'<header class="export-head"><h1>{esc(name)}</h1><p class="muted">Agent '
            f"<code>{esc(str(agent.get('id', '')))}</code>, exported whole by Foldline.</p></header>\n"
            '<div class="messages">\n'
        )

    def message(self, role: str, created_at: str | None) -> Iterator[str]:
        kind = re.sub(r"[^a-z-]", "", role.lower()) or "message"
        when = esc(created_at[11:16]) if created_at and len(created_at) >= 16 else ""
        title = f' title="{html.escape(created_at)}"' if created_at else ""
        yield (
            f'<div class="msg role-{kind}"><div class="msg-gutter"><span class="msg-time"{title}>{when}</span></div>'
            f'<div class="msg-body"><div class="msg-head"><span class="role">{esc(role.capitalize())}</span></div>\n'
        )

    def part(self, view: PartView) -> Iterator[str]:
        name, kind, part = view.tool, view.kind, view.part
        if name is not None:
            state = str(part.get("state", ""))
            badge = re.sub(r"[^a-z-]", "", state)
            yield (
                f'<details class="fold tool"><summary><span class="tool-name">{esc(name)}</span>'
                f'<span class="tool-input">{esc(short(part.get("input", "")))}</span>'
                f'<span class="badge state-{badge}">{esc(STATES.get(state, state))}</span></summary>'
                '<div class="fold-body">'
            )
            for field, label, css in FIELDS:
                if view.has(field):
                    yield f'<section class="{css}"><div class="field-head"><span class="label">{label}</span></div>'
                    yield '<pre class="out">'
                    yield from escaped(view.text(field)())
                    yield "</pre></section>"
            yield "</div></details>\n"
        elif kind == "text":
            yield '<div class="part text"><div class="md export-text">'
            yield from escaped(view.text("text")())
            yield "</div></div>\n"
        elif kind == "reasoning":
            yield (
                '<details class="fold reasoning"><summary><span class="kind">Thought</span>'
                f'<span class="preview">{esc(one_line(view.head("text", 400), 120))}</span></summary>'
                '<div class="fold-body"><div class="thought-text">'
            )
            yield from escaped(view.text("text")())
            yield "</div></div></details>\n"
        elif kind == "step-start":
            return
        elif kind in ("file", "reasoning-file"):
            yield from self.file(view)
        else:
            yield (
                f'<details class="fold"><summary><span class="kind">{esc(kind or "part")}</span></summary>'
                '<div class="fold-body"><pre class="out">'
            )
            yield esc(json.dumps(part, indent=2, ensure_ascii=False))
            yield "</pre></div></details>\n"

    def file(self, view: PartView) -> Iterator[str]:
        part = view.part
        url = part.get("url")
        label = f"{part.get('filename') or 'file'} ({part.get('mediaType', '')})"
        yield f'<div class="part file"><div class="file-ref"><span>{esc(label)}</span>'
        if isinstance(url, str) and IMAGE_URL.match(url):
            alt, src = html.escape(label), html.escape(url)  # attributes: escaped, never marked
            yield f'<figure class="tool-image"><img class="file-image" alt="{alt}" src="{src}"></figure>'
        elif isinstance(url, str) and not url.startswith("data:"):
            yield f" <code>{esc(url)}</code>"
        elif "url" in view.omitted or isinstance(url, str):
            yield ' <span class="muted">(sent inline; it is in the JSON export)</span>'
        yield "</div></div>\n"

    def end_message(self) -> Iterator[str]:
        yield "</div></div>\n"

    def subagent(self, label: str) -> Iterator[str]:
        yield (
            '<details class="fold subagent"><summary><span class="kind">Subagent</span>'
            f'<span class="preview">{esc(one_line(label))}</span></summary>'
            '<div class="fold-body"><div class="messages">\n'
        )

    def end_subagent(self) -> Iterator[str]:
        yield "</div></div></details>\n"

    def end(self) -> Iterator[str]:
        yield "</div></main></body></html>\n"
