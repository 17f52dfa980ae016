"""The tool registry: what the service knows of each tool.

A registry is a JSON file (the default one ships as ``registry.json`` beside this module;
the ``FOLDLINE_REGISTRY`` setting points at a file of your own). For every tool it holds
the input and output JSON Schemas the write door checks, whether the panel draws its output
as text (only such outputs are cut), and whether it is retired (its parts are dropped on read).
``dynamic_text_prefixes`` marks families of dynamic tools (MCP servers, connections) as text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import orjson


@dataclass(frozen=True, slots=True)
class TextTools:
    """Which parts a cut read sends cut: those with no tool (thoughts, files), the tools in
    ``names``, and tools named with one of ``prefixes`` unless registered as not text (``others``)."""

    names: frozenset[str]
    prefixes: tuple[str, ...] = ()
    others: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Tool:
    name: str
    text: bool = False
    retired: bool = False
    input: dict[str, Any] | None = None
    output: dict[str, Any] | None = None

    @cached_property
    def input_validator(self) -> Any:
        return _validator(self.input)

    @cached_property
    def output_validator(self) -> Any:
        return _validator(self.output)


def _validator(schema: dict[str, Any] | None) -> Any:
    if schema is None:
        return None
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    cls.check_schema(schema)
    return cls(schema)


@dataclass(frozen=True)
class Registry:
    tools: dict[str, Tool]
    dynamic_text_prefixes: tuple[str, ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Registry:
        tools = {
            name: Tool(
                name=name,
                text=bool(spec.get("text", False)),
                retired=bool(spec.get("retired", False)),
                input=spec.get("input"),
                output=spec.get("output"),
            )
            for name, spec in data.get("tools", {}).items()
        }
        return cls(tools, tuple(data.get("dynamic_text_prefixes", ())), data.get("metadata", {}))

    @classmethod
    def load(cls, path: str | Path | None = None) -> Registry:
        """The registry in ``path``, or the default one."""
        if path is None:
            raw = resources.files("foldline").joinpath("registry.json").read_bytes()
        else:
            raw = Path(path).read_bytes()
        return cls.from_dict(orjson.loads(raw))

    def tool(self, name: str) -> Tool | None:
        return self.tools.get(name)

    @cached_property
    def text_tools(self) -> TextTools:
        """The tools whose parts a cut read sends cut, as the store takes them."""
        names = frozenset(name for name, tool in self.tools.items() if tool.text)
        return TextTools(names, self.dynamic_text_prefixes, frozenset(self.tools) - names)

    def retired(self, name: str) -> bool:
        tool = self.tools.get(name)
        return tool is not None and tool.retired

    @cached_property
    def metadata_validators(self) -> dict[str, Any]:
        return {role: _validator(schema) for role, schema in self.metadata.items()}
