"""What CAFleet records about running itself, in plain SQL: the monitor's schedules and
runtime, the skills installed per coding agent, and the relays (beats, requests, pane
reports)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

from cafleet.adapters.store import mapping as rows
from cafleet.adapters.store.sqlite.repositories import DirectRepository
from cafleet.adapters.store.sqlite.statements import insert, select_all
from cafleet.application.ports.store import InstallRepository, MonitorRepository, RelayRepository
from cafleet.domain.monitor import MonitorRuntime, MonitorSchedule
from cafleet.domain.relay import PaneReport, RelayBeat, RelayRequest, RequestState
from cafleet.domain.skills import SkillInstall


class DirectMonitor(DirectRepository, MonitorRepository):
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


class DirectInstalls(DirectRepository, InstallRepository):
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


class DirectRelays(DirectRepository, RelayRepository):
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
