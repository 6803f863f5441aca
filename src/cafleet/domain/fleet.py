"""A fleet: an isolated namespace with one root Director and one Administrator, and its
agents with the role rules that belong to them."""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum

from cafleet.domain.errors import Conflict, Invalid, UsageProblem


def read_only(fleet_id: int) -> str:
    """The one refusal of every write to a deleted fleet (CLI and HTTP alike)."""
    return f"fleet {fleet_id} is deleted; its history is read-only"


@dataclass(frozen=True)
class Fleet:
    fleet_id: int
    name: str | None
    created_at: datetime
    deleted_at: datetime | None = None
    director_agent_id: int | None = None

    @property
    def is_deleted(self) -> bool:
        return self.deleted_at is not None

    def require_live(self) -> Fleet:
        """Writes (and the pane verbs) need a fleet that was not deleted; reads of a deleted
        fleet's history go on working."""
        if self.is_deleted:
            raise Conflict(read_only(self.fleet_id))
        return self

    def with_director(self, director_agent_id: int) -> Fleet:
        if self.director_agent_id is not None:
            raise Invalid(f"fleet {self.fleet_id} already has a root Director")
        return replace(self, director_agent_id=director_agent_id)

    def deleted(self, at: datetime) -> Fleet:
        """Soft delete; deleting twice keeps the first time (idempotent)."""
        return self if self.is_deleted else replace(self, deleted_at=at)

    def require_member_director(self, director: Agent | None, director_id: int) -> Agent:
        """Only the fleet's active root Director owns members: no nested teams, and never
        the Administrator."""
        if director is None or director.fleet_id != self.fleet_id or not director.is_active:
            raise UsageProblem(
                f"Director agent '{director_id}' not found or not active in fleet"
                f" '{self.fleet_id}'."
            )
        if director.is_administrator:
            raise UsageProblem("Administrator cannot be a director")
        if self.director_agent_id != director_id:
            raise UsageProblem(
                f"nested teams are not supported; placement director_agent_id {director_id}"
                f" must equal the fleet root Director {self.director_agent_id}."
            )
        return director


class AgentStatus(StrEnum):
    ACTIVE = "active"
    DEREGISTERED = "deregistered"


class CardKind(StrEnum):
    """The marker stored in an agent card; the root Director has none."""

    ADMINISTRATOR = "builtin-administrator"
    MONITORING_MEMBER = "monitoring-member"


class AgentKind(StrEnum):
    DIRECTOR = "director"
    ADMINISTRATOR = "administrator"
    MONITOR = "monitor"
    MEMBER = "member"


DIRECTOR_NAME = "Director"
DIRECTOR_DESCRIPTION = "Root Director for this fleet"
ADMINISTRATOR_NAME = "Administrator"


def administrator_description(fleet_id: int) -> str:
    return f"Built-in administrator agent for fleet {fleet_id}"


@dataclass(frozen=True)
class Agent:
    agent_id: int
    fleet_id: int
    name: str
    description: str
    registered_at: datetime
    status: AgentStatus = AgentStatus.ACTIVE
    deregistered_at: datetime | None = None
    card_kind: CardKind | None = None
    skills: tuple[str, ...] = ()

    @property
    def is_active(self) -> bool:
        return self.status is AgentStatus.ACTIVE

    @property
    def is_administrator(self) -> bool:
        return self.card_kind is CardKind.ADMINISTRATOR

    @property
    def label(self) -> str:
        """How the agent is named where a person sees it beside the panes (herdr's sidebar)."""
        return f"{self.name} #{self.agent_id}"

    def kind(self, fleet: Fleet) -> AgentKind:
        if fleet.director_agent_id == self.agent_id:
            return AgentKind.DIRECTOR
        if self.card_kind is CardKind.ADMINISTRATOR:
            return AgentKind.ADMINISTRATOR
        if self.card_kind is CardKind.MONITORING_MEMBER:
            return AgentKind.MONITOR
        return AgentKind.MEMBER

    def deregistered(self, fleet: Fleet, at: datetime) -> Agent:
        """Soft delete of one member; the Director and the Administrator are protected."""
        if fleet.director_agent_id == self.agent_id:
            raise Invalid("cannot deregister the root Director; use 'cafleet fleet delete' instead")
        if self.is_administrator:
            raise Invalid("Administrator cannot be deregistered")
        return self.retired(at)

    def retired(self, at: datetime) -> Agent:
        """Deregistration as part of deleting the whole fleet: no role is protected."""
        if not self.is_active:
            return self
        return replace(self, status=AgentStatus.DEREGISTERED, deregistered_at=at)

    def card_json(self) -> str:
        card: dict[str, object] = {
            "name": self.name,
            "description": self.description,
            "skills": list(self.skills),
        }
        if self.card_kind is not None:
            card["cafleet"] = {"kind": self.card_kind.value}
        return json.dumps(card, ensure_ascii=False, separators=(",", ":"))


@functools.lru_cache(maxsize=4096)  # a monitor tick reads every card of the fleet
def parse_card(card_json: str) -> tuple[CardKind | None, tuple[str, ...]]:
    """Read the kind marker and skills back from a stored card (tolerates foreign cards)."""
    try:
        card = json.loads(card_json)
    except ValueError:
        return None, ()
    if not isinstance(card, dict):
        return None, ()
    marker = card.get("cafleet")
    kind_value = marker.get("kind") if isinstance(marker, dict) else None
    kind = next((k for k in CardKind if k.value == kind_value), None)
    raw_skills = card.get("skills")
    skills = tuple(str(s) for s in raw_skills) if isinstance(raw_skills, list) else ()
    return kind, skills
