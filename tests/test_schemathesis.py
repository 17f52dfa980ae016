"""Schemathesis against the served document: generated requests never meet a 5xx, and every answer
matches what the document says of its status, content type and body. Bounded: a few examples each."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
import schemathesis
from conftest import World
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.errors import Unsatisfiable
from schemathesis import checks
from schemathesis.generation import GenerationMode

pytestmark = pytest.mark.slow  # generated requests against the whole API

CHECKS = [checks.not_a_server_error, checks.status_code_conformance, checks.content_type_conformance,
          checks.response_schema_conformance]
EXAMPLES = 15
# a share's token is any text (an unknown one is the one not-found), and the agent is fixed below
NOTHING_TO_NEGATE = {"/", "/agents/{agent}", "/signin", "/signout", "/s/{token}", "/api/shared/{token}",
                     "/api/shared/{token}/agents/{agent}", "/samples/remove", "/shares/{share}/revoke"}


def operations(world: World) -> list[Any]:
    document = httpx.get(f"{world.url}/api/openapi.json").json()
    schema = schemathesis.openapi.from_dict(document).exclude(path_regex="/events$")  # a stream never ends
    return [result.ok() for result in schema.get_all_operations()]


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_generated_requests_get_documented_answers(world: World, mode: GenerationMode) -> None:
    auth = {"Authorization": f"Bearer {world.alice_token}"}
    found = operations(world)
    assert len(found) == 41  # the API, share links, the AI SDK streams and the panel's pages (event streams left out)
    for operation in found:
        fixed = {"agent": world.agent} if "{agent}" in operation.path else None
        cases = operation.as_strategy(mode, path_parameters=fixed)

        @settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                  suppress_health_check=list(HealthCheck))
        @given(case=cases, with_token=st.booleans())
        def run(case: Any, with_token: bool) -> None:
            case.call_and_validate(base_url=world.url, headers=auth if with_token else {}, checks=CHECKS, timeout=30)

        try:
            run()
        except Unsatisfiable:
            # every input of this operation takes any value (a panel page, free-text query strings):
            # there is nothing to send wrong, and the positive run covers it
            assert mode is GenerationMode.NEGATIVE and operation.path in NOTHING_TO_NEGATE, operation.label
