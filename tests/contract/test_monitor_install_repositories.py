"""MonitorRepository and InstallRepository: the same end state read back through the port
over every store of the contract."""

from __future__ import annotations

from dataclasses import replace

import pytest

from cafleet.application.ports.store import UnitOfWorkFactory
from cafleet.domain.monitor import MonitorRuntime, MonitorSchedule
from cafleet.domain.skills import SkillInstall

from .records import ODD_STAMP, ODD_TEXT, T0, agents, assert_same, at, fleet, stamps
from .stores import REFUSALS

FULL_SCHEDULE = {
    "enabled": False,
    "last_ping_at": ODD_STAMP,
    "last_stall_check_at": ODD_STAMP.replace(microsecond=1),
    "last_native_status": ODD_TEXT,
}


@pytest.mark.parametrize("fields", [{}, FULL_SCHEDULE], ids=["defaults", "every-field"])
def test_a_schedule_round_trips_every_field(
    store: UnitOfWorkFactory, fields: dict[str, object]
) -> None:
    with store(write=True) as uow:
        (agent,) = agents(uow, fleet(uow), "a")
        enrolled = replace(MonitorSchedule(agent, 720), **fields)  # type: ignore[arg-type]
        uow.monitor.enroll(enrolled)
        uow.commit()
    with store(write=True) as uow:
        saved = replace(enrolled, interval_seconds=180, enabled=not enrolled.enabled)
        uow.monitor.save(saved)
        uow.commit()

    with store() as uow:
        got = uow.monitor.get(agent)
        assert uow.monitor.get(agent + 1) is None

    assert_same(got, saved)


def test_enrolling_twice_is_refused_and_save_never_enrolls(store: UnitOfWorkFactory) -> None:
    with store(write=True) as uow:
        enrolled, bare = agents(uow, fleet(uow), "enrolled", "bare")
        uow.monitor.enroll(MonitorSchedule(enrolled, 60))
        uow.commit()

    with pytest.raises(REFUSALS), store(write=True) as uow:
        uow.monitor.enroll(MonitorSchedule(enrolled, 999))
        uow.commit()
    with store(write=True) as uow:
        uow.monitor.save(MonitorSchedule(bare, 60))
        uow.commit()

    with store() as uow:
        assert uow.monitor.for_agents([enrolled, bare]) == {enrolled: MonitorSchedule(enrolled, 60)}


def test_for_agents_and_unenroll(store: UnitOfWorkFactory) -> None:
    with store(write=True) as uow:
        kept, dropped, never = agents(uow, fleet(uow), "kept", "dropped", "never")
        uow.monitor.enroll(MonitorSchedule(kept, 60))
        uow.monitor.enroll(MonitorSchedule(dropped, 90))
        uow.commit()
    with store(write=True) as uow:
        uow.monitor.unenroll(dropped)
        uow.monitor.unenroll(never)  # unenrolling what is not there is no error
        uow.commit()

    with store() as uow:
        found = uow.monitor.for_agents(iter([kept, dropped, never]))
        assert uow.monitor.for_agents([]) == {}

    assert found == {kept: MonitorSchedule(kept, 60)}


def test_record_progress_stores_only_the_monitors_fields_and_skips_removed_rows(
    store: UnitOfWorkFactory,
) -> None:
    with store(write=True) as uow:
        watched, reset, removed = agents(uow, fleet(uow), "watched", "reset", "removed")
        uow.monitor.enroll(MonitorSchedule(watched, 60))
        uow.monitor.enroll(MonitorSchedule(reset, 90, True, at(1), at(2), "working"))
        uow.commit()
    with store(write=True) as uow:
        uow.monitor.record_progress(
            [
                MonitorSchedule(watched, 1, False, ODD_STAMP, at(5), "blocked"),
                MonitorSchedule(reset, 2, False, None, None, None),
                MonitorSchedule(removed, 3, True, at(9), at(9), "idle"),
            ]
        )
        uow.monitor.record_progress([])
        uow.commit()

    with store() as uow:
        found = uow.monitor.for_agents([watched, reset, removed])

    assert found == {
        watched: MonitorSchedule(watched, 60, True, ODD_STAMP, at(5), "blocked"),
        reset: MonitorSchedule(reset, 90, True, None, None, None),
    }
    assert stamps(found[watched])["last_ping_at"] == ODD_STAMP.isoformat()


@pytest.mark.parametrize(
    "runtime",
    [
        MonitorRuntime(0),
        MonitorRuntime(0, 4242, ODD_TEXT, ODD_STAMP, ODD_STAMP.replace(microsecond=3), 17),
    ],
    ids=["released", "claimed"],
)
def test_save_runtime_inserts_then_replaces_the_fleets_row(
    store: UnitOfWorkFactory, runtime: MonitorRuntime
) -> None:
    with store(write=True) as uow:
        fleet_id, other = fleet(uow), fleet(uow, "other")
        first = replace(runtime, fleet_id=fleet_id)
        uow.monitor.save_runtime(first)
        uow.monitor.save_runtime(MonitorRuntime(other, 1, "h", T0, T0, 5))
        uow.commit()
    with store() as uow:
        inserted = uow.monitor.runtime(fleet_id)
    with store(write=True) as uow:
        replaced = MonitorRuntime(fleet_id, 7, "host-b", at(1), at(2), 9)
        uow.monitor.save_runtime(replaced)
        uow.commit()

    with store() as uow:
        got = uow.monitor.runtime(fleet_id)
        untouched = uow.monitor.runtime(other)
        assert uow.monitor.runtime(other + 1) is None

    assert_same(inserted, first)
    assert got == replaced
    assert untouched == MonitorRuntime(other, 1, "h", T0, T0, 5)


def test_heartbeat_refreshes_only_the_owners_slot(store: UnitOfWorkFactory) -> None:
    with store(write=True) as uow:
        owned, released = fleet(uow), fleet(uow, "released")
        uow.monitor.save_runtime(MonitorRuntime(owned, 10, "host", T0, T0, 5))
        uow.monitor.save_runtime(MonitorRuntime(released))
        uow.commit()
    with store(write=True) as uow:
        beats = {
            "owner": uow.monitor.heartbeat(owned, 10, "host", ODD_STAMP),
            "other pid": uow.monitor.heartbeat(owned, 11, "host", at(99)),
            "other host": uow.monitor.heartbeat(owned, 10, "elsewhere", at(99)),
            "released": uow.monitor.heartbeat(released, 10, "host", at(99)),
            "no row": uow.monitor.heartbeat(released + 1, 10, "host", at(99)),
        }
        uow.commit()

    with store() as uow:
        ticked = uow.monitor.runtime(owned)
        idle = uow.monitor.runtime(released)

    assert beats == {
        "owner": True,
        "other pid": False,
        "other host": False,
        "released": False,
        "no row": False,
    }
    assert ticked == MonitorRuntime(owned, 10, "host", T0, ODD_STAMP, 5)
    assert stamps(ticked)["last_tick_at"] == ODD_STAMP.isoformat()
    assert idle == MonitorRuntime(released)


def test_remove_runtime(store: UnitOfWorkFactory) -> None:
    with store(write=True) as uow:
        gone, kept = fleet(uow), fleet(uow, "kept")
        uow.monitor.save_runtime(MonitorRuntime(gone, 1, "h"))
        uow.monitor.save_runtime(MonitorRuntime(kept, 2, "h"))
        uow.commit()
    with store(write=True) as uow:
        uow.monitor.remove_runtime(gone)
        uow.monitor.remove_runtime(kept + 1)  # removing what is not there is no error
        uow.commit()

    with store() as uow:
        assert uow.monitor.runtime(gone) is None
        assert uow.monitor.runtime(kept) == MonitorRuntime(kept, 2, "h")


def test_installs_are_listed_by_coding_agent_and_record_replaces_one(
    store: UnitOfWorkFactory,
) -> None:
    with store() as uow:
        assert uow.installs.list() == []
    with store(write=True) as uow:
        for agent, version in [("opencode", "0.1"), ("claude", "0.1"), ("codex", "0.1")]:
            uow.installs.record(SkillInstall(agent, version, T0))
        uow.commit()
    with store(write=True) as uow:
        uow.installs.record(SkillInstall("codex", ODD_TEXT, ODD_STAMP))
        uow.commit()

    with store() as uow:
        found = uow.installs.list()

    assert found == [
        SkillInstall("claude", "0.1", T0),
        SkillInstall("codex", ODD_TEXT, ODD_STAMP),
        SkillInstall("opencode", "0.1", T0),
    ]
    assert stamps(found[1]) == stamps(SkillInstall("codex", ODD_TEXT, ODD_STAMP))
