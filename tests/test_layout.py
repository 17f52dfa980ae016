"""The code's layout, kept by tests: one way into the service, shape modules that load no storage,
no import circle in the store."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src" / "foldline"


def test_nothing_but_the_service_reaches_the_store() -> None:
    """``Transcripts`` is the only way in: no module outside the service and the store packages touches a store."""
    side_doors = []
    for path in SRC.rglob("*.py"):
        if path.relative_to(SRC).parts[0] in ("service", "store"):
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if re.search(r"\._?store\b(?!\w)\.?", line) and not line.lstrip().startswith(("from", "import", "#")):
                side_doors.append(f"{path.relative_to(SRC)}:{number}: {line.strip()}")
    assert side_doors == []


def test_the_message_shape_loads_no_storage() -> None:
    """The shape modules (message, cut, registry) and the client import without SQLAlchemy."""
    code = (
        "import sys, foldline, foldline.message, foldline.cut, foldline.registry, foldline.client;"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('sqlalchemy', 'psycopg', 'fastapi')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def store_imports() -> dict[str, set[str]]:
    """Each module of the store and the modules of the store it imports (anywhere in it)."""
    graph: dict[str, set[str]] = {}
    for path in (SRC / "store").glob("*.py"):
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                found |= {node.module} if node.module else {alias.name for alias in node.names}
        graph[path.stem] = {name.split(".")[0] for name in found}
    return graph


def test_no_import_in_the_store_runs_in_a_circle() -> None:
    """The store's modules import one another from the bottom up: the errors are a leaf, and the
    package (``__init__``) is imported by none of its modules."""
    graph = store_imports()
    assert graph["errors"] == set()
    circles = []

    def visit(module: str, path: list[str]) -> None:
        for name in sorted(graph.get(module, set())):
            if name in path:
                circles.append(" -> ".join([*path[path.index(name) :], name]))
            else:
                visit(name, [*path, name])

    for module in sorted(graph):
        visit(module, [module])
    assert circles == []
    assert not any("__init__" in names for names in graph.values())
