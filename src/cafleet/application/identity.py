"""Whether a command's acting agent is the member whose pane ran it.

A caller with no credential (the Director, a user's shell) acts as any agent it names, as
before, and is recorded unverified; a member pane acts only as itself, proven by its secret.
"""

from __future__ import annotations

from cafleet.application.lookups import (
    acting_agent,
    agent_of_fleet,
    existing_fleet,
    not_a_member,
)
from cafleet.application.ports.store import UnitOfWork
from cafleet.domain.fleet import Agent, Fleet
from cafleet.domain.identity import MemberCredential


def verified_actor(
    uow: UnitOfWork, fleet_id: int, agent_id: int, caller: MemberCredential | None
) -> tuple[Agent, bool]:
    """The active acting agent and whether the caller proved to be it; a member pane that
    claims another id, or whose secret does not match, is refused."""
    if caller is not None:  # before the lookup: another id is refused as such
        caller.refuse_other(agent_id)
    _, agent = acting_agent(uow, fleet_id, agent_id)
    return agent, caller is not None and _matches(uow, agent_id, caller)


def history_reader(
    uow: UnitOfWork, fleet_id: int, agent_id: int, caller: MemberCredential | None
) -> Fleet:
    """The fleet whose messages the agent reads. A live fleet asks for the verified active
    actor; a deleted one for any agent it had, since all of them were deregistered and
    their secrets' digests went with the placements."""
    fleet = existing_fleet(uow, fleet_id)
    if not fleet.is_deleted:
        verified_actor(uow, fleet_id, agent_id, caller)
        return fleet
    if caller is not None:
        caller.refuse_other(agent_id)
    agent_of_fleet(uow, fleet_id, agent_id, not_a_member(agent_id, fleet_id))
    return fleet


def proven(uow: UnitOfWork, agent_id: int, caller: MemberCredential | None) -> bool:
    """Whether the caller proved to be `agent_id`; a member pane claiming another id, or
    whose secret does not match, is refused."""
    if caller is None:
        return False
    caller.refuse_other(agent_id)
    return _matches(uow, agent_id, caller)


def _matches(uow: UnitOfWork, agent_id: int, caller: MemberCredential) -> bool:
    placement = uow.placements.get(agent_id)
    caller.require_match(None if placement is None else placement.identity_digest)
    return True
