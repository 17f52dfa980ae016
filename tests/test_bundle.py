"""The panel's modules joined into one script at startup (foldline/panel/bundle.py, panel.assets.Bundle)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from foldline.panel.assets import STATIC, Bundle
from foldline.panel.bundle import BundleError, bundle


def write(folder: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return folder


MODULES = {
    "app.js": 'import { twice, name as label } from "./lib/b.js";\nimport Thing from "./vendor/v.js";\n'
    "globalThis.out = [twice(2), label, new Thing().kind];\n",
    "lib/b.js": 'import { el } from "./c.js";\nfunction el2() {}\nexport function twice(n) { return el(n) * 2; }\n'
    'export const name = "b";\n',
    "lib/c.js": "export function el(n) { return n; }\n",
    "vendor/v.js": "class T { constructor() { this.kind = 'v'; } }\nexport { T as default };\n"
    "//# sourceMappingURL=v.mjs.map\n",
}


def test_modules_are_joined_in_evaluation_order_keeping_their_lines(tmp_path: Path) -> None:
    text, names = bundle(write(tmp_path, MODULES))
    assert names == ["lib/c.js", "lib/b.js", "vendor/v.js", "app.js"]
    assert "const { twice, name: label } = $m1;\nconst Thing = $m2.default;\n" in text
    assert "return { twice, name };" in text and "return { default: T };" in text
    assert "export" not in text.replace("// module:", "") and "sourceMappingURL" not in text
    node = shutil.which("node")
    if node:  # it runs, and gives what the modules give
        script = text + "\nconsole.log(JSON.stringify(globalThis.out));"
        out = subprocess.run([node, "--input-type=module", "-e", script], capture_output=True, text=True, check=True)
        assert out.stdout.strip() == '[4,"b","v"]'


@pytest.mark.parametrize(
    "files",
    [
        {"app.js": 'import "./b.js";\n', "b.js": ""},
        {"app.js": 'import * as b from "./b.js";\n', "b.js": ""},
        {"app.js": "export default 1;\n"},
        {"app.js": 'import { a } from "./b.js";\n', "b.js": 'import { c } from "./app.js";\nexport const a = 1;\n'},
        {"app.js": 'import { a } from "./missing.js";\n'},
        {"app.js": 'import { a } from "https://elsewhere.example/a.js";\n'},
    ],
)
def test_a_form_it_does_not_take_is_refused(tmp_path: Path, files: dict[str, str]) -> None:
    with pytest.raises(BundleError):
        bundle(write(tmp_path, files))


def test_the_served_bundle_follows_its_modules_and_falls_back_to_them(tmp_path: Path) -> None:
    folder = write(tmp_path, MODULES)
    served = Bundle(folder)
    first = served.current()
    assert served.current() is first  # built once
    (folder / "lib/c.js").write_text("export function el(n) { return n + 1; }\n")
    again = served.current()
    assert again is not first and b"n + 1" in again.body
    (folder / "lib/c.js").write_text("export default 1;\n")
    assert served.current().body == b'import "/static/app.js";\n'  # the modules load as they are


def test_the_panels_own_modules_bundle() -> None:
    text, names = bundle(STATIC)
    assert names[-1] == "app.js" and "vendor/markdown-it/markdown-it.esm.min.js" in names
    assert len(text) > sum((STATIC / n).stat().st_size for n in names) * 0.99
