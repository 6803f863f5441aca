"""Repositories over SQLAlchemy Core. They run inside a unit of work's connection."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Connection,
    CursorResult,
    Select,
    bindparam,
    delete,
    func,
    insert,
    select,
    update,
)
from sqlalchemy.exc import DBAPIError

from cafleet.adapters.sqlite import rows
from cafleet.adapters.sqlite.search import query_error, search_statement
from cafleet.adapters.sqlite.tables import (
    agent_placements,
    agents,
    deliveries,
    fleets,
    monitor_config,
    monitor_runtime,
    pane_reports,
    relay_requests,
    relays,
    skill_installs,
    tasks,
)
from cafleet.application.ports import Activity, ConversationMark
from cafleet.domain.agent import Agent, AgentStatus
from cafleet.domain.delivery import Delivery, DeliveryState
from cafleet.domain.fleet import Fleet
from cafleet.domain.message import Message, MessageState, MessageType
from cafleet.domain.monitor import MonitorRuntime, MonitorSchedule
from cafleet.domain.placement import Placement
from cafleet.domain.relay import PaneReport, RelayBeat, RelayRequest, RequestState
from cafleet.domain.search import SearchHit, SearchQuery
from cafleet.domain.skills import SkillInstall

_IN_CHUNK = 500


def _new_id(result: CursorResult[Any]) -> int:
    key = result.inserted_primary_key
    assert key is not None, "insert without a primary key"
    return int(key[0])


class SqlFleets:
    def __init__(self, conn: Connection) -> None:
        self._c = conn

    def add(self, fleet: Fleet) -> int:
        result = self._c.execute(insert(fleets).values(rows.fleet_values(fleet)))
        return _new_id(result)

    def get(self, fleet_id: int) -> Fleet | None:
        row = (
            self._c.execute(select(fleets).where(fleets.c.fleet_id == fleet_id)).mappings().first()
        )
        return None if row is None else rows.fleet_from(row)

    def save(self, fleet: Fleet) -> None:
        self._c.execute(
            update(fleets)
            .where(fleets.c.fleet_id == fleet.fleet_id)
            .values(rows.fleet_values(fleet))
        )

    def list_live(self) -> list[Fleet]:
        return self._newest_first(select(fleets).where(fleets.c.deleted_at.is_(None)))

    def list_all(self) -> list[Fleet]:
        return self._newest_first(select(fleets))

    def _newest_first(self, query: Select[Any]) -> list[Fleet]:
        ordered = query.order_by(fleets.c.created_at.desc(), fleets.c.fleet_id.desc())
        return [rows.fleet_from(r) for r in self._c.execute(ordered).mappings()]


class SqlAgents:
    def __init__(self, conn: Connection) -> None:
        self._c = conn

    def add(self, agent: Agent) -> int:
        result = self._c.execute(insert(agents).values(rows.agent_values(agent)))
        return _new_id(result)

    def get(self, agent_id: int) -> Agent | None:
        row = (
            self._c.execute(select(agents).where(agents.c.agent_id == agent_id)).mappings().first()
        )
        return None if row is None else rows.agent_from(row)

    def save(self, agent: Agent) -> None:
        self._c.execute(
            update(agents)
            .where(agents.c.agent_id == agent.agent_id)
            .values(rows.agent_values(agent))
        )

    def in_fleet(self, fleet_id: int, *, active_only: bool = True) -> list[Agent]:
        query = select(agents).where(agents.c.fleet_id == fleet_id)
        if active_only:
            query = query.where(agents.c.status == AgentStatus.ACTIVE.value)
        return [
            rows.agent_from(r)
            for r in self._c.execute(query.order_by(agents.c.agent_id)).mappings()
        ]

    def count_active(self, fleet_ids: Iterable[int]) -> dict[int, int]:
        ids = list(fleet_ids)
        if not ids:
            return {}
        query = (
            select(agents.c.fleet_id, func.count())
            .where(agents.c.fleet_id.in_(ids), agents.c.status == AgentStatus.ACTIVE.value)
            .group_by(agents.c.fleet_id)
        )
        return {int(fid): int(n) for fid, n in self._c.execute(query)}


class SqlPlacements:
    def __init__(self, conn: Connection) -> None:
        self._c = conn

    def add(self, placement: Placement) -> None:
        self._c.execute(
            insert(agent_placements).values(
                agent_id=placement.agent_id, **rows.placement_values(placement)
            )
        )

    def get(self, agent_id: int) -> Placement | None:
        query = select(agent_placements).where(agent_placements.c.agent_id == agent_id)
        row = self._c.execute(query).mappings().first()
        return None if row is None else rows.placement_from(row)

    def save(self, placement: Placement) -> None:
        self._c.execute(
            update(agent_placements)
            .where(agent_placements.c.agent_id == placement.agent_id)
            .values(rows.placement_values(placement))
        )

    def remove(self, agent_id: int) -> None:
        self._c.execute(delete(agent_placements).where(agent_placements.c.agent_id == agent_id))

    def for_agents(self, agent_ids: Iterable[int]) -> dict[int, Placement]:
        ids = list(agent_ids)
        if not ids:
            return {}
        query = select(agent_placements).where(agent_placements.c.agent_id.in_(ids))
        return {r["agent_id"]: rows.placement_from(r) for r in self._c.execute(query).mappings()}


class SqlMessages:
    def __init__(self, conn: Connection, search: MessageSearch | None = None) -> None:
        self._c = conn
        self._search = search or fts5_search  # the engine's full-text search (SqlEngineRules)

    def add(self, message: Message) -> int:
        result = self._c.execute(insert(tasks).values(rows.message_values(message)))
        task_id = _new_id(result)
        own = rows.own_id_columns(message)
        if own:
            self._c.execute(
                update(tasks).where(tasks.c.task_id == task_id).values(dict.fromkeys(own, task_id))
            )
        return task_id

    def get(self, task_id: int) -> Message | None:
        row = self._c.execute(select(tasks).where(tasks.c.task_id == task_id)).mappings().first()
        return None if row is None else rows.message_from(row)

    def save(self, message: Message) -> None:
        self._c.execute(
            update(tasks)
            .where(tasks.c.task_id == message.task_id)
            .values(rows.message_values(message))
        )

    def pending_for(self, agent_id: int, limit: int | None = None) -> list[Message]:
        query = (
            select(tasks)
            .where(
                tasks.c.context_id == agent_id,
                tasks.c.status_state == MessageState.INPUT_REQUIRED.value,
                tasks.c.type != MessageType.BROADCAST_SUMMARY.value,
            )
            .order_by(tasks.c.status_timestamp.desc(), tasks.c.task_id.desc())
            .limit(limit)
        )
        return [rows.message_from(r) for r in self._c.execute(query).mappings()]

    def activity(self, agent_ids: Sequence[int]) -> dict[int, Activity]:
        if not agent_ids:
            return {}
        sent = self._newest(tasks.c.from_agent_id, tasks.c.created_at, agent_ids)
        received = self._newest(tasks.c.context_id, tasks.c.created_at, agent_ids)
        acked = self._newest(
            tasks.c.context_id,
            tasks.c.status_timestamp,
            agent_ids,
            tasks.c.status_state == MessageState.COMPLETED.value,
        )
        return {
            a: Activity(rows.dt(sent.get(a)), rows.dt(received.get(a)), rows.dt(acked.get(a)))
            for a in agent_ids
        }

    def _newest(
        self,
        agent: ColumnElement[Any],
        stamp: ColumnElement[Any],
        agent_ids: Sequence[int],
        *conditions: ColumnElement[bool],
    ) -> dict[int, str]:
        """The newest stamp per agent over ordinary messages (summaries excluded)."""
        query = (
            select(agent, func.max(stamp))
            .where(
                agent.in_(agent_ids),
                tasks.c.type != MessageType.BROADCAST_SUMMARY.value,
                *conditions,
            )
            .group_by(agent)
        )
        return {int(agent_id): newest for agent_id, newest in self._c.execute(query)}

    def pending_counts(self, agent_ids: Sequence[int]) -> dict[int, int]:
        if not agent_ids:
            return {}
        query = (
            select(tasks.c.context_id, func.count())
            .where(
                tasks.c.context_id.in_(agent_ids),
                tasks.c.status_state == MessageState.INPUT_REQUIRED.value,
                tasks.c.type != MessageType.BROADCAST_SUMMARY.value,
            )
            .group_by(tasks.c.context_id)
        )
        return {int(agent): int(n) for agent, n in self._c.execute(query)}

    def timeline(self, fleet_id: int, limit: int, before: int | None = None) -> list[Message]:
        senders = select(agents.c.agent_id).where(agents.c.fleet_id == fleet_id)
        query = select(tasks).where(
            tasks.c.from_agent_id.in_(senders),
            tasks.c.type != MessageType.BROADCAST_SUMMARY.value,
        )
        if before is not None:
            query = query.where(tasks.c.task_id < before)
        query = query.order_by(tasks.c.created_at.desc(), tasks.c.task_id.desc()).limit(limit)
        return [rows.message_from(r) for r in self._c.execute(query).mappings()]

    def owned_by(self, agent_id: int, limit: int, before: int | None = None) -> list[Message]:
        return self._page(tasks.c.context_id == agent_id, limit, before)

    def sent_by(self, agent_id: int, limit: int, before: int | None = None) -> list[Message]:
        return self._page(tasks.c.from_agent_id == agent_id, limit, before)

    def _page(
        self, condition: ColumnElement[bool], limit: int, before: int | None
    ) -> list[Message]:
        """Ordinary messages matching condition, newest first (id order is time order)."""
        query = select(tasks).where(condition, tasks.c.type != MessageType.BROADCAST_SUMMARY.value)
        if before is not None:
            query = query.where(tasks.c.task_id < before)
        query = query.order_by(tasks.c.created_at.desc(), tasks.c.task_id.desc()).limit(limit)
        return [rows.message_from(r) for r in self._c.execute(query).mappings()]

    def broadcast_copies(self, summary: Message) -> list[Message]:
        query = (  # the sender narrows it to its index; origin alone has none
            select(tasks)
            .where(
                tasks.c.from_agent_id == summary.from_agent_id,
                tasks.c.origin_task_id == summary.task_id,
                tasks.c.type != MessageType.BROADCAST_SUMMARY.value,
            )
            .order_by(tasks.c.task_id)
        )
        return [rows.message_from(r) for r in self._c.execute(query).mappings()]

    def search(self, fleet_id: int, query: SearchQuery, offset: int, limit: int) -> list[SearchHit]:
        return self._search(self._c, fleet_id, query, offset, limit)

    def thread(self, thread_id: int) -> list[Message]:
        query = select(tasks).where(tasks.c.thread_id == thread_id).order_by(tasks.c.task_id)
        return [rows.message_from(r) for r in self._c.execute(query).mappings()]

    def conversation_mark(self, fleet_id: int) -> ConversationMark:
        owners = select(agents.c.agent_id).where(agents.c.fleet_id == fleet_id)
        open_state = tasks.c.status_state == MessageState.INPUT_REQUIRED.value
        message_row = self._c.execute(
            select(
                func.max(tasks.c.task_id),
                func.max(tasks.c.status_timestamp),
                func.count().filter(open_state),
            ).where(tasks.c.context_id.in_(owners))
        ).one()
        settled, confirmed = self._c.execute(
            select(
                func.count(deliveries.c.attempted_at), func.count(deliveries.c.confirmed_at)
            ).where(deliveries.c.recipient_agent_id.in_(owners))
        ).one()
        last_task_id, last_change, open_count = message_row
        return ConversationMark(
            None if last_task_id is None else int(last_task_id),
            rows.dt(last_change),
            int(open_count),
            int(settled),
            int(confirmed),
        )


class SqlDeliveries:
    def __init__(self, conn: Connection) -> None:
        self._c = conn

    def add(self, delivery: Delivery) -> None:
        self._c.execute(insert(deliveries).values(rows.delivery_values(delivery)))

    def get(self, task_id: int, recipient_agent_id: int) -> Delivery | None:
        row = (
            self._c.execute(
                select(deliveries)
                .where(
                    deliveries.c.task_id == task_id,
                    deliveries.c.recipient_agent_id == recipient_agent_id,
                )
                .order_by(deliveries.c.attempt.desc())
            )
            .mappings()
            .first()
        )
        return None if row is None else rows.delivery_from(row)

    def save(self, delivery: Delivery) -> None:
        self._c.execute(
            update(deliveries)
            .where(
                deliveries.c.task_id == delivery.task_id,
                deliveries.c.recipient_agent_id == delivery.recipient_agent_id,
                deliveries.c.attempt == delivery.attempt,
            )
            .values(rows.delivery_values(delivery))
        )

    def confirm(self, recipient_agent_id: int, task_ids: Sequence[int], at: datetime) -> int:
        query = (
            update(deliveries)
            .where(
                deliveries.c.recipient_agent_id == recipient_agent_id,
                deliveries.c.task_id.in_(list(task_ids)),
                deliveries.c.state == DeliveryState.SENT.value,
                deliveries.c.confirmed_at.is_(None),
            )
            .values(confirmed_at=rows.ts(at))
        )
        return int(self._c.execute(query).rowcount)

    def for_task(self, task_id: int) -> list[Delivery]:
        query = (
            select(deliveries)
            .where(deliveries.c.task_id == task_id)
            .order_by(deliveries.c.recipient_agent_id, deliveries.c.attempt)
        )
        return [rows.delivery_from(r) for r in self._c.execute(query).mappings()]

    def for_tasks(self, task_ids: Sequence[int]) -> list[Delivery]:
        found: list[Delivery] = []
        ids = list(dict.fromkeys(task_ids))  # an id in two chunks would give its rows twice
        for start in range(0, len(ids), _IN_CHUNK):  # stay far below SQLite's variable limit
            query = select(deliveries).where(
                deliveries.c.task_id.in_(ids[start : start + _IN_CHUNK])
            )
            found.extend(rows.delivery_from(r) for r in self._c.execute(query).mappings())
        return sorted(found, key=lambda d: d.attempt)  # across chunks too

    def announced_untaken(self, recipient_agent_id: int, since: datetime) -> list[int]:
        query = (
            select(deliveries.c.task_id)
            .join(tasks, tasks.c.task_id == deliveries.c.task_id)
            .where(  # the recipient's unread messages (indexed) first, then their ledger
                tasks.c.context_id == recipient_agent_id,
                tasks.c.status_state == MessageState.INPUT_REQUIRED.value,
                deliveries.c.recipient_agent_id == recipient_agent_id,
                deliveries.c.state == DeliveryState.SENT.value,
                deliveries.c.confirmed_at.is_(None),
                deliveries.c.attempted_at >= rows.ts(since),
            )
            .distinct()
            .order_by(deliveries.c.task_id)
        )
        return [int(task) for task in self._c.execute(query).scalars()]

    def count_pending_since(self, before: datetime) -> int:
        query = (
            select(func.count())
            .select_from(deliveries)
            .where(
                deliveries.c.state == DeliveryState.PENDING.value,
                deliveries.c.created_at < rows.ts(before),
            )
        )
        return int(self._c.execute(query).scalar_one())

    def queued_for(self, recipient_agent_id: int) -> list[Delivery]:
        query = (
            select(deliveries)
            .where(  # pending rows are few: the (state, created_at) index finds them
                deliveries.c.state == DeliveryState.PENDING.value,
                deliveries.c.recipient_agent_id == recipient_agent_id,
            )
            .order_by(deliveries.c.task_id, deliveries.c.attempt)
        )
        return [rows.delivery_from(r) for r in self._c.execute(query).mappings()]

    def stranded(self, recipient_agent_ids: Iterable[int], before: datetime) -> list[int]:
        query = (
            select(deliveries.c.recipient_agent_id)
            .distinct()
            .where(
                deliveries.c.state == DeliveryState.PENDING.value,
                deliveries.c.created_at < rows.ts(before),
                deliveries.c.recipient_agent_id.in_(list(recipient_agent_ids)),
            )
            .order_by(deliveries.c.recipient_agent_id)
        )
        return [int(agent) for agent in self._c.execute(query).scalars()]


class SqlMonitor:
    def __init__(self, conn: Connection) -> None:
        self._c = conn

    def enroll(self, schedule: MonitorSchedule) -> None:
        self._c.execute(
            insert(monitor_config).values(
                agent_id=schedule.agent_id, **rows.schedule_values(schedule)
            )
        )

    def get(self, agent_id: int) -> MonitorSchedule | None:
        query = select(monitor_config).where(monitor_config.c.agent_id == agent_id)
        row = self._c.execute(query).mappings().first()
        return None if row is None else rows.schedule_from(row)

    def for_agents(self, agent_ids: Iterable[int]) -> dict[int, MonitorSchedule]:
        ids = list(agent_ids)
        if not ids:
            return {}
        query = select(monitor_config).where(monitor_config.c.agent_id.in_(ids))
        return {r["agent_id"]: rows.schedule_from(r) for r in self._c.execute(query).mappings()}

    def record_progress(self, schedules: Sequence[MonitorSchedule]) -> None:
        if not schedules:
            return
        statement = (
            update(monitor_config)
            .where(monitor_config.c.agent_id == bindparam("b_agent"))
            .values(
                last_ping_at=bindparam("b_ping"),
                last_stall_check_at=bindparam("b_stall"),
                last_native_status=bindparam("b_native"),
            )
        )
        self._c.execute(
            statement,
            [
                {
                    "b_agent": s.agent_id,
                    "b_ping": rows.ts(s.last_ping_at),
                    "b_stall": rows.ts(s.last_stall_check_at),
                    "b_native": s.last_native_status,
                }
                for s in schedules
            ],
        )

    def runtime(self, fleet_id: int) -> MonitorRuntime | None:
        query = select(monitor_runtime).where(monitor_runtime.c.fleet_id == fleet_id)
        row = self._c.execute(query).mappings().first()
        return None if row is None else rows.runtime_from(row)

    def save_runtime(self, runtime: MonitorRuntime) -> None:
        values = rows.runtime_values(runtime)
        changed = self._c.execute(
            update(monitor_runtime)
            .where(monitor_runtime.c.fleet_id == runtime.fleet_id)
            .values(values)
        )
        if changed.rowcount == 0:
            self._c.execute(insert(monitor_runtime).values(fleet_id=runtime.fleet_id, **values))

    def heartbeat(self, fleet_id: int, pid: int, host: str, at: datetime) -> bool:
        changed = self._c.execute(
            update(monitor_runtime)
            .where(
                monitor_runtime.c.fleet_id == fleet_id,
                monitor_runtime.c.pid == pid,
                monitor_runtime.c.host == host,
            )
            .values(last_tick_at=rows.ts(at))
        )
        return changed.rowcount > 0

    def save(self, schedule: MonitorSchedule) -> None:
        self._c.execute(
            update(monitor_config)
            .where(monitor_config.c.agent_id == schedule.agent_id)
            .values(rows.schedule_values(schedule))
        )

    def unenroll(self, agent_id: int) -> None:
        self._c.execute(delete(monitor_config).where(monitor_config.c.agent_id == agent_id))

    def remove_runtime(self, fleet_id: int) -> None:
        self._c.execute(delete(monitor_runtime).where(monitor_runtime.c.fleet_id == fleet_id))


class SqlInstalls:
    def __init__(self, conn: Connection) -> None:
        self._c = conn

    def list(self) -> list[SkillInstall]:
        query = select(skill_installs).order_by(skill_installs.c.coding_agent)
        return [
            SkillInstall(r.coding_agent, r.cafleet_version, rows.required_dt(r.installed_at))
            for r in self._c.execute(query)
        ]

    def record(self, install: SkillInstall) -> None:
        values = {
            "cafleet_version": install.cafleet_version,
            "installed_at": rows.ts(install.installed_at),
        }
        changed = self._c.execute(
            update(skill_installs)
            .where(skill_installs.c.coding_agent == install.coding_agent)
            .values(values)
        )
        if changed.rowcount == 0:
            self._c.execute(
                insert(skill_installs).values(coding_agent=install.coding_agent, **values)
            )


MessageSearch = Callable[[Connection, int, SearchQuery, int, int], list[SearchHit]]


def fts5_search(
    conn: Connection, fleet_id: int, query: SearchQuery, offset: int, limit: int
) -> list[SearchHit]:
    """SQLite's FTS5 index, with the direct adapter's statement (adapters/sqlite/search.py)."""
    since = None if query.since is None else rows.ts(query.since)
    sql, params = search_statement(fleet_id, query, since, offset, limit)
    try:
        found = conn.exec_driver_sql(sql, tuple(params)).mappings()
    except DBAPIError as exc:
        if (error := query_error(query, exc)) is not None:
            raise error from None
        raise
    return [rows.hit_from(r) for r in found]


def no_wake(conn: Connection, host: str) -> None:
    """An engine without notifications: a relay looks for work every --poll seconds."""


class SqlRelays:
    def __init__(self, conn: Connection, wake: Callable[[Connection, str], None] = no_wake) -> None:
        self._c = conn
        self._wake = wake

    def beat(self, beat: RelayBeat) -> None:
        values = rows.beat_values(beat)
        changed = self._c.execute(update(relays).where(relays.c.host == beat.host).values(values))
        if changed.rowcount == 0:
            self._c.execute(insert(relays).values(host=beat.host, **values))

    def beats(self) -> list[RelayBeat]:
        query = select(relays).order_by(relays.c.host)
        return [rows.beat_from(r) for r in self._c.execute(query).mappings()]

    def leave(self, host: str, pid: int) -> None:
        self._c.execute(delete(relays).where(relays.c.host == host, relays.c.pid == pid))

    def ask(self, request: RelayRequest) -> int:
        return _new_id(self._c.execute(insert(relay_requests).values(rows.request_values(request))))

    def request(self, request_id: int) -> RelayRequest | None:
        query = select(relay_requests).where(relay_requests.c.request_id == request_id)
        row = self._c.execute(query).mappings().first()
        return None if row is None else rows.request_from(row)

    def pending(self, host: str) -> list[RelayRequest]:
        query = (
            select(relay_requests)
            .where(
                relay_requests.c.host == host,
                relay_requests.c.state == RequestState.PENDING.value,
            )
            .order_by(relay_requests.c.request_id)
        )
        return [rows.request_from(r) for r in self._c.execute(query).mappings()]

    def settle(self, request: RelayRequest) -> None:
        self._c.execute(
            update(relay_requests)
            .where(relay_requests.c.request_id == request.request_id)
            .values(rows.request_values(request))
        )

    def wake(self, host: str) -> None:
        self._wake(self._c, host)

    def report(self, host: str, reports: Sequence[PaneReport]) -> None:
        self._c.execute(delete(pane_reports).where(pane_reports.c.host == host))
        if reports:
            self._c.execute(insert(pane_reports), [rows.report_values(r) for r in reports])

    def reports(self, agent_ids: Iterable[int]) -> dict[int, PaneReport]:
        ids = list(agent_ids)
        found: dict[int, PaneReport] = {}
        for start in range(0, len(ids), _IN_CHUNK):
            chunk = ids[start : start + _IN_CHUNK]
            query = select(pane_reports).where(pane_reports.c.agent_id.in_(chunk))
            for row in self._c.execute(query).mappings():
                found[row["agent_id"]] = rows.report_from(row)
        return found
