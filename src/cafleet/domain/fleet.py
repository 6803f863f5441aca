"""A fleet: an isolated namespace with one root Director and one Administrator."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cafleet.domain.fleet import Agent

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
