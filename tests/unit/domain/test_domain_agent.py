"""Agent roles: kinds, protected roles, and the stored agent card."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from cafleet.domain.errors import Invalid
from cafleet.domain.fleet import Agent, AgentKind, AgentStatus, CardKind, Fleet, parse_card

T0 = datetime(2026, 1, 1, tzinfo=UTC)
LATER = T0 + timedelta(hours=1)
FLEET = Fleet(fleet_id=1, name="alpha", created_at=T0, director_agent_id=1)


def agent(agent_id: int, card_kind: CardKind | None = None, **extra: object) -> Agent:
    return Agent(agent_id, 1, f"agent-{agent_id}", "desc", T0, card_kind=card_kind, **extra)


@pytest.mark.parametrize(
    ("subject", "kind"),
    [
        (agent(1), AgentKind.DIRECTOR),
        (agent(2, CardKind.ADMINISTRATOR), AgentKind.ADMINISTRATOR),
        (agent(3, CardKind.MONITORING_MEMBER), AgentKind.MONITOR),
        (agent(4), AgentKind.MEMBER),
    ],
)
def test_kind_follows_the_fleet_director_then_the_card(subject: Agent, kind: AgentKind) -> None:
    assert subject.kind(FLEET) is kind


def test_the_director_kind_comes_from_the_fleet_not_from_the_card() -> None:
    odd = agent(1, CardKind.MONITORING_MEMBER)

    assert odd.kind(FLEET) is AgentKind.DIRECTOR
    assert agent(1).kind(Fleet(2, "other", T0, director_agent_id=99)) is AgentKind.MEMBER


def test_deregistering_a_member_marks_it_and_stamps_the_time() -> None:
    gone = agent(4).deregistered(FLEET, LATER)

    assert gone.status is AgentStatus.DEREGISTERED
    assert gone.deregistered_at == LATER
    assert not gone.is_active


def test_the_root_director_cannot_be_deregistered() -> None:
    with pytest.raises(Invalid) as raised:
        agent(1).deregistered(FLEET, LATER)

    assert raised.value.message == (
        "cannot deregister the root Director; use 'cafleet fleet delete' instead"
    )


def test_the_administrator_cannot_be_deregistered() -> None:
    with pytest.raises(Invalid) as raised:
        agent(2, CardKind.ADMINISTRATOR).deregistered(FLEET, LATER)

    assert raised.value.message == "Administrator cannot be deregistered"


def test_retiring_for_a_fleet_delete_spares_no_role_and_keeps_the_first_time() -> None:
    director = agent(1).retired(LATER)
    admin = agent(2, CardKind.ADMINISTRATOR).retired(LATER)

    assert director.status is admin.status is AgentStatus.DEREGISTERED
    assert director.retired(LATER + timedelta(days=1)).deregistered_at == LATER


def test_card_json_of_a_plain_agent_has_no_cafleet_marker() -> None:
    card = json.loads(agent(4, skills=("review",)).card_json())

    assert card == {"name": "agent-4", "description": "desc", "skills": ["review"]}


def test_card_json_is_compact_raw_utf8_and_carries_the_kind() -> None:
    text = Agent(2, 1, "Administrateur é", "d", T0, card_kind=CardKind.ADMINISTRATOR).card_json()

    assert text == (
        '{"name":"Administrateur é","description":"d","skills":[],'
        '"cafleet":{"kind":"builtin-administrator"}}'
    )


@pytest.mark.parametrize("kind", list(CardKind))
def test_parse_card_round_trips_the_kind_and_skills(kind: CardKind) -> None:
    card = agent(5, kind, skills=("a", "b")).card_json()

    assert parse_card(card) == (kind, ("a", "b"))


@pytest.mark.parametrize(
    ("card", "parsed"),
    [
        ("not json at all", (None, ())),
        ("", (None, ())),
        ("[1, 2]", (None, ())),
        ('"a string"', (None, ())),
        ("{}", (None, ())),
        ('{"cafleet": "builtin-administrator"}', (None, ())),
        ('{"cafleet": {"kind": "wizard"}}', (None, ())),
        ('{"cafleet": {}}', (None, ())),
        ('{"skills": "review"}', (None, ())),
        ('{"skills": [1, "two"]}', (None, ("1", "two"))),
        (
            '{"name": "x", "extra": true, "cafleet": {"kind": "monitoring-member", "v": 2}}',
            (CardKind.MONITORING_MEMBER, ()),
        ),
    ],
)
def test_parse_card_tolerates_foreign_and_malformed_cards(
    card: str, parsed: tuple[CardKind | None, tuple[str, ...]]
) -> None:
    assert parse_card(card) == parsed
