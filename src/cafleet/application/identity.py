"""Whether a command's acting agent is the member whose pane ran it.

A caller with no credential (the Director, a user's shell) acts as any agent it names, as
before, and is recorded unverified; a member pane acts only as itself, proven by its secret.
"""

from __future__ import annotations

from cafleet.application.lookups import acting_agent
from cafleet.application.ports import UnitOfWork
from cafleet.domain.agent import Agent
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
