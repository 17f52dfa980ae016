"""docs/import.md's table of default locations, kept equal to the importers' ``locations()``.

For each registered format and each system (``sys.platform`` set to it, ``HOME`` and the system's
folders pointed into a temporary folder, the agents' own variables unset):

- every folder ``locations()`` returns, written as the table writes it (``~/…``, ``%APPDATA%\\…``),
  is a path of its row's cell for that system (``<name>`` stands for one folder, a trailing ``…``
  for the rest), or a folder above one;
- every ``~`` or ``%…%`` path in the cell lies under one of them (or above: what a variable replaces);
- each ``$VARIABLE`` the cell says replaces a folder moves those locations there;
- a format without locations says it is "imported by naming it".
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from foldline.importers.formats import Format, registered

DOC = Path(__file__).parent.parent / "docs" / "import.md"
SYSTEMS = {"linux": 1, "darwin": 2, "win32": 3}  # the table's column of each system
WINDOWS_DIRS = ("APPDATA", "LOCALAPPDATA")
AGENT_VARIABLES = (
    "CLAUDE_CONFIG_DIR", "CODEX_HOME", "CONTINUE_GLOBAL_DIR", "XDG_DATA_HOME", "XDG_CONFIG_HOME",
    "CURSOR_CONFIG_DIR", "FACTORY_HOME", "GEMINI_CLI_HOME", "COPILOT_HOME", "PI_CODING_AGENT_DIR",
)  # fmt: skip


def table() -> dict[str, list[str]]:
    """The table's rows: agent label to its cells (Linux, macOS, Windows; "same" filled in)."""
    text = DOC.read_text()
    start = text.index("| agent | Linux | macOS | Windows |")
    rows: dict[str, list[str]] = {}
    for line in text[start:].split("\n\n", 1)[0].splitlines()[2:]:
        cells = [c.strip() for c in line.strip("|").split(" | ")]
        assert len(cells) == 4, line
        label, linux, mac, windows = cells
        mac = linux if mac == "same" else mac
        rows[label] = [linux, mac, linux if windows == "same" else windows]
    return rows


def patterns(cell: str) -> list[list[str]]:
    """The ``~`` and ``%…%`` paths of a cell, each as its folders (``\\`` read as ``/``, no trailing ``/``)."""
    found = []
    for span in re.findall(r"`([^`]+)`", cell):
        if span.startswith(("~", "%")) and "/" in span.replace("\\", "/"):
            found.append(span.replace("\\", "/").rstrip("/").split("/"))
    return found


def matches(pattern: list[str], path: list[str]) -> bool:
    """Whether ``path`` is what ``pattern`` names, or a folder above it (``<x>`` is any one
    folder, ``…`` any rest)."""
    for i, name in enumerate(path):
        if i >= len(pattern):
            return False
        want = pattern[i]
        if want == "…":
            return True
        if not (want == name or (want.startswith("<") and want.endswith(">"))):
            return False
    return True


def written(path: Path, home: Path, system: str) -> list[str]:
    """A location as the table writes it: from ``~``, or on Windows from its ``%FOLDER%``."""
    for name in WINDOWS_DIRS if system == "win32" else ():
        base = home / f"_{name}"
        if path.is_relative_to(base):
            return [f"%{name}%", *path.relative_to(base).parts]
    assert path.is_relative_to(home), f"{path} is not under the home folder"
    return ["~", *path.relative_to(home).parts]


def system_locations(fmt: Format, system: str, home: Path, monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    monkeypatch.setattr(sys, "platform", system)
    return fmt.locations()


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("USERPROFILE", str(tmp_path))
    for name in AGENT_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    for name in WINDOWS_DIRS:
        monkeypatch.setenv(name, str(tmp_path / f"_{name}"))
    # a VS Code workspace folder with chats, so its glob has one to return on each system
    bases = (".config", "Library/Application Support", "_APPDATA", "elsewhere")  # elsewhere: $XDG_CONFIG_HOME moved
    for base in (tmp_path / b for b in bases):
        (base / "Code" / "User" / "workspaceStorage" / "0a1b2c" / "chatSessions").mkdir(parents=True)
    return tmp_path


def test_every_agent_has_one_row() -> None:
    assert sorted(table()) == sorted(f.label for f in registered())


@pytest.mark.parametrize("system", list(SYSTEMS))
@pytest.mark.parametrize("fmt", registered(), ids=lambda f: f.name)
def test_the_table_names_the_locations(fmt: Format, system: str, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cell = table()[fmt.label][SYSTEMS[system] - 1]
    found = [written(p, home, system) for p in system_locations(fmt, system, home, monkeypatch)]
    if not found:
        assert "imported by naming it" in cell
        return
    named = patterns(cell)
    assert named, f"{fmt.label} on {system}: the cell names no path"
    for path in found:
        assert any(matches(p, path) for p in named), f"{fmt.label} on {system}: {'/'.join(path)} is not in the table"
    for pattern in named:  # a path in the cell: under a location, or the folder a variable replaces
        assert any(matches(pattern, path) or matches(path, pattern) for path in found), (
            f"{fmt.label} on {system}: {'/'.join(pattern)} is under none of {[str(p) for p in found]}"
        )


@pytest.mark.parametrize("fmt", registered(), ids=lambda f: f.name)
def test_each_variable_the_table_names_moves_the_locations(
    fmt: Format, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cell = table()[fmt.label][0]
    for variable, replaced in re.findall(r"`\$([A-Z_]+)` replaces `([^`]+)`", cell):
        default = system_locations(fmt, "linux", home, monkeypatch)
        moved = home / "elsewhere"
        monkeypatch.setenv(variable, str(moved))
        base = home.joinpath(*Path(replaced).parts[1:])
        assert default and all(p.is_relative_to(base) for p in default)
        now = fmt.locations()
        assert now == [moved / p.relative_to(base) for p in default], f"${variable} does not move {fmt.label}"
        monkeypatch.delenv(variable)
