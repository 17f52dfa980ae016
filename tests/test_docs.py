"""The docs are kept honest: generated parts match, and everything a user can call is documented."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import orjson
import pytest
from conftest import World

from foldline import routes, shares

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def load_cli_docs() -> object:
    spec = importlib.util.spec_from_file_location("cli_docs", ROOT / "scripts" / "cli_docs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_cli_reference_is_generated_from_help() -> None:
    render = load_cli_docs().render  # type: ignore[attr-defined]
    assert (DOCS / "cli.md").read_text() == render(), "run: .venv/bin/python scripts/cli_docs.py"


def test_every_route_is_in_the_api_docs() -> None:
    text = (DOCS / "api.md").read_text()
    for route in [*routes.router.routes, *shares.router.routes]:
        path = getattr(route, "path", "")
        short = path.replace("/api/agents/{agent}/subagents/{call}", "").replace("/api/agents/{agent}", "")
        if "/subagents/" in path:
            assert "/subagents/{call}/" in text
        assert (short or path) in text, f"{path} is not documented in docs/api.md"


def test_every_setting_is_documented() -> None:
    settings = (ROOT / "src" / "foldline" / "settings.py").read_text()
    documented = " ".join(p.read_text() for p in DOCS.glob("*.md"))
    for name in set(re.findall(r"FOLDLINE_[A-Z_]+", settings)):
        assert name in documented, f"{name} is not documented"


def test_readme_starts_with_the_two_commands() -> None:
    readme = (ROOT / "README.md").read_text()
    first_block = readme.split("```sh", 1)[1].split("```", 1)[0]
    assert "scripts/serve" in first_block and "scripts/test" in first_block
    assert (ROOT / ".ci" / "run").read_text().strip().endswith("exec scripts/test")


def readme_python() -> str:
    readme = (ROOT / "README.md").read_text()
    return readme.split("```python", 1)[1].split("```", 1)[0]


def test_the_readme_python_example_runs_verbatim(
    world: World, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """As written, against a real server: the address and the token come from the environment,
    as the README says; nothing is added to the example's names."""
    monkeypatch.setenv("FOLDLINE_URL", world.url)
    monkeypatch.setenv("FOLDLINE_TOKEN", world.alice_token)
    scope: dict[str, object] = {"__name__": "__main__"}
    exec(compile(readme_python(), "README.md", "exec"), scope)
    assert len(orjson.dumps(scope["page"])) < 20_000, "the example's page weighs kilobytes"
    assert scope["whole"]["output"] == scope["huge_log"]  # type: ignore[index]
    assert "the page: " in capsys.readouterr().out


def test_the_tree_in_architecture_is_the_tree_on_disk() -> None:
    """Every module and package of foldline is named in docs/architecture.md's tree."""
    text = (DOCS / "architecture.md").read_text()
    tree = text[text.index("```\nsrc/foldline/") : text.index("```", text.index("```\nsrc/foldline/") + 3)]
    package = ROOT / "src" / "foldline"
    missing = []
    for path in sorted(package.rglob("*.py")):
        if path.name == "__init__.py" or "samples" in path.parts:
            continue
        name = path.relative_to(package)
        if len(name.parts) > 1 and name.parts[0] in ("cli", "importers"):  # a module per command / format
            continue
        if not re.search(rf"(?<![\w/]){re.escape(name.name)}", tree) and str(name) not in tree:
            missing.append(str(name))
    assert missing == [], f"docs/architecture.md's tree misses {missing}"
