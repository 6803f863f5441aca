"""Mapping between table rows and domain objects."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from cafleet.domain.agents.status import AgentStatus as PaneAgentStatus
from cafleet.domain.agents.status import StatusReport
from cafleet.domain.delivery import Delivery, DeliveryState
from cafleet.domain.fleet import Agent, AgentStatus, Fleet, parse_card
from cafleet.domain.message import Message, MessageState, MessageType
from cafleet.domain.monitor import MonitorRuntime, MonitorSchedule
from cafleet.domain.placement import CodingAgent, Multiplexer, PaneLocation, PaneState, Placement
from cafleet.domain.relay import PaneReport, PaneVerb, RelayBeat, RelayRequest, RequestState
from cafleet.domain.search import SearchHit

Row = Any  # a row read by column name: sqlite3.Row, or a SQLAlchemy RowMapping


def ts(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat(timespec="microseconds")


def dt(value: str | None) -> datetime | None:
    return None if value is None else datetime.fromisoformat(value)


def required_dt(value: str) -> datetime:
    return datetime.fromisoformat(value)


def fleet_from(row: Row) -> Fleet:
    return Fleet(
        row["fleet_id"],
        row["name"],
        required_dt(row["created_at"]),
        dt(row["deleted_at"]),
        row["director_agent_id"],
    )


def fleet_values(fleet: Fleet) -> dict[str, Any]:
    return {
        "name": fleet.name,
        "created_at": ts(fleet.created_at),
        "deleted_at": ts(fleet.deleted_at),
        "director_agent_id": fleet.director_agent_id,
    }


def agent_from(row: Row) -> Agent:
    kind, skills = parse_card(row["agent_card_json"])
    return Agent(
        row["agent_id"],
        row["fleet_id"],
        row["name"],
        row["description"],
        required_dt(row["registered_at"]),
        AgentStatus(row["status"]),
        dt(row["deregistered_at"]),
        kind,
        skills,
    )


def agent_values(agent: Agent) -> dict[str, Any]:
    return {
        "fleet_id": agent.fleet_id,
        "name": agent.name,
        "description": agent.description,
        "status": agent.status.value,
        "registered_at": ts(agent.registered_at),
        "deregistered_at": ts(agent.deregistered_at),
        "agent_card_json": agent.card_json(),
    }


def placement_from(row: Row) -> Placement:
    commands = tuple(c for c in (row["agent_commands"] or "").split(",") if c)
    return Placement(
        row["agent_id"],
        row["director_agent_id"],
        Multiplexer(row["backend"]),
        row["mux_session"],
        row["mux_window_id"],
        row["mux_pane_id"],
        CodingAgent(row["coding_agent"]),
        required_dt(row["created_at"]),
        row["mux_socket"],
        commands,
        dt(row["ready_at"]),
        row["ready_rule"],
        row["launch_pad"],
        row["pane_identity"],
        row["identity_digest"],
        row["host"],
    )


def placement_values(p: Placement) -> dict[str, Any]:
    return {
        "director_agent_id": p.director_agent_id,
        "backend": p.backend.value,
        "mux_session": p.session,
        "mux_window_id": p.window_id,
        "mux_pane_id": p.pane_id,
        "coding_agent": p.coding_agent.value,
        "created_at": ts(p.created_at),
        "mux_socket": p.socket,
        "agent_commands": ",".join(p.agent_commands) or None,
        "ready_at": ts(p.ready_at),
        "ready_rule": p.ready_rule,
        "launch_pad": p.launch_pad,
        "pane_identity": p.identity,
        "identity_digest": p.identity_digest,
        "host": p.host,
    }


def message_from(row: Row) -> Message:
    return Message(
        row["task_id"],
        row["context_id"],
        row["from_agent_id"],
        row["to_agent_id"],
        MessageType(row["type"]),
        required_dt(row["created_at"]),
        MessageState(row["status_state"]),
        required_dt(row["status_timestamp"]),
        row["origin_task_id"],
        row["text"],
        bool(row["sender_verified"]),
        row["in_reply_to"],
        row["thread_id"],
    )


def message_values(m: Message) -> dict[str, Any]:
    return {
        "context_id": m.context_id,
        "from_agent_id": m.from_agent_id,
        "to_agent_id": m.to_agent_id,
        "type": m.type.value,
        "created_at": ts(m.created_at),
        "status_state": m.state.value,
        "status_timestamp": ts(m.status_timestamp),
        "origin_task_id": m.origin_task_id,
        "text": m.text,
        "sender_verified": int(m.sender_verified),
        "in_reply_to": m.in_reply_to,
        "thread_id": m.thread_id,
    }


def hit_from(row: Row) -> SearchHit:
    return SearchHit(message_from(row), float(row["score"]), row["snippet"])


def own_id_columns(m: Message) -> tuple[str, ...]:
    """The columns a new message's row takes its own id in: a broadcast summary's origin,
    and the thread of a message that answers nothing."""
    own = ("origin_task_id",) if m.is_summary else ()
    return own + (("thread_id",) if m.thread_id is None else ())


def delivery_from(row: Row) -> Delivery:
    return Delivery(
        row["task_id"],
        row["recipient_agent_id"],
        DeliveryState(row["state"]),
        required_dt(row["created_at"]),
        row["transport"],
        row["pane_id"],
        dt(row["attempted_at"]),
        row["error"],
        row["attempt"],
        row["channel"],
        dt(row["confirmed_at"]),
    )


def delivery_values(d: Delivery) -> dict[str, Any]:
    return {
        "task_id": d.task_id,
        "recipient_agent_id": d.recipient_agent_id,
        "state": d.state.value,
        "transport": d.transport,
        "pane_id": d.pane_id,
        "created_at": ts(d.created_at),
        "attempted_at": ts(d.attempted_at),
        "error": d.error,
        "attempt": d.attempt,
        "channel": d.channel,
        "confirmed_at": ts(d.confirmed_at),
    }


def schedule_from(row: Row) -> MonitorSchedule:
    return MonitorSchedule(
        row["agent_id"],
        row["interval_seconds"],
        bool(row["enabled"]),
        dt(row["last_ping_at"]),
        dt(row["last_stall_check_at"]),
        row["last_native_status"],
    )


def schedule_values(s: MonitorSchedule) -> dict[str, Any]:
    return {
        "interval_seconds": s.interval_seconds,
        "enabled": int(s.enabled),
        "last_ping_at": ts(s.last_ping_at),
        "last_stall_check_at": ts(s.last_stall_check_at),
        "last_native_status": s.last_native_status,
    }


def runtime_from(row: Row) -> MonitorRuntime:
    return MonitorRuntime(
        row["fleet_id"],
        row["pid"],
        row["host"],
        dt(row["started_at"]),
        dt(row["last_tick_at"]),
        row["tick_seconds"],
    )


def runtime_values(r: MonitorRuntime) -> dict[str, Any]:
    return {
        "pid": r.pid,
        "host": r.host,
        "started_at": ts(r.started_at),
        "last_tick_at": ts(r.last_tick_at),
        "tick_seconds": r.tick_seconds,
    }


def beat_from(row: Row) -> RelayBeat:
    pane = None
    if row["mux_pane_id"] is not None:
        pane = PaneLocation(
            Multiplexer(row["backend"]),
            row["mux_session"],
            row["mux_window_id"],
            row["mux_pane_id"],
            row["mux_socket"],
            row["pane_identity"],
            row["host"],
        )
    return RelayBeat(
        row["host"], row["pid"], required_dt(row["started_at"]), required_dt(row["seen_at"]), pane
    )


def beat_values(beat: RelayBeat) -> dict[str, Any]:
    pane = beat.pane
    return {
        "pid": beat.pid,
        "started_at": ts(beat.started_at),
        "seen_at": ts(beat.seen_at),
        "backend": None if pane is None else pane.backend.value,
        "mux_session": None if pane is None else pane.session,
        "mux_window_id": None if pane is None else pane.window_id,
        "mux_pane_id": None if pane is None else pane.pane_id,
        "mux_socket": None if pane is None else pane.socket,
        "pane_identity": None if pane is None else pane.identity,
    }


def report_from(row: Row) -> PaneReport:
    state = row["pane_state"]
    return PaneReport(
        row["agent_id"],
        row["host"],
        None if state is None else PaneState(state),
        StatusReport(PaneAgentStatus(row["agent_status"]), dt(row["status_since"])),
        row["detected"],
    )


def report_values(r: PaneReport) -> dict[str, Any]:
    return {
        "agent_id": r.agent_id,
        "host": r.host,
        "pane_state": None if r.pane is None else r.pane.value,
        "agent_status": r.status.status.value,
        "status_since": ts(r.status.since),
        "detected": r.detected,
    }


def request_from(row: Row) -> RelayRequest:
    return RelayRequest(
        row["host"],
        row["fleet_id"],
        row["agent_id"],
        PaneVerb(row["verb"]),
        row["argument"],
        required_dt(row["created_at"]),
        row["request_id"],
        RequestState(row["state"]),
        row["answer"],
        row["error_kind"],
        dt(row["answered_at"]),
    )


def request_values(r: RelayRequest) -> dict[str, Any]:
    return {
        "host": r.host,
        "fleet_id": r.fleet_id,
        "agent_id": r.agent_id,
        "verb": r.verb.value,
        "argument": r.argument,
        "state": r.state.value,
        "answer": r.answer,
        "error_kind": r.error_kind,
        "created_at": ts(r.created_at),
        "answered_at": ts(r.answered_at),
    }
