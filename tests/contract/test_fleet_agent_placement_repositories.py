"""FleetRepository, AgentRepository and PlacementRepository: the same end state read back
through the port over every store of the contract."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

import pytest

from cafleet.application.ports.store import UnitOfWorkFactory
from cafleet.domain.fleet import Agent, AgentStatus, CardKind, Fleet
from cafleet.domain.placement import CodingAgent, Multiplexer, Placement

from .records import ODD_STAMP, ODD_TEXT, T0, agents, assert_same, at, fleet
from .stores import REFUSALS


def test_fleet_ids_increase_and_a_missing_fleet_is_none(store: UnitOfWorkFactory) -> None:
    with store(write=True) as uow:
        first, second = fleet(uow, "a"), fleet(uow, "b")
        uow.commit()
    with store(write=True) as uow:
        third = fleet(uow, "c")
        uow.commit()

    assert first < second < third
    with store() as uow:
        assert [uow.fleets.get(i).name for i in (first, second, third)] == ["a", "b", "c"]  # type: ignore[union-attr]
        assert uow.fleets.get(third + 1) is None


@pytest.mark.parametrize("name", [ODD_TEXT, None])
def test_a_fleet_round_trips_every_field(store: UnitOfWorkFactory, name: str | None) -> None:
    with store(write=True) as uow:
        fleet_id = uow.fleets.add(Fleet(0, name, ODD_STAMP))
        (director,) = agents(uow, fleet_id, "director")
        stored = Fleet(fleet_id, name, ODD_STAMP, ODD_STAMP.replace(microsecond=1), director)
        uow.fleets.save(stored)
        uow.commit()

    with store() as uow:
        got = uow.fleets.get(fleet_id)

    assert_same(got, stored)


def test_fleet_lists_are_newest_first_ties_by_higher_id_and_live_skips_deleted(
    store: UnitOfWorkFactory,
) -> None:
    with store(write=True) as uow:
        old = fleet(uow, "old", at(0))
        tie_low = fleet(uow, "tie-low", at(5))
        newest = fleet(uow, "newest", at(9))
        tie_high = fleet(uow, "tie-high", at(5))
        gone = fleet(uow, "gone", at(7))
        uow.fleets.save(uow.fleets.get(gone).deleted(at(8)))  # type: ignore[union-attr]
        uow.commit()

    with store() as uow:
        live = [f.fleet_id for f in uow.fleets.list_live()]
        every = [f.fleet_id for f in uow.fleets.list_all()]

    assert every == [newest, gone, tie_high, tie_low, old]
    assert live == [newest, tie_high, tie_low, old]


def test_fleet_lists_of_an_empty_store_are_empty(store: UnitOfWorkFactory) -> None:
    with store() as uow:
        assert (uow.fleets.list_live(), uow.fleets.list_all()) == ([], [])


def test_saving_a_fleet_that_was_never_added_stores_nothing(store: UnitOfWorkFactory) -> None:
    with store(write=True) as uow:
        uow.fleets.save(Fleet(41, "ghost", T0))
        uow.commit()

    with store() as uow:
        assert (uow.fleets.get(41), uow.fleets.list_all()) == (None, [])


def test_agent_ids_increase_and_a_missing_agent_is_none(store: UnitOfWorkFactory) -> None:
    with store(write=True) as uow:
        fleet_id = fleet(uow)
        ids = agents(uow, fleet_id, "a", "b", "c")
        uow.commit()

    assert ids == sorted(ids) and len(set(ids)) == 3
    with store() as uow:
        assert [uow.agents.get(i).name for i in ids] == ["a", "b", "c"]  # type: ignore[union-attr]
        assert uow.agents.get(ids[-1] + 1) is None


@pytest.mark.parametrize(
    ("status", "left_at", "kind", "skills"),
    [
        (AgentStatus.ACTIVE, None, None, ()),
        (AgentStatus.DEREGISTERED, ODD_STAMP, CardKind.ADMINISTRATOR, ("review", ODD_TEXT)),
        (AgentStatus.ACTIVE, None, CardKind.MONITORING_MEMBER, ("watch",)),
    ],
)
def test_an_agent_round_trips_every_field(
    store: UnitOfWorkFactory,
    status: AgentStatus,
    left_at: datetime | None,
    kind: CardKind | None,
    skills: tuple[str, ...],
) -> None:
    with store(write=True) as uow:
        fleet_id = fleet(uow)
        added = Agent(0, fleet_id, "first", "d", T0)
        agent_id = uow.agents.add(added)
        stored = Agent(
            agent_id, fleet_id, ODD_TEXT, ODD_TEXT, ODD_STAMP, status, left_at, kind, skills
        )
        uow.agents.save(stored)
        uow.commit()

    with store() as uow:
        got = uow.agents.get(agent_id)

    assert_same(got, stored)


def test_in_fleet_lists_one_fleets_agents_in_id_order_active_only_by_default(
    store: UnitOfWorkFactory,
) -> None:
    with store(write=True) as uow:
        mine, other = fleet(uow, "mine"), fleet(uow, "other")
        first, left, last = agents(uow, mine, "first", "left", "last")
        agents(uow, other, "stranger")
        uow.agents.save(uow.agents.get(left).retired(at(1)))  # type: ignore[union-attr]
        uow.commit()

    with store() as uow:
        active = [a.agent_id for a in uow.agents.in_fleet(mine)]
        every = [a.agent_id for a in uow.agents.in_fleet(mine, active_only=False)]
        nobody = uow.agents.in_fleet(other + 1, active_only=False)

    assert active == [first, last]
    assert every == [first, left, last]
    assert nobody == []


def test_count_active_counts_active_agents_per_asked_fleet_and_omits_empty_ones(
    store: UnitOfWorkFactory,
) -> None:
    with store(write=True) as uow:
        busy, retired, unasked, empty = (fleet(uow, n) for n in ("b", "r", "u", "e"))
        agents(uow, busy, "one", "two")
        (gone,) = agents(uow, retired, "gone")
        uow.agents.save(uow.agents.get(gone).retired(at(1)))  # type: ignore[union-attr]
        agents(uow, unasked, "three")
        uow.commit()

    with store() as uow:
        counts = uow.agents.count_active(iter([busy, retired, empty]))
        none_asked = uow.agents.count_active([])

    assert counts == {busy: 2}
    assert none_asked == {}


def test_saving_an_agent_that_was_never_added_stores_nothing(store: UnitOfWorkFactory) -> None:
    with store(write=True) as uow:
        fleet_id = fleet(uow)
        uow.agents.save(Agent(77, fleet_id, "ghost", "d", T0))
        uow.commit()

    with store() as uow:
        assert uow.agents.get(77) is None
        assert uow.agents.in_fleet(fleet_id, active_only=False) == []


def placement(agent_id: int, director_id: int | None, **fields: object) -> Placement:
    base = Placement(
        agent_id, director_id, Multiplexer.TMUX, "s", "@1", "%1", CodingAgent.CLAUDE, T0
    )
    return replace(base, **fields)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "fields",
    [
        {},
        {"pane_id": None},
        {
            "backend": Multiplexer.HERDR,
            "session": ODD_TEXT,
            "window_id": "w:7",
            "pane_id": "p_3",
            "coding_agent": CodingAgent.CODEX,
            "created_at": ODD_STAMP,
            "socket": "/run/user/1000/herdr.sock",
            "agent_commands": ("codex", "node"),
            "ready_at": ODD_STAMP.replace(microsecond=999999),
            "ready_rule": "prompt-seen",
            "launch_pad": "/var/pads/7 with space",
            "identity": "pane:42:boot-uuid",
            "identity_digest": "sha256:" + "ab" * 32,
            "host": "build-server.example",
        },
    ],
    ids=["defaults", "pending-pane", "every-field"],
)
def test_a_placement_round_trips_every_field(
    store: UnitOfWorkFactory, fields: dict[str, object]
) -> None:
    with store(write=True) as uow:
        director, member = agents(uow, fleet(uow), "director", "member")
        uow.placements.add(placement(member, director))
        stored = placement(member, director, **fields)
        uow.placements.save(stored)
        uow.placements.add(placement(director, None, ready_at=T0, ready_rule="director"))
        uow.commit()

    with store() as uow:
        got = uow.placements.get(member)
        own = uow.placements.get(director)

    assert_same(got, stored)
    assert own == placement(director, None, ready_at=T0, ready_rule="director")


def test_placements_for_agents_remove_and_missing(store: UnitOfWorkFactory) -> None:
    with store(write=True) as uow:
        director, kept, removed, bare = agents(uow, fleet(uow), "d", "kept", "removed", "bare")
        for agent_id in (director, kept, removed):
            uow.placements.add(placement(agent_id, director, pane_id=f"%{agent_id}"))
        uow.commit()
    with store(write=True) as uow:
        uow.placements.remove(removed)
        uow.placements.remove(bare)  # removing what is not there is no error
        uow.commit()

    with store() as uow:
        found = uow.placements.for_agents(iter([kept, removed, bare, director]))
        assert uow.placements.get(removed) is None
        assert uow.placements.for_agents([]) == {}

    assert {a: p.pane_id for a, p in found.items()} == {kept: f"%{kept}", director: f"%{director}"}


def test_a_second_placement_for_one_agent_is_refused(store: UnitOfWorkFactory) -> None:
    with store(write=True) as uow:
        director, member = agents(uow, fleet(uow), "director", "member")
        uow.placements.add(placement(member, director, pane_id="%1"))
        uow.commit()

    with pytest.raises(REFUSALS), store(write=True) as uow:
        uow.placements.add(placement(member, director, pane_id="%2"))
        uow.commit()

    with store() as uow:
        assert uow.placements.get(member).pane_id == "%1"  # type: ignore[union-attr]


def test_saving_a_placement_that_was_never_added_stores_nothing(
    store: UnitOfWorkFactory,
) -> None:
    with store(write=True) as uow:
        director, member = agents(uow, fleet(uow), "director", "member")
        uow.placements.save(placement(member, director))
        uow.commit()

    with store() as uow:
        assert uow.placements.get(member) is None
