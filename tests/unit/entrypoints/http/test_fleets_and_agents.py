"""GET /api/fleets, GET /api/agents and the X-Fleet-Id rules every scoped route shares."""

from __future__ import annotations

import re

import pytest

from cafleet.domain.fleet import CardKind

ISO_UTC_MICROS = r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$"


def test_fleets_lists_live_fleets_newest_first_with_active_agent_counts(
    client, fleets, alpha
) -> None:
    beta = fleets.create("beta")
    fleets.member(beta, "worker")
    gone = fleets.create("gone")
    fleets.delete(gone)

    response = client.get("/api/fleets")

    assert response.status_code == 200
    assert response.json() == [
        {
            "fleet_id": beta.fleet.fleet_id,
            "director_agent_id": beta.director.agent_id,
            "name": "beta",
            "created_at": beta.fleet.created_at.isoformat(timespec="microseconds"),
            "agent_count": 3,
            "deleted_at": None,
        },
        {
            "fleet_id": alpha.fleet.fleet_id,
            "director_agent_id": alpha.director.agent_id,
            "name": "alpha",
            "created_at": alpha.fleet.created_at.isoformat(timespec="microseconds"),
            "agent_count": 2,
            "deleted_at": None,
        },
    ]


def test_fleets_with_include_deleted_adds_the_deleted_ones_with_their_time(
    client, fleets, alpha
) -> None:
    gone = fleets.create("gone")
    fleets.delete(gone)

    listed = client.get("/api/fleets", params={"include_deleted": "true"}).json()

    [deleted] = [f for f in listed if f["fleet_id"] == gone.fleet.fleet_id]
    [live] = [f for f in listed if f["fleet_id"] == alpha.fleet.fleet_id]
    assert [f["fleet_id"] for f in listed] == [gone.fleet.fleet_id, alpha.fleet.fleet_id]
    assert deleted["deleted_at"] is not None
    assert deleted["agent_count"] == 0
    assert live["deleted_at"] is None


def test_fleets_needs_no_fleet_header_and_is_empty_on_a_fresh_store(client) -> None:
    assert client.get("/api/fleets").json() == []


def test_agents_shows_kinds_and_the_folded_monitor_schedule(client, fleets, alpha, scoped) -> None:
    worker = fleets.member(alpha, "worker")
    watcher = fleets.member(alpha, "watcher", card_kind=CardKind.MONITORING_MEMBER)

    response = client.get("/api/agents", headers=scoped(alpha.fleet.fleet_id))

    assert response.status_code == 200
    agents = {a["agent_id"]: a for a in response.json()["agents"]}
    assert list(agents) == [alpha.director.agent_id, alpha.administrator.agent_id, worker, watcher]
    director = agents[alpha.director.agent_id]
    assert director["name"] == "Director"
    assert director["description"] == "Root Director for this fleet"
    assert director["status"] == "active"
    assert director["kind"] == "director"
    assert director["registered_at"] == alpha.director.registered_at.isoformat(
        timespec="microseconds"
    )
    assert director["monitor"] == {"interval_seconds": 180, "last_ping_at": None, "enabled": True}
    assert agents[alpha.administrator.agent_id]["kind"] == "administrator"
    assert agents[alpha.administrator.agent_id]["monitor"] is None
    assert agents[worker]["kind"] == "member"
    assert agents[worker]["monitor"]["interval_seconds"] == 720
    assert agents[watcher]["kind"] == "monitor"
    assert agents[watcher]["monitor"] is None


def test_agents_keeps_deregistered_agents_that_own_or_sent_messages(
    client, fleets, alpha, scoped
) -> None:
    talker = fleets.member(alpha, "talker")
    listener = fleets.member(alpha, "listener")
    silent = fleets.member(alpha, "silent")
    fleets.send(alpha, talker, alpha.director.agent_id, "hi")
    fleets.send(alpha, alpha.director.agent_id, listener, "for you")
    for agent_id in (talker, listener, silent):
        fleets.deregister(agent_id)

    agents = client.get("/api/agents", headers=scoped(alpha.fleet.fleet_id)).json()["agents"]

    shown = {a["agent_id"]: a["status"] for a in agents}
    assert shown[talker] == "deregistered"
    assert shown[listener] == "deregistered"
    assert silent not in shown
    assert next(a for a in agents if a["agent_id"] == talker)["monitor"] is None


OUT_OF_RANGE = "X-Fleet-Id must be an integer between 1 and 9223372036854775807"


@pytest.mark.parametrize(
    ("headers", "status", "detail"),
    [
        ({}, 400, "X-Fleet-Id header required"),
        ({"X-Fleet-Id": ""}, 400, "X-Fleet-Id header required"),
        ({"X-Fleet-Id": "   "}, 400, "X-Fleet-Id header required"),
        ({"X-Fleet-Id": "one"}, 400, "X-Fleet-Id must be an integer"),
        ({"X-Fleet-Id": "1.5"}, 400, "X-Fleet-Id must be an integer"),
        ({"X-Fleet-Id": "1_0"}, 400, "X-Fleet-Id must be an integer"),
        ({"X-Fleet-Id": "999"}, 404, "Fleet not found"),
        ({"X-Fleet-Id": str(2**63 - 1)}, 404, "Fleet not found"),
        ({"X-Fleet-Id": "0"}, 400, OUT_OF_RANGE),
        ({"X-Fleet-Id": "-1"}, 400, OUT_OF_RANGE),
        ({"X-Fleet-Id": str(2**63)}, 400, OUT_OF_RANGE),
        ({"X-Fleet-Id": "9" * 40}, 400, OUT_OF_RANGE),
        ({"X-Fleet-Id": "9" * 5000}, 400, OUT_OF_RANGE),
    ],
)
@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("GET", "/api/agents", None),
        ("GET", "/api/monitor", None),
        ("GET", "/api/agents/1/monitor", None),
        ("PATCH", "/api/agents/1/monitor", {}),
        ("GET", "/api/agents/1/inbox", None),
        ("GET", "/api/agents/1/sent", None),
        ("GET", "/api/timeline", None),
        ("POST", "/api/messages/send", {"to_agent_id": 1, "text": "hi"}),
        ("GET", "/api/events", None),
    ],
)
def test_every_scoped_route_checks_the_fleet_header(
    client, alpha, headers, status, detail, method, path, body
) -> None:
    response = client.request(method, path, headers=headers, json=body)

    assert response.status_code == status
    assert response.json() == {"detail": detail}


def test_a_fleet_header_with_surrounding_blanks_or_a_plus_sign_still_names_the_fleet(
    client, alpha
) -> None:
    fleet_id = alpha.fleet.fleet_id

    for raw in (f" {fleet_id} ", f"+{fleet_id}", f"0{fleet_id}"):
        assert client.get("/api/agents", headers={"X-Fleet-Id": raw}).status_code == 200


def test_a_deleted_fleet_stays_readable(client, fleets, alpha, scoped) -> None:
    worker = fleets.member(alpha, "worker")
    task_id = fleets.send(alpha, alpha.director.agent_id, worker, "before the end")
    fleets.delete(alpha)
    headers = scoped(alpha.fleet.fleet_id)

    agents = client.get("/api/agents", headers=headers).json()["agents"]
    timeline = client.get("/api/timeline", headers=headers).json()["messages"]
    inbox = client.get(f"/api/agents/{worker}/inbox", headers=headers).json()["messages"]
    monitor = client.get("/api/monitor", headers=headers).json()

    assert {a["agent_id"]: a["status"] for a in agents} == {
        alpha.director.agent_id: "deregistered",
        worker: "deregistered",
    }
    assert [m["task_id"] for m in timeline] == [task_id]
    assert [m["task_id"] for m in inbox] == [task_id]
    assert monitor["running"] is False
    assert client.get("/api/fleets").json() == []


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("PATCH", "/api/agents/{agent}/monitor", {"enabled": False}),
        ("PATCH", "/api/agents/{agent}/monitor", {}),
        ("POST", "/api/messages/send", {"to_agent_id": "*", "text": "anyone?"}),
        ("POST", "/api/messages/send", {"to_agent_id": "{agent}", "text": "hello?"}),
    ],
)
def test_a_deleted_fleet_refuses_every_write_as_read_only(
    client, fleets, alpha, scoped, method, path, body
) -> None:
    director = alpha.director.agent_id
    fleets.delete(alpha)
    if body.get("to_agent_id") == "{agent}":
        body = {**body, "to_agent_id": director}

    response = client.request(
        method,
        path.format(agent=director),
        headers=scoped(alpha.fleet.fleet_id),
        json=body,
    )

    assert response.status_code == 409
    assert response.json() == {
        "detail": f"fleet {alpha.fleet.fleet_id} is deleted; its history is read-only"
    }
    timeline = client.get("/api/timeline", headers=scoped(alpha.fleet.fleet_id)).json()
    assert timeline["messages"] == []


def test_timestamps_are_utc_iso_strings_with_microseconds(client, alpha, scoped) -> None:
    fleet = client.get("/api/fleets").json()[0]
    agent = client.get("/api/agents", headers=scoped(alpha.fleet.fleet_id)).json()["agents"][0]

    assert re.match(ISO_UTC_MICROS, fleet["created_at"])
    assert re.match(ISO_UTC_MICROS, agent["registered_at"])
