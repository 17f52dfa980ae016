"""Make ``src/foldline/static/vendor/prism/prism.js`` from the ``prismjs`` npm package.

    cd "$(mktemp -d)" && npm pack prismjs@1.30.0 && tar xzf prismjs-1.30.0.tgz
    .venv/bin/python scripts/vendor_prism.py PATH/TO/package

Prism's core and the languages below are joined unmodified, in the order they need each other,
under a header naming the version and licence, with one line added at the end
(``export default Prism;``) so the panel can load the file with ``import()`` when code is first
shown. The package's ``LICENSE`` is copied beside it.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

# Each after the ones it needs (components.json's "require").
LANGUAGES = [
    "markup", "css", "clike", "javascript", "typescript", "jsx", "tsx", "python", "bash", "json", "yaml",
    "diff", "go", "rust", "java", "c", "cpp", "csharp", "kotlin", "swift", "ruby", "sql", "toml", "ini",
    "docker", "markdown",
]  # fmt: skip
OUT = Path(__file__).resolve().parents[1] / "src" / "foldline" / "static" / "vendor" / "prism"


def main(package: Path) -> None:
    version = json.loads((package / "package.json").read_text())["version"]
    parts = [
        f"/*! Prism {version} (prismjs on npm), MIT licence, Copyright (c) 2012 Lea Verou; the licence's\n"
        " * text is LICENSE beside this file. components/prism-core.min.js and the languages\n"
        f" * {', '.join(LANGUAGES)}\n"
        " * joined unmodified by scripts/vendor_prism.py, which adds only the last line. */\n"
    ]
    for name in ["core", *LANGUAGES]:
        source = (package / "components" / f"prism-{name}.min.js").read_text(encoding="utf-8")
        parts.append(f"// prism-{name}.min.js\n{source.strip()}\n")
    parts.append("export default Prism;\n")
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "prism.js").write_text("".join(parts), encoding="utf-8")
    shutil.copyfile(package / "LICENSE", OUT / "LICENSE")
    print(f"wrote {OUT / 'prism.js'}: Prism {version}, {len(LANGUAGES)} languages")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    main(Path(sys.argv[1]))
