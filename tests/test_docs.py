"""The docs are kept honest: generated parts match, and everything a user can call is documented."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import orjson
from conftest import World

from foldline import routes

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
    for route in routes.router.routes:
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


def test_the_readme_python_example_runs(world: World) -> None:
    readme = (ROOT / "README.md").read_text()
    example = readme.split("```python", 1)[1].split("```", 1)[0]
    example = example.replace("http://127.0.0.1:8765", world.url).replace("fl_...", world.alice_token)
    scope = {"workspace_id": world.workspace, "huge_log": "PASSED test_cut\n" * 20_000}
    exec(compile(example, "README.md", "exec"), scope)
    assert len(orjson.dumps(scope["page"])) < 20_000, "the example's page weighs kilobytes"
    assert scope["whole"]["output"] == scope["huge_log"]
