"""Target lookups shared by the services.

Every lookup answers "not found" with the same words whether the id is unknown,
belongs to another fleet or was deregistered, so no command reveals what lies
outside the caller's fleet.
"""

from __future__ import annotations

from cafleet.application.ports import UnitOfWork
from cafleet.domain.agent import Agent
from cafleet.domain.errors import NotFound
from cafleet.domain.fleet import Fleet
from cafleet.domain.message import Message


def live_fleet(uow: UnitOfWork, fleet_id: int) -> Fleet:
    fleet = uow.fleets.get(fleet_id)
    if fleet is None:
        raise NotFound(f"fleet {fleet_id} not found.")
    return fleet.require_live()


def active_agent(uow: UnitOfWork, fleet_id: int, agent_id: int, not_found: str) -> Agent:
    agent = uow.agents.get(agent_id)
    if agent is None or agent.fleet_id != fleet_id or not agent.is_active:
        raise NotFound(not_found)
    return agent


def acting_agent(uow: UnitOfWork, fleet_id: int, agent_id: int) -> tuple[Fleet, Agent]:
    """The live fleet and the active agent on whose behalf a message command runs."""
    fleet = live_fleet(uow, fleet_id)
    agent = active_agent(
        uow, fleet_id, agent_id, f"agent {agent_id} is not a member of fleet {fleet_id}."
    )
    return fleet, agent


def message_in_fleet(uow: UnitOfWork, fleet_id: int, task_id: int) -> Message:
    message = uow.messages.get(task_id)
    owner = uow.agents.get(message.context_id) if message is not None else None
    if message is None or owner is None or owner.fleet_id != fleet_id:
        raise NotFound(f"Task {task_id} not found")
    return message


def no_placement_row(agent_id: int) -> str:
    return f"agent {agent_id} has no placement row; it was not spawned via `cafleet member create`."
