"""A fleet: an isolated namespace with one root Director and one Administrator."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

from cafleet.domain.errors import Invalid, NotFound


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
        """Messaging and member commands only work in a fleet that was not deleted."""
        if self.is_deleted:
            raise NotFound(f"fleet {self.fleet_id} not found.")
        return self

    def with_director(self, director_agent_id: int) -> Fleet:
        if self.director_agent_id is not None:
            raise Invalid(f"fleet {self.fleet_id} already has a root Director")
        return replace(self, director_agent_id=director_agent_id)

    def deleted(self, at: datetime) -> Fleet:
        """Soft delete; deleting twice keeps the first time (idempotent)."""
        return self if self.is_deleted else replace(self, deleted_at=at)
