"""Write src/foldline/store/trigrams.json: how often each trigram occurs in real agent logs
(run: .venv/bin/python scripts/trigram_prior.py).

The logs are the project's test transcripts (tests/data/transcripts, real sessions of 16 agents;
SOURCES.md says whose). They are imported into a fresh SQLite store as ``foldline import`` does,
and the searchable text of every chunk is read back (each code point once: a chunk's ``owned``
part, not the overlap it shares with the next), folded as FTS5 folds it: for each trigram, the
times it occurs. A search asks the index for a term's rarest trigrams by these counts
(:func:`foldline.store.terms.probes`). A trigram that occurs fewer than ``KEEP`` times is left
out: one the file does not name is taken as rarer than any it does.

The counts are kept by their power of two (a trigram seen 40 times is filed under 32): what a
search needs is which trigrams are rarer and about how much, and it keeps the file small.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

from foldline.store.fold import FOLD
from foldline.store.terms import TRIGRAM

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "transcripts"
OUT = ROOT / "src" / "foldline" / "store" / "trigrams.json"
KEEP = 4  # occurrences: a trigram seen fewer times is not named (it is rare)


def occurrences(db: Path) -> tuple[int, Counter[str]]:
    """The code points of the store's searchable text, and how often each trigram starts in it."""
    conn = sqlite3.connect(db)
    counts: Counter[str] = Counter()
    total = 0
    try:
        for text, owned in conn.execute("SELECT text, owned FROM part_text"):
            folded = text.translate(FOLD)
            starts = min(owned, len(folded) - TRIGRAM + 1)
            counts.update(folded[i : i + TRIGRAM] for i in range(starts))
            total += max(starts, 0)
    finally:
        conn.close()
    return total, counts


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "prior.db"
        env = {"HOME": tmp, "PATH": "", "FOLDLINE_IMPORT_WORKERS": "1"}
        foldline = str(Path(sys.executable).parent / "foldline")
        command = [foldline, "import", "--json", "--db", str(db), str(DATA)]
        subprocess.run(command, check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        total, counts = occurrences(db)
    by_power: dict[int, list[str]] = defaultdict(list)
    for gram, n in counts.items():
        if n >= KEEP:
            by_power[n.bit_length() - 1].append(gram)
    prior = {
        "about": "occurrences of each trigram in the test transcripts, by its power of two: scripts/trigram_prior.py",
        "code_points": total,
        "at_least": {str(1 << power): "".join(sorted(grams)) for power, grams in sorted(by_power.items())},
    }
    OUT.write_text(json.dumps(prior, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    named = sum(len(grams) for grams in by_power.values())
    print(f"{OUT.relative_to(ROOT)}: {named:,} trigrams named, of {len(counts):,} in {total:,} code points")


if __name__ == "__main__":
    main()
