"""Property-based fuzzing of every route in the OpenAPI document (schemathesis over ASGI).

Requests are generated from the schema the app publishes; a share of them is pointed at a
live fleet, a deleted fleet and an unknown one so the fuzzing reaches past the X-Fleet-Id
check. Every answer must be documented, match its schema, never be a 5xx, and every error
must be JSON with a `detail`.
"""

from __future__ import annotations

from typing import Any

import schemathesis
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

from cafleet.composition.container import build_fake_container
from cafleet.domain.fleet import Agent, CardKind
from cafleet.domain.placement import CodingAgent
from cafleet.entrypoints.http.app import create_app
from cafleet.entrypoints.http.events import StreamLimits


def seeded_app() -> Any:
    """Fleet 1 live (Director, Administrator, a member, a watcher, messages), fleet 2 deleted."""
    container = build_fake_container()
    fleets, messaging = container.fleets(), container.messaging()
    live = fleets.create("live", CodingAgent.CLAUDE)
    gone = fleets.create("gone", CodingAgent.CLAUDE)
    fid, director, admin = live.fleet.fleet_id, live.director.agent_id, live.administrator.agent_id
    with container.uow()(write=True) as uow:
        now = container.clock().now()
        uow.agents.add(
            Agent(0, fid, "watcher", "the monitor", now, card_kind=CardKind.MONITORING_MEMBER)
        )
        uow.commit()
    messaging.send(fid, director, admin, "status?")
    messaging.broadcast(fid, director, "all hands")
    fleets.delete(gone.fleet.fleet_id, keep_panes=True)
    limits = StreamLimits(poll_seconds=0.001, max_seconds=0.01)
    return create_app(container, stream_limits=limits, webui_build=None)


schema = schemathesis.openapi.from_asgi("/openapi.json", seeded_app())

# None keeps what schemathesis generated; the rest aim at the seeded world
FLEET_HEADERS = st.sampled_from([None, "1", "1", "2", "999", "-1", "abc", ""])
AGENT_IDS = st.sampled_from([None, 1, 2, 3, 5, 999])  # director, admin, other fleet, watcher


def errors_are_json_with_detail(ctx: Any, response: Any, case: Any) -> bool | None:
    if response.status_code >= 400:
        assert response.headers["content-type"][0].startswith("application/json"), response
        body = response.json()
        assert isinstance(body, dict) and "detail" in body, body
    return None


@schema.parametrize()
@schema.given(fleet=FLEET_HEADERS, agent=AGENT_IDS)
@settings(
    max_examples=60,
    deadline=None,
    database=None,  # no example database left in the work tree
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
def test_every_route_answers_as_documented(case: Any, fleet: str | None, agent: int | None) -> None:
    if fleet is not None:
        case.headers = {**(case.headers or {}), "X-Fleet-Id": fleet}
    if agent is not None and "agent_id" in (case.path_parameters or {}):
        case.path_parameters = {**case.path_parameters, "agent_id": agent}
    if agent is not None and isinstance(case.body, dict) and "to_agent_id" in case.body:
        case.body = {**case.body, "to_agent_id": agent}
    if agent is not None and case.path == "/api/events":  # live panes of seeded agents
        case.query = {**(case.query or {}), "watch": f"{agent},{agent}"}
    case.call_and_validate(
        checks=[
            not_a_server_error,
            status_code_conformance,
            content_type_conformance,
            response_schema_conformance,
        ],
        additional_checks=[errors_are_json_with_detail],
    )
