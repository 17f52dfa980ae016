"""Who wrote an agent: each log format Foldline imports, by the name its importer stores in
``metadata.source``, and ``api`` for a transcript written through the API.

One table for every layer (the write door's agent facts, the agents list's filter, the OpenAPI
document, the panel's labels); ``tests/test_sources.py`` keeps it equal to the importers' registry
(``foldline.importers.formats``), so a new format is named everywhere by its one line here.
"""

from __future__ import annotations

NAMES = {
    "claude-code": "Claude Code",
    "codex": "Codex",
    "gemini-cli": "Gemini CLI",
    "copilot-cli": "GitHub Copilot CLI",
    "copilot-vscode": "Copilot Chat (VS Code)",
    "cursor": "Cursor",
    "amp": "Amp",
    "aider": "Aider",
    "crush": "Crush",
    "opencode": "opencode",
    "openhands": "OpenHands",
    "continue": "Continue",
    "windsurf": "Windsurf",
    "pi": "pi",
    "droid": "Factory Droid",
    "antigravity": "Google Antigravity",
    "api": "API",
}
SOURCES = tuple(NAMES)
