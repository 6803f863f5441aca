"""Target lookups shared by the services.

Every lookup answers "not found" with the same words whether the id is unknown,
belongs to another fleet or was deregistered, so no command reveals what lies
outside the caller's fleet.
"""

from __future__ import annotations

from cafleet.application.ports.store import UnitOfWork
from cafleet.domain.errors import NotFound
from cafleet.domain.fleet import Agent, Fleet
from cafleet.domain.message import Message


def existing_fleet(uow: UnitOfWork, fleet_id: int) -> Fleet:
    """The fleet, deleted or not (reads of its history)."""
    fleet = uow.fleets.get(fleet_id)
    if fleet is None:
        raise NotFound(f"fleet {fleet_id} not found.")
    return fleet


def live_fleet(uow: UnitOfWork, fleet_id: int) -> Fleet:
    """A fleet that may be written to: a deleted one is refused as read-only."""
    return existing_fleet(uow, fleet_id).require_live()


def refuse_deleted_fleet(uow: UnitOfWork, fleet_id: int) -> None:
    """Before a target lookup: a deleted fleet is read-only (an unknown one is left to the
    lookup, whose words do not tell an unknown fleet from an unknown agent)."""
    fleet = uow.fleets.get(fleet_id)
    if fleet is not None:
        fleet.require_live()


def agent_of_fleet(uow: UnitOfWork, fleet_id: int, agent_id: int, not_found: str) -> Agent:
    """Any agent the fleet ever had, deregistered ones included (a deleted fleet's history)."""
    agent = uow.agents.get(agent_id)
    if agent is None or agent.fleet_id != fleet_id:
        raise NotFound(not_found)
    return agent


def active_agent(uow: UnitOfWork, fleet_id: int, agent_id: int, not_found: str) -> Agent:
    agent = agent_of_fleet(uow, fleet_id, agent_id, not_found)
    if not agent.is_active:
        raise NotFound(not_found)
    return agent


def acting_agent(uow: UnitOfWork, fleet_id: int, agent_id: int) -> tuple[Fleet, Agent]:
    """The live fleet and the active agent on whose behalf a message command runs."""
    fleet = live_fleet(uow, fleet_id)
    agent = active_agent(uow, fleet_id, agent_id, not_a_member(agent_id, fleet_id))
    return fleet, agent


def message_in_fleet(uow: UnitOfWork, fleet_id: int, task_id: int) -> Message:
    message = uow.messages.get(task_id)
    owner = uow.agents.get(message.context_id) if message is not None else None
    if message is None or owner is None or owner.fleet_id != fleet_id:
        raise NotFound(f"Task {task_id} not found")
    return message


def answered_message(uow: UnitOfWork, fleet_id: int, agent_id: int, task_id: int) -> Message:
    """The message an agent replies to: one of the fleet's that it sent or received (a
    broadcast: it sent it, or got a copy). Any other is refused in an unknown id's words."""
    message = message_in_fleet(uow, fleet_id, task_id)
    if message.seen_by(agent_id):
        return message
    if message.is_summary and any(
        copy.context_id == agent_id for copy in uow.messages.broadcast_copies(message)
    ):
        return message
    raise NotFound(f"Task {task_id} not found")


def not_a_member(agent_id: int, fleet_id: int) -> str:
    return f"agent {agent_id} is not a member of fleet {fleet_id}."


def no_placement_row(agent_id: int) -> str:
    return f"agent {agent_id} has no placement row; it was not spawned via `cafleet member create`."
