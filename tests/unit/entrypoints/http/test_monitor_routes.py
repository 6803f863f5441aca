"""GET /api/monitor and GET/PATCH /api/agents/{id}/monitor."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest

from cafleet.domain.fleet import CardKind
from cafleet.domain.monitor import MonitorRuntime

RUNTIME_FIELDS = {
    "running",
    "pid",
    "host",
    "tick_seconds",
    "last_tick_at",
    "last_tick_age_seconds",
    "started_at",
}


def save_runtime(container, runtime: MonitorRuntime) -> None:
    with container.uow()(write=True) as uow:
        uow.monitor.save_runtime(runtime)
        uow.commit()


def test_a_fleet_that_never_ran_a_monitor_reports_everything_null(client, alpha, scoped) -> None:
    response = client.get("/api/monitor", headers=scoped(alpha.fleet.fleet_id))

    assert response.status_code == 200
    assert response.json() == dict.fromkeys(RUNTIME_FIELDS) | {"running": False}


def test_a_running_monitor_reports_its_process_and_the_heartbeat_age(
    client, container, clock, alpha, scoped
) -> None:
    started = clock.now()
    save_runtime(
        container,
        MonitorRuntime(alpha.fleet.fleet_id).claimed(4242, "admin-host", started, 5),
    )
    clock.advance(7)

    body = client.get("/api/monitor", headers=scoped(alpha.fleet.fleet_id)).json()

    assert body == {
        "running": True,
        "pid": 4242,
        "host": "admin-host",
        "tick_seconds": 5,
        "last_tick_at": started.isoformat(timespec="microseconds"),
        "last_tick_age_seconds": 7,
        "started_at": started.isoformat(timespec="microseconds"),
    }


@pytest.mark.parametrize(
    ("why", "stale"),
    [("the heartbeat went stale", True), ("the process is gone on this host", False)],
)
def test_a_dead_monitor_shows_only_its_last_tick_interval(
    client, container, clock, process, alpha, scoped, why, stale
) -> None:
    save_runtime(
        container,
        MonitorRuntime(alpha.fleet.fleet_id).claimed(4242, "admin-host", clock.now(), 3),
    )
    if stale:
        clock.advance(16)
    else:
        process.alive_pids.clear()

    body = client.get("/api/monitor", headers=scoped(alpha.fleet.fleet_id)).json()

    assert body == dict.fromkeys(RUNTIME_FIELDS) | {"running": False, "tick_seconds": 3}, why


def test_a_monitor_on_another_host_is_judged_by_its_heartbeat_alone(
    client, container, clock, process, alpha, scoped
) -> None:
    save_runtime(
        container,
        MonitorRuntime(alpha.fleet.fleet_id).claimed(999, "elsewhere", clock.now(), 5),
    )

    body = client.get("/api/monitor", headers=scoped(alpha.fleet.fleet_id)).json()

    assert body["running"] is True
    assert body["host"] == "elsewhere"


def test_an_enrolled_agents_schedule(client, fleets, alpha, scoped) -> None:
    worker = fleets.member(alpha, "worker")

    response = client.get(f"/api/agents/{worker}/monitor", headers=scoped(alpha.fleet.fleet_id))

    assert response.status_code == 200
    assert response.json() == {"interval_seconds": 720, "last_ping_at": None, "enabled": True}


@pytest.mark.parametrize("who", ["administrator", "watcher", "unknown", "other-fleet", "retired"])
@pytest.mark.parametrize("method", ["GET", "PATCH"])
def test_agents_outside_the_watched_set_are_not_enrolled(
    client, fleets, alpha, scoped, who, method
) -> None:
    other = fleets.create("other")
    retired = fleets.member(alpha, "retired")
    fleets.deregister(retired)
    agent_id = {
        "administrator": alpha.administrator.agent_id,
        "watcher": fleets.member(alpha, "watcher", card_kind=CardKind.MONITORING_MEMBER),
        "unknown": 9999,
        "other-fleet": other.director.agent_id,
        "retired": retired,
    }[who]

    response = client.request(
        method,
        f"/api/agents/{agent_id}/monitor",
        headers=scoped(alpha.fleet.fleet_id),
        json={"enabled": False} if method == "PATCH" else None,
    )

    assert response.status_code == 404
    assert response.json() == {"detail": "Agent not enrolled"}


def test_patch_changes_only_the_fields_given(client, fleets, alpha, scoped) -> None:
    worker = fleets.member(alpha, "worker")
    path, headers = f"/api/agents/{worker}/monitor", scoped(alpha.fleet.fleet_id)

    interval = client.patch(path, headers=headers, json={"interval_seconds": 60})
    switched = client.patch(path, headers=headers, json={"enabled": False})

    assert interval.json() == {"interval_seconds": 60, "last_ping_at": None, "enabled": True}
    assert switched.json() == {"interval_seconds": 60, "last_ping_at": None, "enabled": False}
    stored = fleets.schedule(worker)
    assert (stored.interval_seconds, stored.enabled) == (60, False)


def test_an_empty_patch_changes_nothing(client, fleets, clock, alpha, scoped) -> None:
    worker = fleets.member(alpha, "worker")
    pinged = replace(fleets.schedule(worker), last_ping_at=clock.now())
    fleets.save_schedule(pinged)

    for body in ({}, {"interval_seconds": None, "enabled": None}):
        response = client.patch(
            f"/api/agents/{worker}/monitor", headers=scoped(alpha.fleet.fleet_id), json=body
        )
        assert response.status_code == 200
        assert response.json() == {
            "interval_seconds": 720,
            "last_ping_at": pinged.last_ping_at.isoformat(timespec="microseconds"),
            "enabled": True,
        }
    assert fleets.schedule(worker) == pinged


def test_disabling_clears_the_stall_check_time(client, fleets, clock, alpha, scoped) -> None:
    worker = fleets.member(alpha, "worker")
    checked = clock.now() - timedelta(seconds=30)
    fleets.save_schedule(replace(fleets.schedule(worker), last_stall_check_at=checked))

    client.patch(
        f"/api/agents/{worker}/monitor",
        headers=scoped(alpha.fleet.fleet_id),
        json={"enabled": False},
    )

    assert fleets.schedule(worker).last_stall_check_at is None


def test_enabling_keeps_the_stall_check_time(client, fleets, clock, alpha, scoped) -> None:
    worker = fleets.member(alpha, "worker")
    checked = clock.now()
    fleets.save_schedule(replace(fleets.schedule(worker), last_stall_check_at=checked))

    client.patch(
        f"/api/agents/{worker}/monitor",
        headers=scoped(alpha.fleet.fleet_id),
        json={"enabled": True, "interval_seconds": 30},
    )

    assert fleets.schedule(worker).last_stall_check_at == checked


def patch_interval(client, alpha, scoped, worker: int, seconds: int):
    return client.patch(
        f"/api/agents/{worker}/monitor",
        headers=scoped(alpha.fleet.fleet_id),
        json={"interval_seconds": seconds},
    )


def test_interval_zero_is_the_frameworks_validation_error(client, fleets, alpha, scoped) -> None:
    worker = fleets.member(alpha, "worker")

    response = patch_interval(client, alpha, scoped, worker, 0)

    assert response.status_code == 422
    [error] = response.json()["detail"]
    assert error["loc"] == ["body", "interval_seconds"]
    assert error["type"] == "greater_than_equal"
    assert fleets.schedule(worker).interval_seconds == 720


@pytest.mark.parametrize(
    "body",
    [
        {"interval_seconds": "60"},
        {"interval_seconds": 1.5},
        {"interval_seconds": -5},
        {"interval_seconds": 86401},
        {"interval_seconds": 2**63 - 1},
        {"interval_seconds": 10**23},
        {"interval_seconds": 1e23},
        {"enabled": "no"},
        {"enabled": 0},
    ],
)
def test_patch_values_must_have_the_documented_types(client, fleets, alpha, scoped, body) -> None:
    worker = fleets.member(alpha, "worker")

    response = client.patch(
        f"/api/agents/{worker}/monitor", headers=scoped(alpha.fleet.fleet_id), json=body
    )

    assert response.status_code == 422
    assert isinstance(response.json()["detail"], list)
    assert fleets.schedule(worker).interval_seconds == 720


def test_the_largest_interval_is_a_day(client, fleets, alpha, scoped) -> None:
    worker = fleets.member(alpha, "worker")

    response = patch_interval(client, alpha, scoped, worker, 86400)

    assert response.status_code == 200
    assert fleets.schedule(worker).interval_seconds == 86400


def test_non_finite_intervals_are_validation_errors(client, fleets, alpha, scoped) -> None:
    worker = fleets.member(alpha, "worker")

    for raw in (b"NaN", b"Infinity", b"1e400"):
        response = client.patch(
            f"/api/agents/{worker}/monitor",
            headers={**scoped(alpha.fleet.fleet_id), "Content-Type": "application/json"},
            content=b'{"interval_seconds": %s}' % raw,
        )
        assert response.status_code == 422, raw
    assert fleets.schedule(worker).interval_seconds == 720


def test_the_roster_shows_a_patched_schedule(client, fleets, alpha, scoped) -> None:
    worker = fleets.member(alpha, "worker")
    headers = scoped(alpha.fleet.fleet_id)

    client.patch(f"/api/agents/{worker}/monitor", headers=headers, json={"interval_seconds": 90})

    agents = client.get("/api/agents", headers=headers).json()["agents"]
    assert next(a for a in agents if a["agent_id"] == worker)["monitor"]["interval_seconds"] == 90
