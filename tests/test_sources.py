"""One table of sources for every layer: the importers' registry, foldline.sources and the panel's labels agree."""

from __future__ import annotations

import re
from pathlib import Path

import foldline
from foldline import sources
from foldline.importers.formats import registered

APP_JS = Path(foldline.__file__).parent / "static" / "app.js"


def test_every_format_is_a_source_with_its_label() -> None:
    assert {f.name: f.label for f in registered()} == {k: v for k, v in sources.NAMES.items() if k != "api"}


def test_the_panel_names_every_source_as_the_table_does() -> None:
    block = re.search(r"const SOURCES = \{(.*?)\};", APP_JS.read_text(), re.S)
    assert block is not None
    pairs = re.findall(r'^\s*"?([\w-]+)"?: "([^"]*)",', block.group(1), re.M)
    assert dict(pairs) == sources.NAMES
