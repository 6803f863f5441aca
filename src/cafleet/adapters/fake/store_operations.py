"""What CAFleet records about running itself, in memory: the monitor's schedules and
runtime, the skills installed per coding agent, and the relays (beats, requests, pane
reports)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from datetime import datetime

from cafleet.adapters.fake.store_tables import MemoryTables, insert_row, update_row
from cafleet.domain.monitor import MonitorRuntime, MonitorSchedule
from cafleet.domain.relay import PaneReport, RelayBeat, RelayRequest, RequestState
from cafleet.domain.skills import SkillInstall


class MemoryMonitor:
    def __init__(self, t: MemoryTables) -> None:
        self._t = t

    def enroll(self, schedule: MonitorSchedule) -> None:
        insert_row(self._t.schedules, schedule.agent_id, schedule)

    def get(self, agent_id: int) -> MonitorSchedule | None:
        return self._t.schedules.get(agent_id)

    def save(self, schedule: MonitorSchedule) -> None:
        update_row(self._t.schedules, schedule.agent_id, schedule)

    def unenroll(self, agent_id: int) -> None:
        self._t.schedules.pop(agent_id, None)

    def for_agents(self, agent_ids: Iterable[int]) -> dict[int, MonitorSchedule]:
        return {a: self._t.schedules[a] for a in agent_ids if a in self._t.schedules}

    def record_progress(self, schedules: Sequence[MonitorSchedule]) -> None:
        for progress in schedules:
            current = self._t.schedules.get(progress.agent_id)
            if current is not None:
                self._t.schedules[progress.agent_id] = replace(
                    current,
                    last_ping_at=progress.last_ping_at,
                    last_stall_check_at=progress.last_stall_check_at,
                    last_native_status=progress.last_native_status,
                )

    def runtime(self, fleet_id: int) -> MonitorRuntime | None:
        return self._t.runtimes.get(fleet_id)

    def save_runtime(self, runtime: MonitorRuntime) -> None:
        self._t.runtimes[runtime.fleet_id] = runtime

    def heartbeat(self, fleet_id: int, pid: int, host: str, at: datetime) -> bool:
        runtime = self._t.runtimes.get(fleet_id)
        if runtime is None or not runtime.owned_by(pid, host):
            return False
        self._t.runtimes[fleet_id] = replace(runtime, last_tick_at=at)
        return True

    def remove_runtime(self, fleet_id: int) -> None:
        self._t.runtimes.pop(fleet_id, None)


class MemoryInstalls:
    def __init__(self, t: MemoryTables) -> None:
        self._t = t

    def list(self) -> list[SkillInstall]:
        return [self._t.installs[k] for k in sorted(self._t.installs)]

    def record(self, install: SkillInstall) -> None:
        self._t.installs[install.coding_agent] = install


class MemoryRelays:
    def __init__(self, t: MemoryTables) -> None:
        self._t = t

    def beat(self, beat: RelayBeat) -> None:
        self._t.beats[beat.host] = beat

    def beats(self) -> list[RelayBeat]:
        return [self._t.beats[k] for k in sorted(self._t.beats)]

    def leave(self, host: str, pid: int) -> None:
        beat = self._t.beats.get(host)
        if beat is not None and beat.pid == pid:
            del self._t.beats[host]

    def ask(self, request: RelayRequest) -> int:
        request_id = self._t.new_id("relay_requests")
        insert_row(self._t.requests, request_id, replace(request, request_id=request_id))
        return request_id

    def request(self, request_id: int) -> RelayRequest | None:
        return self._t.requests.get(request_id)

    def pending(self, host: str) -> list[RelayRequest]:
        return [
            r
            for _, r in sorted(self._t.requests.items())
            if r.host == host and r.state is RequestState.PENDING
        ]

    def settle(self, request: RelayRequest) -> None:
        update_row(self._t.requests, request.request_id, request)

    def wake(self, host: str) -> None:
        self._t.wakes.append(host)

    def report(self, host: str, reports: Sequence[PaneReport]) -> None:
        for agent_id in [a for a, r in self._t.reports.items() if r.host == host]:
            del self._t.reports[agent_id]
        self._t.reports.update((r.agent_id, r) for r in reports)

    def reports(self, agent_ids: Iterable[int]) -> dict[int, PaneReport]:
        return {a: self._t.reports[a] for a in agent_ids if a in self._t.reports}
