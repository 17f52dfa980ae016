"""The panel's modules joined into one script when the app starts: no build step.

The panel is written as plain ES modules (``static/``), which a developer edits and a browser
could load as they are; but a first view that loads thirteen of them pays a request and a
module record for each. :func:`bundle` walks the imports from ``app.js`` and writes each module,
in the order a browser would evaluate them, as a function whose ``return`` is its exports:

    const $2 = (() => {
    const { el } = $1;                 // was: import { el } from "./parts.js";
    function typing(target) { … }      // was: export function typing(target) { … }
    return { typing };
    })();

Only the forms the panel uses are accepted: ``import { a, b as c } from "./x.js"``, ``import X
from "./x.js"``, ``export function|async function|class|const|let NAME`` and ``export { a as b }``;
anything else (an import cycle, ``export default``, ``import *``, an import from elsewhere)
raises :class:`BundleError`, and the panel loads its modules one by one instead. Each module
keeps its own lines (an import becomes one ``const`` on the same lines), so a line in an error's
stack is found in the module under the ``// module: NAME`` comment above it.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from pathlib import Path

IMPORT = re.compile(r'^import\s+(?:\{([^}]*)\}|([A-Za-z_$][\w$]*))\s+from\s+"(\./[^"]+)";?[ \t]*$', re.M)
EXPORT_DECL = re.compile(r"^export\s+((?:async\s+)?function\*?|class|const|let)\s+([A-Za-z_$][\w$]*)", re.M)
EXPORT_LIST = re.compile(r"^export\s*\{([^}]*)\};?[ \t]*$", re.M)
LEFT = re.compile(r"^\s*(?:import|export)\b", re.M)  # an import or export no rule above took
NAME = re.compile(r"[A-Za-z_$][\w$]*")
SOURCE_MAP = re.compile(r"^//# sourceMappingURL=.*$", re.M)  # a vendored file's: no map for the bundle


class BundleError(ValueError):
    """A module in a form the bundler does not take (the panel then loads its modules as they are)."""


@dataclass
class Module:
    name: str  # its path under static/, "parts.js"
    source: str
    imports: list[str] = field(default_factory=list)  # the modules it imports, in order
    exports: dict[str, str] = field(default_factory=dict)  # exported name -> its local name


def _pairs(names: str, where: str) -> list[tuple[str, str]]:
    """``a, b as c`` -> [("a", "a"), ("b", "c")]."""
    pairs = []
    for item in filter(None, (n.strip() for n in names.split(","))):
        words = item.split()
        if len(words) == 1 and NAME.fullmatch(words[0]):
            pairs.append((words[0], words[0]))
        elif len(words) == 3 and words[1] == "as" and all(NAME.fullmatch(w) for w in (words[0], words[2])):
            pairs.append((words[0], words[2]))
        else:
            raise BundleError(f"{where}: cannot read {item!r}")
    return pairs


def _resolve(importer: str, spec: str) -> str:
    return posixpath.normpath(posixpath.join(posixpath.dirname(importer), spec))


def _rewrite_imports(module: Module, var: dict[str, str]) -> str:
    def one(found: re.Match[str]) -> str:
        names, default, spec = found.groups()
        target = var[_resolve(module.name, spec)]
        lines = found.group(0).count("\n")
        if default:
            code = f"const {default} = {target}.default;"
        else:
            binds = ", ".join(a if a == b else f"{a}: {b}" for a, b in _pairs(names, module.name))
            code = f"const {{ {binds} }} = {target};"
        return code + "\n" * lines  # the module keeps its own line numbers

    return IMPORT.sub(one, module.source)


def _rewrite_exports(module: Module, source: str) -> str:
    def declaration(found: re.Match[str]) -> str:
        module.exports[found.group(2)] = found.group(2)
        return found.group(1) + " " + found.group(2)

    def listing(found: re.Match[str]) -> str:
        for local, exported in _pairs(found.group(1), module.name):
            module.exports[exported] = local
        return ""

    source = EXPORT_LIST.sub(listing, EXPORT_DECL.sub(declaration, SOURCE_MAP.sub("", source)))
    left = LEFT.search(source)
    if left:
        line = source[left.start() : source.find("\n", left.start())].strip()
        raise BundleError(f"{module.name}: cannot bundle {line[:80]!r}")
    return source


def read_modules(static: Path, entry: str) -> list[Module]:
    """``entry`` and every module it imports, in evaluation order (each after what it imports)."""
    done: dict[str, Module] = {}
    path: list[str] = []

    def visit(name: str) -> None:
        if name in done:
            return
        if name in path:
            raise BundleError("an import cycle: " + " -> ".join([*path, name]))
        file = static / name
        if not file.is_file() or ".." in name.split("/"):
            raise BundleError(f"no module {name}")
        module = Module(name, file.read_text(encoding="utf-8"))
        path.append(name)
        for found in IMPORT.finditer(module.source):
            module.imports.append(_resolve(name, found.group(3)))
            visit(module.imports[-1])
        path.pop()
        done[name] = module

    visit(entry)
    return list(done.values())


def bundle(static: Path, entry: str = "app.js") -> tuple[str, list[str]]:
    """One module's text for ``entry`` and all it imports, and the names of the modules in it."""
    modules = read_modules(static, entry)
    var = {m.name: f"$m{i}" for i, m in enumerate(modules)}
    out = ["// The panel's modules in one script, joined by foldline/panel/bundle.py when the app started.\n"]
    for module in modules:
        body = _rewrite_exports(module, _rewrite_imports(module, var))
        exports = ", ".join(k if k == v else f"{k}: {v}" for k, v in module.exports.items())
        last = module is modules[-1]
        opening = "(() => {\n" if last else f"const {var[module.name]} = (() => {{\n"
        out.append(f"// module: {module.name}\n{opening}{body.rstrip()}\n")
        out.append("})();\n" if last else f"return {{ {exports} }};\n}})();\n")
    return "".join(out), [m.name for m in modules]
