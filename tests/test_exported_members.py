"""The public surface of ``import foldline`` is exactly this list, as httpx pins its own."""

from __future__ import annotations

from types import ModuleType

import foldline

EXPORTED = [
    "BadRequest",
    "Client",
    "Conflict",
    "FoldlineError",
    "Forbidden",
    "InsufficientStorage",
    "Invalid",
    "NotFound",
    "PayloadTooLarge",
    "TooManyRequests",
    "TransportError",
    "Unauthorized",
    "Unavailable",
    "__version__",
]


def test_the_exported_names_are_exactly_these_sorted() -> None:
    assert foldline.__all__ == EXPORTED
    assert EXPORTED == sorted(EXPORTED)


def test_every_public_name_of_the_package_is_exported() -> None:
    """Nothing public reaches ``foldline`` without being listed (submodules aside); the client,
    loaded on first use, is there once asked for."""
    for name in EXPORTED:
        getattr(foldline, name)
    public = [
        name for name, value in vars(foldline).items()
        if (not name.startswith("_") or name == "__version__") and not isinstance(value, ModuleType)
    ]
    assert sorted(public) == EXPORTED


def test_every_exported_name_imports() -> None:
    scope: dict[str, object] = {}
    exec("from foldline import *", scope)
    assert {name for name in scope if name != "__builtins__"} == set(EXPORTED)
    for name in EXPORTED:
        assert getattr(foldline, name) is scope[name]
        if name != "__version__":
            assert getattr(scope[name], "__module__", "").startswith("foldline."), name
