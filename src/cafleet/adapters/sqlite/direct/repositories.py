"""The repository ports in plain SQL on one sqlite3 connection (a unit of work's).

Each method runs the statement the SQLAlchemy repositories build (adapters/sqlite/
repositories.py); the same contract tests run over both. Rows map through the shared
mappers in adapters/sqlite/rows.py.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from cafleet.adapters.sqlite import rows
from cafleet.adapters.sqlite.direct.statements import (
    chunks,
    insert,
    marks,
    select_all,
    update,
)
from cafleet.adapters.sqlite.direct.transaction import Transaction
from cafleet.adapters.sqlite.search import query_error, search_statement
from cafleet.application.ports import (
    Activity,
    AgentRepository,
    ConversationMark,
    DeliveryRepository,
    FleetRepository,
    InstallRepository,
    MessageRepository,
    MonitorRepository,
    PlacementRepository,
    RelayRepository,
)
from cafleet.domain.agent import Agent, AgentStatus
from cafleet.domain.delivery import Delivery, DeliveryState
from cafleet.domain.fleet import Fleet
from cafleet.domain.message import Message, MessageState, MessageType
from cafleet.domain.monitor import MonitorRuntime, MonitorSchedule
from cafleet.domain.placement import Placement
from cafleet.domain.relay import PaneReport, RelayBeat, RelayRequest, RequestState
from cafleet.domain.search import SearchHit, SearchQuery
from cafleet.domain.skills import SkillInstall

SUMMARY = MessageType.BROADCAST_SUMMARY.value
OPEN = MessageState.INPUT_REQUIRED.value
PENDING = DeliveryState.PENDING.value
SENT = DeliveryState.SENT.value


class _Sql:
    """A repository's statements on its unit of work's connection."""

    def __init__(self, transaction: Transaction) -> None:
        self._c = transaction

    def _run(self, sql: str, params: Sequence[Any] = ()) -> sqlite3.Cursor:
        return self._c.execute(sql, params)

    def _all(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        return list(self._run(sql, params))

    def _first(self, sql: str, params: Sequence[Any] = ()) -> sqlite3.Row | None:
        found: sqlite3.Row | None = self._run(sql, params).fetchone()
        return found

    def _insert(self, table: str, values: dict[str, Any]) -> int:
        cursor = self._run(*insert(table, values))
        assert cursor.lastrowid is not None, "insert without a row id"
        return cursor.lastrowid

    def _update(self, table: str, values: dict[str, Any], where: str, *params: Any) -> int:
        sql, bound = update(table, values, where)
        return self._run(sql, [*bound, *params]).rowcount

    def _grouped(self, sql: str, ids: Sequence[int], *params: Any) -> list[sqlite3.Row]:
        """sql with `{ids}` as an IN list, run chunk by chunk (each chunk's groups are
        disjoint from the others', so the results concatenate)."""
        found: list[sqlite3.Row] = []
        for chunk in chunks(list(ids)):
            found.extend(self._all(sql.format(ids=marks(len(chunk))), [*chunk, *params]))
        return found


class DirectFleets(_Sql, FleetRepository):
    def add(self, fleet: Fleet) -> int:
        return self._insert("fleets", rows.fleet_values(fleet))

    def get(self, fleet_id: int) -> Fleet | None:
        row = self._first(f"{select_all('fleets')} WHERE fleet_id = ?", [fleet_id])
        return None if row is None else rows.fleet_from(row)

    def save(self, fleet: Fleet) -> None:
        self._update("fleets", rows.fleet_values(fleet), "fleet_id = ?", fleet.fleet_id)

    def list_live(self) -> list[Fleet]:
        return self._newest_first("WHERE deleted_at IS NULL")

    def list_all(self) -> list[Fleet]:
        return self._newest_first("")

    def _newest_first(self, where: str) -> list[Fleet]:
        sql = f"{select_all('fleets')} {where} ORDER BY created_at DESC, fleet_id DESC"
        return [rows.fleet_from(r) for r in self._all(sql)]


class DirectAgents(_Sql, AgentRepository):
    def add(self, agent: Agent) -> int:
        return self._insert("agents", rows.agent_values(agent))

    def get(self, agent_id: int) -> Agent | None:
        row = self._first(f"{select_all('agents')} WHERE agent_id = ?", [agent_id])
        return None if row is None else rows.agent_from(row)

    def save(self, agent: Agent) -> None:
        self._update("agents", rows.agent_values(agent), "agent_id = ?", agent.agent_id)

    def in_fleet(self, fleet_id: int, *, active_only: bool = True) -> list[Agent]:
        sql = f"{select_all('agents')} WHERE fleet_id = ?"
        params: list[Any] = [fleet_id]
        if active_only:
            sql, params = f"{sql} AND status = ?", [*params, AgentStatus.ACTIVE.value]
        return [rows.agent_from(r) for r in self._all(f"{sql} ORDER BY agent_id", params)]

    def count_active(self, fleet_ids: Iterable[int]) -> dict[int, int]:
        sql = (
            "SELECT fleet_id, count(*) AS n FROM agents"
            " WHERE fleet_id IN ({ids}) AND status = ? GROUP BY fleet_id"
        )
        found = self._grouped(sql, list(fleet_ids), AgentStatus.ACTIVE.value)
        return {int(r["fleet_id"]): int(r["n"]) for r in found}


class DirectPlacements(_Sql, PlacementRepository):
    def add(self, placement: Placement) -> None:
        values = {"agent_id": placement.agent_id, **rows.placement_values(placement)}
        self._run(*insert("agent_placements", values))

    def get(self, agent_id: int) -> Placement | None:
        row = self._first(f"{select_all('agent_placements')} WHERE agent_id = ?", [agent_id])
        return None if row is None else rows.placement_from(row)

    def save(self, placement: Placement) -> None:
        values = rows.placement_values(placement)
        self._update("agent_placements", values, "agent_id = ?", placement.agent_id)

    def remove(self, agent_id: int) -> None:
        self._run("DELETE FROM agent_placements WHERE agent_id = ?", [agent_id])

    def for_agents(self, agent_ids: Iterable[int]) -> dict[int, Placement]:
        sql = f"{select_all('agent_placements')} WHERE agent_id IN ({{ids}})"
        return {r["agent_id"]: rows.placement_from(r) for r in self._grouped(sql, list(agent_ids))}


class DirectMessages(_Sql, MessageRepository):
    def add(self, message: Message) -> int:
        task_id = self._insert("tasks", rows.message_values(message))
        own = rows.own_id_columns(message)
        if own:
            self._update("tasks", dict.fromkeys(own, task_id), "task_id = ?", task_id)
        return task_id

    def get(self, task_id: int) -> Message | None:
        row = self._first(f"{select_all('tasks')} WHERE task_id = ?", [task_id])
        return None if row is None else rows.message_from(row)

    def save(self, message: Message) -> None:
        self._update("tasks", rows.message_values(message), "task_id = ?", message.task_id)

    def pending_for(self, agent_id: int, limit: int | None = None) -> list[Message]:
        sql = (
            f"{select_all('tasks')} WHERE context_id = ? AND status_state = ? AND type != ?"
            " ORDER BY status_timestamp DESC, task_id DESC LIMIT ?"
        )
        found = self._all(sql, [agent_id, OPEN, SUMMARY, -1 if limit is None else limit])
        return [rows.message_from(r) for r in found]

    def activity(self, agent_ids: Sequence[int]) -> dict[int, Activity]:
        if not agent_ids:
            return {}
        sent = self._newest("from_agent_id", "created_at", agent_ids)
        received = self._newest("context_id", "created_at", agent_ids)
        acked = self._newest(
            "context_id", "status_timestamp", agent_ids, MessageState.COMPLETED.value
        )
        return {
            a: Activity(rows.dt(sent.get(a)), rows.dt(received.get(a)), rows.dt(acked.get(a)))
            for a in agent_ids
        }

    def _newest(
        self, agent: str, stamp: str, agent_ids: Sequence[int], state: str | None = None
    ) -> dict[int, str]:
        """The newest stamp per agent over ordinary messages (summaries excluded)."""
        condition, params = (
            ("", [SUMMARY]) if state is None else (" AND status_state = ?", [SUMMARY, state])
        )
        sql = (
            f"SELECT {agent} AS agent, max({stamp}) AS newest FROM tasks"
            f" WHERE {agent} IN ({{ids}}) AND type != ?{condition} GROUP BY {agent}"
        )
        return {int(r["agent"]): r["newest"] for r in self._grouped(sql, agent_ids, *params)}

    def pending_counts(self, agent_ids: Sequence[int]) -> dict[int, int]:
        sql = (
            "SELECT context_id, count(*) AS n FROM tasks"
            " WHERE context_id IN ({ids}) AND status_state = ? AND type != ?"
            " GROUP BY context_id"
        )
        return {
            int(r["context_id"]): int(r["n"]) for r in self._grouped(sql, agent_ids, OPEN, SUMMARY)
        }

    def timeline(self, fleet_id: int, limit: int, before: int | None = None) -> list[Message]:
        senders = "from_agent_id IN (SELECT agent_id FROM agents WHERE fleet_id = ?)"
        return self._page(senders, [fleet_id], limit, before)

    def owned_by(self, agent_id: int, limit: int, before: int | None = None) -> list[Message]:
        return self._page("context_id = ?", [agent_id], limit, before)

    def sent_by(self, agent_id: int, limit: int, before: int | None = None) -> list[Message]:
        return self._page("from_agent_id = ?", [agent_id], limit, before)

    def _page(
        self, condition: str, params: list[Any], limit: int, before: int | None
    ) -> list[Message]:
        """Ordinary messages matching condition, newest first (id order is time order)."""
        sql = f"{select_all('tasks')} WHERE {condition} AND type != ?"
        bound = [*params, SUMMARY]
        if before is not None:
            sql, bound = f"{sql} AND task_id < ?", [*bound, before]
        sql = f"{sql} ORDER BY created_at DESC, task_id DESC LIMIT ?"
        return [rows.message_from(r) for r in self._all(sql, [*bound, limit])]

    def broadcast_copies(self, summary: Message) -> list[Message]:
        sql = (  # the sender narrows it to its index; origin alone has none
            f"{select_all('tasks')} WHERE from_agent_id = ? AND origin_task_id = ?"
            " AND type != ? ORDER BY task_id"
        )
        found = self._all(sql, [summary.from_agent_id, summary.task_id, SUMMARY])
        return [rows.message_from(r) for r in found]

    def search(self, fleet_id: int, query: SearchQuery, offset: int, limit: int) -> list[SearchHit]:
        since = None if query.since is None else rows.ts(query.since)
        sql, params = search_statement(fleet_id, query, since, offset, limit)
        try:
            found = self._all(sql, params)
        except sqlite3.OperationalError as exc:
            if (error := query_error(query, exc)) is not None:
                raise error from None
            raise
        return [rows.hit_from(r) for r in found]

    def thread(self, thread_id: int) -> list[Message]:
        sql = f"{select_all('tasks')} WHERE thread_id = ? ORDER BY task_id"
        return [rows.message_from(r) for r in self._all(sql, [thread_id])]

    def conversation_mark(self, fleet_id: int) -> ConversationMark:
        owners = "IN (SELECT agent_id FROM agents WHERE fleet_id = ?)"
        messages = self._first(
            "SELECT max(task_id) AS last_task, max(status_timestamp) AS last_change,"
            " count(CASE WHEN status_state = ? THEN 1 END) AS open_count"
            f" FROM tasks WHERE context_id {owners}",
            [OPEN, fleet_id],
        )
        ledger = self._first(
            "SELECT count(attempted_at) AS settled, count(confirmed_at) AS confirmed"
            f" FROM deliveries WHERE recipient_agent_id {owners}",
            [fleet_id],
        )
        assert messages is not None and ledger is not None, "aggregates return one row"
        return ConversationMark(
            None if messages["last_task"] is None else int(messages["last_task"]),
            rows.dt(messages["last_change"]),
            int(messages["open_count"]),
            int(ledger["settled"]),
            int(ledger["confirmed"]),
        )


class DirectDeliveries(_Sql, DeliveryRepository):
    def add(self, delivery: Delivery) -> None:
        self._run(*insert("deliveries", rows.delivery_values(delivery)))

    def get(self, task_id: int, recipient_agent_id: int) -> Delivery | None:
        row = self._first(
            f"{select_all('deliveries')} WHERE task_id = ? AND recipient_agent_id = ?"
            " ORDER BY attempt DESC",
            [task_id, recipient_agent_id],
        )
        return None if row is None else rows.delivery_from(row)

    def save(self, delivery: Delivery) -> None:
        self._update(
            "deliveries",
            rows.delivery_values(delivery),
            "task_id = ? AND recipient_agent_id = ? AND attempt = ?",
            delivery.task_id,
            delivery.recipient_agent_id,
            delivery.attempt,
        )

    def confirm(self, recipient_agent_id: int, task_ids: Sequence[int], at: datetime) -> int:
        changed = 0
        for chunk in chunks(list(task_ids)):
            changed += self._run(
                "UPDATE deliveries SET confirmed_at = ? WHERE recipient_agent_id = ?"
                f" AND task_id IN ({marks(len(chunk))}) AND state = ? AND confirmed_at IS NULL",
                [rows.ts(at), recipient_agent_id, *chunk, SENT],
            ).rowcount
        return changed

    def for_task(self, task_id: int) -> list[Delivery]:
        sql = f"{select_all('deliveries')} WHERE task_id = ? ORDER BY recipient_agent_id, attempt"
        return [rows.delivery_from(r) for r in self._all(sql, [task_id])]

    def for_tasks(self, task_ids: Sequence[int]) -> list[Delivery]:
        sql = f"{select_all('deliveries')} WHERE task_id IN ({{ids}})"
        unique = list(dict.fromkeys(task_ids))  # an id in two chunks would give its rows twice
        found = [rows.delivery_from(r) for r in self._grouped(sql, unique)]
        return sorted(found, key=lambda d: d.attempt)  # across chunks too

    def announced_untaken(self, recipient_agent_id: int, since: datetime) -> list[int]:
        sql = (  # the recipient's unread messages (indexed) first, then their ledger
            "SELECT DISTINCT deliveries.task_id AS task_id FROM deliveries"
            " JOIN tasks ON tasks.task_id = deliveries.task_id"
            " WHERE tasks.context_id = ? AND tasks.status_state = ?"
            " AND deliveries.recipient_agent_id = ? AND deliveries.state = ?"
            " AND deliveries.confirmed_at IS NULL AND deliveries.attempted_at >= ?"
            " ORDER BY deliveries.task_id"
        )
        params = [recipient_agent_id, OPEN, recipient_agent_id, SENT, rows.ts(since)]
        return [int(r["task_id"]) for r in self._all(sql, params)]

    def count_pending_since(self, before: datetime) -> int:
        row = self._first(
            "SELECT count(*) AS n FROM deliveries WHERE state = ? AND created_at < ?",
            [PENDING, rows.ts(before)],
        )
        return 0 if row is None else int(row["n"])

    def queued_for(self, recipient_agent_id: int) -> list[Delivery]:
        sql = (  # pending rows are few: the (state, created_at) index finds them
            f"{select_all('deliveries')} WHERE state = ? AND recipient_agent_id = ?"
            " ORDER BY task_id, attempt"
        )
        return [rows.delivery_from(r) for r in self._all(sql, [PENDING, recipient_agent_id])]

    def stranded(self, recipient_agent_ids: Iterable[int], before: datetime) -> list[int]:
        sql = (
            "SELECT DISTINCT recipient_agent_id FROM deliveries"
            " WHERE recipient_agent_id IN ({ids}) AND state = ? AND created_at < ?"
        )
        found = self._grouped(sql, list(recipient_agent_ids), PENDING, rows.ts(before))
        return sorted(int(r["recipient_agent_id"]) for r in found)


class DirectMonitor(_Sql, MonitorRepository):
    def enroll(self, schedule: MonitorSchedule) -> None:
        values = {"agent_id": schedule.agent_id, **rows.schedule_values(schedule)}
        self._run(*insert("monitor_config", values))

    def get(self, agent_id: int) -> MonitorSchedule | None:
        row = self._first(f"{select_all('monitor_config')} WHERE agent_id = ?", [agent_id])
        return None if row is None else rows.schedule_from(row)

    def for_agents(self, agent_ids: Iterable[int]) -> dict[int, MonitorSchedule]:
        sql = f"{select_all('monitor_config')} WHERE agent_id IN ({{ids}})"
        return {r["agent_id"]: rows.schedule_from(r) for r in self._grouped(sql, list(agent_ids))}

    def record_progress(self, schedules: Sequence[MonitorSchedule]) -> None:
        self._c.executemany(
            "UPDATE monitor_config SET last_ping_at = ?, last_stall_check_at = ?,"
            " last_native_status = ? WHERE agent_id = ?",
            [
                (
                    rows.ts(s.last_ping_at),
                    rows.ts(s.last_stall_check_at),
                    s.last_native_status,
                    s.agent_id,
                )
                for s in schedules
            ],
        )

    def runtime(self, fleet_id: int) -> MonitorRuntime | None:
        row = self._first(f"{select_all('monitor_runtime')} WHERE fleet_id = ?", [fleet_id])
        return None if row is None else rows.runtime_from(row)

    def save_runtime(self, runtime: MonitorRuntime) -> None:
        values = rows.runtime_values(runtime)
        if self._update("monitor_runtime", values, "fleet_id = ?", runtime.fleet_id) == 0:
            self._run(*insert("monitor_runtime", {"fleet_id": runtime.fleet_id, **values}))

    def heartbeat(self, fleet_id: int, pid: int, host: str, at: datetime) -> bool:
        changed = self._update(
            "monitor_runtime",
            {"last_tick_at": rows.ts(at)},
            "fleet_id = ? AND pid = ? AND host = ?",
            fleet_id,
            pid,
            host,
        )
        return changed > 0

    def save(self, schedule: MonitorSchedule) -> None:
        values = rows.schedule_values(schedule)
        self._update("monitor_config", values, "agent_id = ?", schedule.agent_id)

    def unenroll(self, agent_id: int) -> None:
        self._run("DELETE FROM monitor_config WHERE agent_id = ?", [agent_id])

    def remove_runtime(self, fleet_id: int) -> None:
        self._run("DELETE FROM monitor_runtime WHERE fleet_id = ?", [fleet_id])


class DirectInstalls(_Sql, InstallRepository):
    def list(self) -> list[SkillInstall]:
        found = self._all(f"{select_all('skill_installs')} ORDER BY coding_agent")
        return [
            SkillInstall(
                r["coding_agent"], r["cafleet_version"], rows.required_dt(r["installed_at"])
            )
            for r in found
        ]

    def record(self, install: SkillInstall) -> None:
        values = {
            "cafleet_version": install.cafleet_version,
            "installed_at": rows.ts(install.installed_at),
        }
        where = "coding_agent = ?"
        if self._update("skill_installs", values, where, install.coding_agent) == 0:
            self._run(*insert("skill_installs", {"coding_agent": install.coding_agent, **values}))


class DirectRelays(_Sql, RelayRepository):
    def beat(self, beat: RelayBeat) -> None:
        values = rows.beat_values(beat)
        if self._update("relays", values, "host = ?", beat.host) == 0:
            self._insert("relays", {"host": beat.host, **values})

    def beats(self) -> list[RelayBeat]:
        return [rows.beat_from(r) for r in self._all(f"{select_all('relays')} ORDER BY host")]

    def leave(self, host: str, pid: int) -> None:
        self._run("DELETE FROM relays WHERE host = ? AND pid = ?", [host, pid])

    def ask(self, request: RelayRequest) -> int:
        return self._insert("relay_requests", rows.request_values(request))

    def request(self, request_id: int) -> RelayRequest | None:
        found = self._first(f"{select_all('relay_requests')} WHERE request_id = ?", [request_id])
        return None if found is None else rows.request_from(found)

    def pending(self, host: str) -> list[RelayRequest]:
        sql = f"{select_all('relay_requests')} WHERE host = ? AND state = ? ORDER BY request_id"
        return [rows.request_from(r) for r in self._all(sql, [host, RequestState.PENDING.value])]

    def settle(self, request: RelayRequest) -> None:
        values = rows.request_values(request)
        self._update("relay_requests", values, "request_id = ?", request.request_id)

    def wake(self, host: str) -> None:
        pass  # SQLite has no notifications: a relay looks for work every --poll seconds

    def report(self, host: str, reports: Sequence[PaneReport]) -> None:
        self._run("DELETE FROM pane_reports WHERE host = ?", [host])
        for report in reports:
            self._insert("pane_reports", rows.report_values(report))

    def reports(self, agent_ids: Iterable[int]) -> dict[int, PaneReport]:
        sql = f"{select_all('pane_reports')} WHERE agent_id IN ({{ids}})"
        found = self._grouped(sql, list(agent_ids))
        return {r["agent_id"]: rows.report_from(r) for r in found}
