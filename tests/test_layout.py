"""The code's layout, kept by tests: one way into the service, shape modules that load no storage."""

from __future__ import annotations

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
