"""The JSON shapes of the admin API (its OpenAPI document) and their mapping from read models.

Timestamps are strings in the stored ISO form (UTC, microseconds always shown),
not pydantic datetimes, which would drop zero microseconds and rewrite the offset.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from cafleet.application.admin.views import MessageView, RosterEntry, RuntimeView, SearchView
from cafleet.application.fleets import FleetRow
from cafleet.domain.agents.status import AgentStatus as AgentActivity
from cafleet.domain.bounds import ID, MONITOR_INTERVAL
from cafleet.domain.delivery import Delivery, DeliveryState
from cafleet.domain.fleet import AgentKind, AgentStatus
from cafleet.domain.message import MessageState, MessageType
from cafleet.domain.monitor import MonitorSchedule
from cafleet.domain.placement import CodingAgent

Timestamp = Annotated[str, Field(description="ISO-8601 UTC with microseconds")]
# an id a request names: a positive SQLite INTEGER (cafleet.domain.bounds)
IdIn = Annotated[int, Field(ge=ID.low, le=ID.high)]


def iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat(timespec="microseconds")


def _iso(value: datetime) -> str:
    return value.isoformat(timespec="microseconds")


class ErrorOut(BaseModel):
    detail: str


class FleetOut(BaseModel):
    fleet_id: int
    director_agent_id: int | None
    name: str | None
    created_at: Timestamp
    agent_count: int = Field(description="Active agents, Director and Administrator included")
    deleted_at: Timestamp | None = Field(
        description="When the fleet was deleted (its history is read-only); null while live"
    )

    @staticmethod
    def of(row: FleetRow) -> FleetOut:
        f = row.fleet
        return FleetOut(
            fleet_id=f.fleet_id,
            director_agent_id=f.director_agent_id,
            name=f.name,
            created_at=_iso(f.created_at),
            agent_count=row.agent_count,
            deleted_at=iso(f.deleted_at),
        )


class MonitorOut(BaseModel):
    interval_seconds: int
    last_ping_at: Timestamp | None
    enabled: bool

    @staticmethod
    def of(schedule: MonitorSchedule) -> MonitorOut:
        return MonitorOut(
            interval_seconds=schedule.interval_seconds,
            last_ping_at=iso(schedule.last_ping_at),
            enabled=schedule.enabled,
        )


class MonitorPatch(BaseModel):
    """A partial edit: absent (or null) fields stay as they are; `{}` changes nothing."""

    model_config = ConfigDict(strict=True)

    interval_seconds: (
        Annotated[int, Field(ge=MONITOR_INTERVAL.low, le=MONITOR_INTERVAL.high)] | None
    ) = None
    enabled: bool | None = None


class AgentOut(BaseModel):
    agent_id: int
    name: str
    description: str
    status: AgentStatus
    registered_at: Timestamp
    kind: AgentKind = Field(description="As the CLI says it (`member show`, `member list --all`)")
    monitor: MonitorOut | None
    agent_status: AgentActivity | None = Field(
        description="What the member's coding agent is doing, as `member list` reads it;"
        " null for an agent without a member pane"
    )
    agent_status_since: Timestamp | None = Field(description="Since when, when known")
    coding_agent: CodingAgent | None = Field(
        description="The coding agent its pane runs (`member list`); null without a pane"
    )
    unread: int = Field(description="Messages it owns and has not acknowledged yet")

    @staticmethod
    def of(entry: RosterEntry) -> AgentOut:
        a = entry.agent
        told = entry.agent_status
        return AgentOut(
            agent_id=a.agent_id,
            name=a.name,
            description=a.description,
            status=a.status,
            registered_at=_iso(a.registered_at),
            kind=entry.kind,
            monitor=None if entry.schedule is None else MonitorOut.of(entry.schedule),
            agent_status=None if told is None else told.status,
            agent_status_since=None if told is None else iso(told.since),
            coding_agent=entry.coding_agent,
            unread=entry.unread,
        )


class AgentsOut(BaseModel):
    agents: list[AgentOut]


class MonitorRuntimeOut(BaseModel):
    """As `monitor status` reports the runtime: process fields only while it runs."""

    running: bool
    pid: int | None
    host: str | None
    tick_seconds: int | None = Field(description="Kept after a stop; null if it never ran")
    last_tick_at: Timestamp | None
    last_tick_age_seconds: int | None
    started_at: Timestamp | None

    @staticmethod
    def of(view: RuntimeView) -> MonitorRuntimeOut:
        live = view.live
        return MonitorRuntimeOut(
            running=view.running,
            pid=live.pid if live else None,
            host=live.host if live else None,
            tick_seconds=view.runtime.tick_seconds if view.runtime else None,
            last_tick_at=iso(live.last_tick_at) if live else None,
            last_tick_age_seconds=view.last_tick_age_seconds,
            started_at=iso(live.started_at) if live else None,
        )


class DeliveryOut(BaseModel):
    state: DeliveryState
    channel: str | None = Field(
        description="claude-hook, opencode-http, codex-queue, herdr-prompt or keys"
    )
    attempt: int
    transport: str | None
    error: str | None = Field(description="Skip reason or one-line failure")
    attempted_at: Timestamp | None
    confirmed_at: Timestamp | None = Field(description="When the agent said it took it in")

    @staticmethod
    def of(delivery: Delivery) -> DeliveryOut:
        return DeliveryOut(
            state=delivery.state,
            channel=delivery.channel,
            attempt=delivery.attempt,
            transport=delivery.transport,
            error=delivery.error,
            attempted_at=iso(delivery.attempted_at),
            confirmed_at=iso(delivery.confirmed_at),
        )


class MessageOut(BaseModel):
    task_id: int
    from_agent_id: int
    from_agent_name: str | None
    to_agent_id: int | None
    to_agent_name: str | None
    type: MessageType
    status: MessageState
    created_at: Timestamp
    status_timestamp: Timestamp
    origin_task_id: int | None
    body: str = Field(description="The full text, never truncated")
    delivery: DeliveryOut | None = Field(description="The last push attempt")
    deliveries: list[DeliveryOut] = Field(description="Every push attempt, first to last")
    sender_verified: bool = Field(
        description="Sent from the sender's own member pane, proven by its member secret"
    )
    in_reply_to: int | None = Field(description="The message this one answers")
    thread_id: int = Field(description="The message that started this one's thread")

    @staticmethod
    def of(view: MessageView) -> MessageOut:
        m = view.message
        return MessageOut(
            task_id=m.task_id,
            from_agent_id=m.from_agent_id,
            from_agent_name=view.from_agent_name,
            to_agent_id=m.to_agent_id,
            to_agent_name=view.to_agent_name,
            type=m.type,
            status=m.state,
            created_at=_iso(m.created_at),
            status_timestamp=_iso(m.status_timestamp),
            origin_task_id=m.origin_task_id,
            body=m.text,
            delivery=None if view.delivery is None else DeliveryOut.of(view.delivery),
            deliveries=[DeliveryOut.of(d) for d in view.attempts],
            sender_verified=m.sender_verified,
            in_reply_to=m.in_reply_to,
            thread_id=m.thread,
        )


class MessagesOut(BaseModel):
    messages: list[MessageOut]

    @staticmethod
    def of(views: list[MessageView]) -> MessagesOut:
        return MessagesOut(messages=[MessageOut.of(v) for v in views])


class SendIn(BaseModel):
    model_config = ConfigDict(strict=True)

    to_agent_id: IdIn | Literal["*"] = Field(description='An agent id, or "*" to broadcast')
    text: str
    from_agent_id: IdIn | None = Field(
        default=None, description="Optional; when given it must be the fleet Administrator"
    )
    in_reply_to: IdIn | None = Field(
        default=None,
        description="A message the Administrator sent or received: the new one joins its"
        " thread (not with a broadcast)",
    )

    @field_validator("text")
    @classmethod
    def storable(cls, text: str) -> str:
        """JSON escapes can spell lone surrogates, which no UTF-8 database can store."""
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError("text must be valid Unicode (no lone surrogates)") from None
        return text


class SearchHitOut(BaseModel):
    message: MessageOut
    score: float = Field(description="Higher is better; comparable within one search only")
    snippet: str = Field(description="The body around the match, matched words within « »")


class SearchOut(BaseModel):
    hits: list[SearchHitOut]

    @staticmethod
    def of(views: list[SearchView]) -> SearchOut:
        hits = [
            SearchHitOut(message=MessageOut.of(v.view), score=v.score, snippet=v.snippet)
            for v in views
        ]
        return SearchOut(hits=hits)


class SendOut(BaseModel):
    task_id: int = Field(description="The message, or the broadcast summary")
    status: MessageState = Field(description="input_required, or completed for a broadcast")
    unrecorded: str | None = Field(
        default=None,
        description="Set when the store failed after the message was stored (its error):"
        " the message is sent, but what became of its preview is not (all) recorded."
        " Do not send it again",
    )
