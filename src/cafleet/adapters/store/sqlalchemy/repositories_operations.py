"""What CAFleet records about running itself, over SQLAlchemy Core: the monitor's schedules
and runtime, the skills installed per coding agent, and the relays (beats, requests, pane
reports)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import datetime

from sqlalchemy import Connection, bindparam, delete, insert, select, update

from cafleet.adapters.store import mapping as rows
from cafleet.adapters.store.sqlalchemy.repositories import IN_CHUNK, new_id
from cafleet.adapters.store.sqlalchemy.tables import (
    monitor_config,
    monitor_runtime,
    pane_reports,
    relay_requests,
    relays,
    skill_installs,
)
from cafleet.domain.monitor import MonitorRuntime, MonitorSchedule
from cafleet.domain.relay import PaneReport, RelayBeat, RelayRequest, RequestState
from cafleet.domain.skills import SkillInstall


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
        return new_id(self._c.execute(insert(relay_requests).values(rows.request_values(request))))

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
        for start in range(0, len(ids), IN_CHUNK):
            chunk = ids[start : start + IN_CHUNK]
            query = select(pane_reports).where(pane_reports.c.agent_id.in_(chunk))
            for row in self._c.execute(query).mappings():
                found[row["agent_id"]] = rows.report_from(row)
        return found
