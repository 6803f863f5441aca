"""The text and JSON shapes of `monitor status` and `monitor config`, rendered from
service results built on the fakes."""

from __future__ import annotations

from typing import Any

from cafleet.entrypoints.cli.monitor import _config_json, _config_text, _status_json, _status_text

STATUS_KEYS = [
    "running",
    "pid",
    "host",
    "tick_seconds",
    "last_tick_at",
    "last_tick_age_seconds",
    "started_at",
]
AGENT_KEYS = [
    "agent_id",
    "name",
    "role",
    "interval_seconds",
    "last_ping_at",
    "last_ping_age_seconds",
    "enabled",
    "pending_count",
]


def iso(fleet: Any, seconds: float) -> str:
    return fleet.at(seconds).isoformat(timespec="microseconds")


def test_a_running_monitor_heads_the_text_with_pid_age_tick_and_start(fleet: Any) -> None:
    service = fleet.service()
    service.claim(fleet.fleet_id, 5)
    fleet.clock.advance(3)

    head = _status_text(service.status(fleet.fleet_id)).splitlines()[0]

    assert (
        head == f"monitor: running (pid 4242, last tick 3s ago, tick 5s, started {iso(fleet, 0)})"
    )


def test_the_text_table_sizes_columns_to_content(fleet: Any) -> None:
    member = fleet.members["worker"]
    service = fleet.service()
    service.claim(fleet.fleet_id, 5)
    service.tick(fleet.fleet_id)
    fleet.message(to=member, sender=fleet.director_id)
    service.config(fleet.fleet_id, member, enabled=False)
    fleet.clock.advance(125)

    lines = _status_text(service.status(fleet.fleet_id)).splitlines()

    d = fleet.director_id
    assert lines[1:] == [
        "  agent_id  name      role      interval  last_ping  enabled  pending",
        "  --------  --------  --------  --------  ---------  -------  -------",
        f"  {d:<8}  Director  director  180s      2m ago     yes      0",
        f"  {member:<8}  worker    member    720s      2m ago     no       1",
    ]


def test_a_never_pinged_agent_shows_a_dash(fleet: Any) -> None:
    lines = _status_text(fleet.service().status(fleet.fleet_id)).splitlines()

    assert lines[0] == "monitor: stopped"
    assert lines[3].split()[4] == "-"


def test_the_json_status_of_a_running_monitor(fleet: Any) -> None:
    service = fleet.service()
    service.claim(fleet.fleet_id, 5)
    service.tick(fleet.fleet_id)
    fleet.clock.advance(7)

    payload = _status_json(service.status(fleet.fleet_id))

    assert list(payload["runtime"]) == STATUS_KEYS
    assert payload["runtime"] == {
        "running": True,
        "pid": 4242,
        "host": "host-a",
        "tick_seconds": 5,
        "last_tick_at": iso(fleet, 0),
        "last_tick_age_seconds": 7,
        "started_at": iso(fleet, 0),
    }
    assert [list(a) for a in payload["agents"]] == [AGENT_KEYS, AGENT_KEYS]
    assert payload["agents"][1] == {
        "agent_id": fleet.members["worker"],
        "name": "worker",
        "role": "member",
        "interval_seconds": 720,
        "last_ping_at": iso(fleet, 0),
        "last_ping_age_seconds": 7,
        "enabled": True,
        "pending_count": 0,
    }


def test_the_json_status_after_a_stop_nulls_the_process_fields_but_keeps_the_tick(
    fleet: Any,
) -> None:
    service = fleet.service()
    service.claim(fleet.fleet_id, 6)
    service.release(fleet.fleet_id)

    runtime = _status_json(service.status(fleet.fleet_id))["runtime"]

    assert runtime == dict.fromkeys(STATUS_KEYS) | {"running": False, "tick_seconds": 6}


def test_the_json_status_of_a_stale_owner_shows_it_stopped(fleet: Any) -> None:
    service = fleet.service()
    service.claim(fleet.fleet_id, 5)
    fleet.clock.advance(60)

    runtime = _status_json(service.status(fleet.fleet_id))["runtime"]

    assert runtime == dict.fromkeys(STATUS_KEYS) | {"running": False, "tick_seconds": 5}


def test_the_json_status_of_a_fleet_that_never_ran_a_monitor(fleet: Any) -> None:
    runtime = _status_json(fleet.service().status(fleet.fleet_id))["runtime"]

    assert runtime == dict.fromkeys(STATUS_KEYS) | {"running": False}


def test_config_text_and_json_of_a_fresh_member(fleet: Any) -> None:
    member = fleet.members["worker"]
    shown = fleet.service().config(fleet.fleet_id, member)

    assert _config_text(shown) == f"agent {member}: interval 720s, enabled, last_ping -"
    assert _config_json(shown) == {
        "agent_id": member,
        "interval_seconds": 720,
        "last_ping_at": None,
        "enabled": True,
    }


def test_config_text_shows_disabled_and_the_raw_ping_timestamp(fleet: Any) -> None:
    member = fleet.members["worker"]
    fleet.edit_schedule(member, last_ping_at=fleet.at(0))

    edited = fleet.service().config(fleet.fleet_id, member, interval_seconds=30, enabled=False)

    assert _config_text(edited) == (
        f"agent {member}: interval 30s, disabled, last_ping {iso(fleet, 0)}"
    )
    assert _config_json(edited)["last_ping_at"] == iso(fleet, 0)


def test_a_deleted_fleets_status_says_so_in_text_and_json(fleet: Any) -> None:
    fleet.fleets().delete(fleet.fleet_id, keep_panes=True)
    status = fleet.service().status(fleet.fleet_id)
    deleted_at = iso(fleet, 0)

    assert _status_text(status) == (
        f"monitor: stopped (fleet deleted {deleted_at}; its history is read-only)"
    )
    payload = _status_json(status)
    assert (payload["runtime"]["running"], payload["agents"]) == (False, [])
    assert payload["fleet_deleted_at"] == deleted_at


def test_a_live_fleets_status_json_has_no_deletion_field(fleet: Any) -> None:
    assert "fleet_deleted_at" not in _status_json(fleet.service().status(fleet.fleet_id))
