"""The JSON routes under /api/. Each parses, calls one AdminService method, reshapes."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query

from cafleet.application.admin.views import DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, Page
from cafleet.domain.bounds import ID
from cafleet.domain.search import SearchQuery
from cafleet.entrypoints.http.errors import error_responses
from cafleet.entrypoints.http.schemas import (
    AgentOut,
    AgentsOut,
    FleetOut,
    MessagesOut,
    MonitorOut,
    MonitorPatch,
    MonitorRuntimeOut,
    SearchOut,
    SendIn,
    SendOut,
)
from cafleet.entrypoints.http.scoping import Admin, ReadableFleet, WritableFleet

router = APIRouter(prefix="/api")

READ_ERRORS = error_responses(400, 401, 404, 503)
WRITE_ERRORS = error_responses(400, 401, 403, 404, 409, 415, 503)

AgentId = Annotated[int, Path(ge=ID.low, le=ID.high, description="An agent of the fleet")]
Limit = Annotated[
    int,
    Query(ge=1, le=MAX_PAGE_SIZE, description="At most this many messages, newest first"),
]
Before = Annotated[
    int | None, Query(ge=1, description="Only messages with a smaller task_id (older)")
]


@router.get(
    "/fleets",
    response_model=list[FleetOut],
    summary="Fleets not deleted, newest first (include_deleted: deleted ones too)",
    responses=error_responses(400, 401, 503),
)
def list_fleets(
    admin: Admin,
    include_deleted: Annotated[
        bool, Query(description="Also list deleted fleets, whose history stays readable")
    ] = False,
) -> list[FleetOut]:
    return [FleetOut.of(row) for row in admin.fleets(include_deleted=include_deleted)]


@router.get(
    "/agents",
    response_model=AgentsOut,
    summary="Active agents, plus deregistered agents that own or sent a message",
    responses=READ_ERRORS,
)
def list_agents(admin: Admin, fleet_id: ReadableFleet) -> AgentsOut:
    return AgentsOut(agents=[AgentOut.of(entry) for entry in admin.roster(fleet_id)])


@router.get(
    "/monitor",
    response_model=MonitorRuntimeOut,
    summary="Whether the fleet's monitor loop runs",
    responses=READ_ERRORS,
)
def monitor_runtime(admin: Admin, fleet_id: ReadableFleet) -> MonitorRuntimeOut:
    return MonitorRuntimeOut.of(admin.monitor_runtime(fleet_id))


@router.get(
    "/agents/{agent_id}/monitor",
    response_model=MonitorOut,
    summary="One watched agent's schedule",
    responses=READ_ERRORS,
)
def agent_monitor(admin: Admin, fleet_id: ReadableFleet, agent_id: AgentId) -> MonitorOut:
    return MonitorOut.of(admin.schedule(fleet_id, agent_id))


@router.patch(
    "/agents/{agent_id}/monitor",
    response_model=MonitorOut,
    summary="Change a watched agent's interval or switch (partial; {} changes nothing)",
    responses=WRITE_ERRORS,
)
def update_agent_monitor(
    admin: Admin, fleet_id: WritableFleet, agent_id: AgentId, change: MonitorPatch
) -> MonitorOut:
    schedule = admin.reschedule(fleet_id, agent_id, change.interval_seconds, change.enabled)
    return MonitorOut.of(schedule)


@router.get(
    "/agents/{agent_id}/inbox",
    response_model=MessagesOut,
    summary="Messages the agent owns, every state, newest first",
    responses=READ_ERRORS,
)
def agent_inbox(
    admin: Admin,
    fleet_id: ReadableFleet,
    agent_id: AgentId,
    limit: Limit = DEFAULT_PAGE_SIZE,
    before: Before = None,
) -> MessagesOut:
    return MessagesOut.of(admin.inbox(fleet_id, agent_id, Page(limit, before)))


@router.get(
    "/agents/{agent_id}/sent",
    response_model=MessagesOut,
    summary="Messages the agent sent, newest first",
    responses=READ_ERRORS,
)
def agent_sent(
    admin: Admin,
    fleet_id: ReadableFleet,
    agent_id: AgentId,
    limit: Limit = DEFAULT_PAGE_SIZE,
    before: Before = None,
) -> MessagesOut:
    return MessagesOut.of(admin.sent(fleet_id, agent_id, Page(limit, before)))


@router.get(
    "/timeline",
    response_model=MessagesOut,
    summary="Messages sent by the fleet's agents, newest first",
    responses=READ_ERRORS,
)
def timeline(
    admin: Admin, fleet_id: ReadableFleet, limit: Limit = DEFAULT_PAGE_SIZE, before: Before = None
) -> MessagesOut:
    return MessagesOut.of(admin.timeline(fleet_id, Page(limit, before)))


@router.post(
    "/messages/send",
    response_model=SendOut,
    response_model_exclude_none=True,  # `unrecorded` only when the store failed
    summary='Send as the fleet Administrator; to_agent_id "*" broadcasts',
    description="Answers after the push attempts finished.",
    responses=WRITE_ERRORS,
)
def send_message(admin: Admin, fleet_id: WritableFleet, message: SendIn) -> SendOut:
    receipt = admin.send(
        fleet_id, message.to_agent_id, message.text, message.from_agent_id, message.in_reply_to
    )
    return SendOut(task_id=receipt.task_id, status=receipt.state, unrecorded=receipt.unrecorded)


@router.get(
    "/search",
    response_model=SearchOut,
    summary="The fleet's messages matching the words of q, best first",
    description="Every word of q must occur; quotes, operators and * are matched as text"
    " unless raw is true (the store's own syntax: FTS5 on SQLite, to_tsquery on PostgreSQL)."
    " A broadcast counts once unless to_agent_id names a recipient.",
    responses=READ_ERRORS,
)
def search(
    admin: Admin,
    fleet_id: ReadableFleet,
    q: Annotated[str, Query(min_length=1, max_length=1000, description="The words to find")],
    from_agent_id: Annotated[int | None, Query(ge=ID.low, le=ID.high)] = None,
    to_agent_id: Annotated[int | None, Query(ge=ID.low, le=ID.high)] = None,
    since: Annotated[
        str | None, Query(max_length=64, description="An ISO time, or an age: 30m, 2h, 7d")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE_SIZE)] = 20,
    raw: bool = False,
) -> SearchOut:
    query = SearchQuery(
        q,
        raw=raw,
        from_agent_id=from_agent_id,
        to_agent_id=to_agent_id,
        since=None if since is None else admin.since(since),
        limit=limit,
    )
    return SearchOut.of(admin.search(fleet_id, query))
