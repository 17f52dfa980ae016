"""Claude Code tool results: the text the model saw, made whole, and the extras worth keeping.

A ``tool_result`` block holds what the model saw; the line's ``toolUseResult`` holds the
structured result the CLI drew. The output kept is the model's text (a list of blocks when
it held images or tool references), with a ``<persisted-output>`` preview replaced by the
whole output from ``tool-results/<id>.txt`` or from ``toolUseResult``. Small scalar facts of
``toolUseResult`` (agentId, status, exit codes, urls) go to ``toolMetadata``; what repeats the
input or the output (Edit's strings and patch, Read's file) and whole files are not copied.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

Json = dict[str, Any]
PERSISTED = "<persisted-output>"
AGENT_ID = re.compile(r"agentId: ([0-9a-f]+)")
# A failed Bash result starts with its exit status: "Exit code 1\n…" (older versions give none).
BASH_EXIT = re.compile(r"Exit code (-?\d+)(?:\n|$)")
# A tool call id names a file under tool-results/: only a plain name, never a path.
SAFE_CALL_ID = re.compile(r"[A-Za-z0-9_-]{1,128}")
SCALAR_MAX = 300
KEPT_OBJECTS = ("usage", "toolStats")
# Fields that repeat the call's input or the output the model saw (or a whole file): not copied.
REPEATS = {
    "oldString",
    "newString",
    "content",
    "stdout",
    "stderr",
    "prompt",
    "originalFile",
    "structuredPatch",
    "originalFileContents",
    "file",
    "result",
    "results",
    "filenames",
    "edits",
    "oldTodos",
    "newTodos",
}


def block_text(block: Any) -> str | None:
    if isinstance(block, str):
        return block
    if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
        return str(block["text"])
    return None


def image_block(block: Json) -> Json | None:
    """An image block as a content item: Anthropic's (``source: {data, media_type}``) or an MCP
    tool's (``data``, ``mimeType``)."""
    source = block.get("source")
    if isinstance(source, dict) and isinstance(source.get("data"), str):
        media = source.get("media_type") if isinstance(source.get("media_type"), str) else "image/png"
        return {"type": "media", "mediaType": media, "data": source["data"]}
    if isinstance(block.get("data"), str) and block["data"]:
        media = block.get("mimeType") or block.get("mediaType") or block.get("media_type")
        return {"type": "media", "mediaType": media if isinstance(media, str) else "image/png", "data": block["data"]}
    return None


def result_output(content: Any) -> Any:
    """The model's view of a result: a string, or AI SDK content items when it held more than text."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return str(content)
    texts = [block_text(b) for b in content]
    if all(t is not None for t in texts):
        return "\n".join(t for t in texts if t is not None)
    items: list[Json] = []
    for block, text in zip(content, texts, strict=True):
        if text is not None:
            items.append({"type": "text", "text": text})
        elif isinstance(block, dict) and block.get("type") == "image" and image_block(block):
            items.append(image_block(block) or {})
        elif isinstance(block, dict):
            items.append(block)
    return items


def whole_output(output: Any, call_id: str, extra: Any, result_dirs: list[Path]) -> tuple[Any, Json | None]:
    """Replace a persisted-output preview by the whole output, when it can be found; and, when
    only part of it is in the log, the facts that say so (``truncated``, the real size)."""
    if not isinstance(output, str) or not output.lstrip().startswith(PERSISTED):
        return output, None
    for folder in result_dirs if SAFE_CALL_ID.fullmatch(call_id) else []:
        saved = saved_result(folder, call_id)
        if saved is None:
            continue
        try:
            return saved.read_text(encoding="utf-8", errors="replace"), None
        except OSError:
            continue
    found = logged_output(extra)
    size = extra.get("persistedOutputSize") if isinstance(extra, dict) else None
    size = size if isinstance(size, int) and not isinstance(size, bool) and size >= 0 else None
    kept = found if found is not None else output
    if found is not None and (size is None or len(found.encode("utf-8")) >= size):
        return found, None  # the log holds it all (older builds copy the whole stdout)
    cut: Json = {"truncated": True}
    if size is not None:
        cut["persistedOutputSize"] = size
    return kept, cut


def logged_output(extra: Any) -> str | None:
    """The output ``toolUseResult`` holds (Claude Code caps a Bash ``stdout`` there)."""
    if not isinstance(extra, dict):
        return None
    stdout, stderr = extra.get("stdout"), extra.get("stderr")
    if isinstance(stdout, str) and stdout:
        return stdout + ("\n" + stderr if isinstance(stderr, str) and stderr else "")
    file = extra.get("file")
    if isinstance(file, dict) and isinstance(file.get("content"), str):
        return str(file["content"])
    if isinstance(extra.get("content"), str):
        return str(extra["content"])
    return None


def saved_result(folder: Path, call_id: str) -> Path | None:
    """``folder/<call_id>.txt``, only if it resolves inside ``folder`` (a symlink may point anywhere)."""
    try:
        root = folder.resolve()
        saved = (folder / f"{call_id}.txt").resolve()
    except (OSError, RuntimeError):
        return None
    return saved if saved.is_relative_to(root) and saved != root else None


def tool_metadata(extra: Any) -> Json | None:
    """The small facts of a ``toolUseResult`` worth keeping beside the output."""
    if not isinstance(extra, dict):
        return None
    kept: Json = {}
    for key, value in extra.items():
        if key in REPEATS:
            continue
        if isinstance(value, bool | int | float) or (isinstance(value, str) and len(value) <= SCALAR_MAX):
            kept[key] = value
        elif key in KEPT_OBJECTS and isinstance(value, dict | list):
            kept[key] = value
    # A Write over an existing file: its input holds only the new text, so the patch is the one
    # place that says what changed (the panel draws it as a diff). An Edit's patch repeats its input.
    patch = extra.get("structuredPatch")
    if extra.get("type") == "update" and isinstance(extra.get("content"), str) and isinstance(patch, list) and patch:
        kept["structuredPatch"] = patch
    return kept or None


def bash_exit_code(output: Any) -> int | None:
    """The exit status a Bash result starts with, if it gives one."""
    found = BASH_EXIT.match(output) if isinstance(output, str) else None
    return int(found.group(1)) if found else None


def agent_link(content: Any, extra: Any) -> str | None:
    """The id of the subagent a Task/Agent call started, from its result."""
    if isinstance(extra, dict) and isinstance(extra.get("agentId"), str):
        return str(extra["agentId"])
    text = result_output(content)
    if isinstance(text, str):
        found = AGENT_ID.search(text)
        if found:
            return found.group(1)
    return None
