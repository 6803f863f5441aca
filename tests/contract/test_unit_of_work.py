"""UnitOfWork semantics over every store of the contract: nothing persists without commit,
a commit persists everything, and a read-only unit of work sees what was committed."""

from __future__ import annotations

import pytest

from cafleet.application.ports.store import UnitOfWorkFactory
from cafleet.domain.skills import SkillInstall

from .records import T0, agents, fleet


def test_a_write_that_is_not_committed_is_rolled_back(store: UnitOfWorkFactory) -> None:
    with store(write=True) as uow:
        fleet_id = fleet(uow, "forgotten")
        (agent,) = agents(uow, fleet_id, "forgotten")
        uow.installs.record(SkillInstall("claude", "1", T0))

    with store() as uow:
        assert uow.fleets.list_all() == []
        assert uow.agents.get(agent) is None
        assert uow.installs.list() == []


def test_a_write_that_raises_is_rolled_back(store: UnitOfWorkFactory) -> None:
    with store(write=True) as uow:
        kept = fleet(uow, "kept")
        uow.commit()

    with pytest.raises(LookupError), store(write=True) as uow:
        fleet(uow, "doomed")
        raise LookupError("midway")

    with store() as uow:
        assert [f.fleet_id for f in uow.fleets.list_all()] == [kept]


def test_commit_persists_every_repository_write_and_later_writes_build_on_it(
    store: UnitOfWorkFactory,
) -> None:
    with store(write=True) as uow:
        fleet_id = fleet(uow, "kept")
        uow.installs.record(SkillInstall("claude", "1", T0))
        uow.commit()
    with store(write=True) as uow:
        (agent,) = agents(uow, fleet_id, "member")
        uow.commit()

    with store() as uow:
        assert uow.fleets.get(fleet_id) is not None
        assert [a.agent_id for a in uow.agents.in_fleet(fleet_id)] == [agent]
        assert uow.installs.list() == [SkillInstall("claude", "1", T0)]


def test_writes_before_a_commit_persist_and_writes_after_it_do_not(
    store: UnitOfWorkFactory,
) -> None:
    with store(write=True) as uow:
        before = fleet(uow, "before")
        uow.commit()
        fleet(uow, "after")

    with store() as uow:
        assert [f.name for f in uow.fleets.list_all()] == ["before"]
        assert uow.fleets.get(before) is not None


def test_a_write_sees_its_own_uncommitted_rows(store: UnitOfWorkFactory) -> None:
    with store(write=True) as uow:
        fleet_id = fleet(uow, "fresh")
        assert uow.fleets.get(fleet_id).name == "fresh"  # type: ignore[union-attr]
        assert [f.fleet_id for f in uow.fleets.list_live()] == [fleet_id]


def test_a_read_only_unit_of_work_sees_committed_data_only(store: UnitOfWorkFactory) -> None:
    with store(write=True) as uow:
        committed = fleet(uow, "committed")
        uow.commit()

    with store(write=True) as writer:
        fleet(writer, "in flight")
        with store() as reader:
            seen = [f.fleet_id for f in reader.fleets.list_all()]

    assert seen == [committed]
