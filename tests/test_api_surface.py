"""The API's surface: every route in the OpenAPI document, one error shape, a sorted public names list."""

from __future__ import annotations

from typing import Any

import httpx
from conftest import World
from core_helpers import new_id

import foldline
from foldline import errors
from foldline.routes import router


def test_every_route_is_in_the_openapi_document(world: World) -> None:
    document = world.http.get("/api/openapi.json").json()
    documented = {(path, method.upper()) for path, ops in document["paths"].items() for method in ops}
    routes = {(route.path, method) for route in router.routes for method in route.methods}  # type: ignore[attr-defined]
    assert routes <= documented
    assert len(routes) >= 14
    put = document["paths"]["/api/agents/{agent}/messages/{message}"]["put"]
    assert "requestBody" in put


def error_responses(world: World) -> list[httpx.Response]:
    auth = {"Authorization": f"Bearer {world.alice_token}"}
    a = f"/api/agents/{world.agent}"
    return [
        world.http.get("/api/me"),  # 401
        world.http.get(f"{a}/messages", params={"limit": "x"}, headers=auth),  # 400
        world.http.get("/api/agents", headers=auth),  # 400, no workspace_id
        world.http.get(f"{a}/nothing-here", headers=auth),  # 404
        world.http.put(f"{a}/messages/{new_id()}", json={"role": "user", "parts": []}, headers=auth),  # 422
        world.http.put(f"{a}/messages/{new_id()}", content=b"{", headers=auth),  # 400
        world.http.delete(a, headers=auth),  # 405
        world.http.post(f"{a}/messages", headers=auth),  # 405
    ]


def test_every_error_body_has_the_one_shape(world: World) -> None:
    statuses = []
    for response in error_responses(world):
        body: Any = response.json()
        statuses.append(response.status_code)
        assert set(body) == {"error"}, body
        assert set(body["error"]) <= {"code", "message", "where"} and {"code", "message"} <= set(body["error"])
        assert all(isinstance(v, str) for v in body["error"].values())
    assert statuses == [401, 400, 400, 404, 422, 400, 405, 405]


def test_the_public_names_are_sorted_and_complete() -> None:
    assert foldline.__all__ == sorted(foldline.__all__)
    exported_errors = {name for name in vars(errors) if isinstance(getattr(errors, name), type)
                       and issubclass(getattr(errors, name), errors.FoldlineError)}
    assert exported_errors <= set(foldline.__all__)
    assert {"Client", "__version__"} <= set(foldline.__all__)
    assert all(hasattr(foldline, name) for name in foldline.__all__)
