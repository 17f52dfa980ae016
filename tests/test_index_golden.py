"""An import of the shared real logs stores the same transcripts and gives the same search hits
as the importer before issue 24 (``tests/data/golden/import.json``, written by ``tests/golden.py``
from that importer), whether the search index has caught up or not."""

from __future__ import annotations

from pathlib import Path

import orjson
from golden import SOURCES, snapshot

from foldline.importers import import_paths
from foldline.indexer import Indexer
from foldline.service import Transcripts
from foldline.store import open_store

GOLDEN = Path(__file__).parent / "data" / "golden" / "import.json"


def test_an_import_stores_and_finds_what_the_importer_did_before(db_url: str, tmp_path: Path) -> None:
    url = str(tmp_path / "golden.db") if not db_url.startswith("postgresql") else db_url
    t = Transcripts(open_store(url))
    try:
        account = t.create_account("golden")["id"]
        workspace = t.create_workspace("golden", [account])["id"]
        import_paths(t, SOURCES, account_id=account, workspace_id=workspace)
        expected = orjson.loads(GOLDEN.read_bytes())
        assert snapshot(t, account, workspace) == expected  # the backlog read as it stands
        Indexer(t).catch_up()
        assert snapshot(t, account, workspace) == expected  # and from the engine's index
    finally:
        t.close()
