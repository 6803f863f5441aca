"""The monitor: claim a fleet's runtime slot, tick, report status, edit schedules.

A tick reads the fleet in one short read, learns the panes once per multiplexer
server (from its event feed where one is live, herdr's subscription, else by listing
them), adds what each agent says of itself where the multiplexer tells nothing, records
the receipts the agents' own records show, decides who is due (pure domain policy), types
one wake line into the watcher's pane, and records pings only after the wake was
delivered. Rows left queued by a sender and a drainer that both ended are handed to a
drainer, so they are settled within a tick even when nothing else is sent to that pane.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum

from cafleet.application.lookups import active_agent, refuse_deleted_fleet
from cafleet.application.members.status import AgentStatusReader
from cafleet.application.members.titles import PaneTitles
from cafleet.application.messaging.queue import queue_key
from cafleet.application.messaging.receipts import ReceiptReader, ReceiptRecorder
from cafleet.application.monitoring.background import Background
from cafleet.application.monitoring.slot import MonitorSlot, existing_fleet, live_fleet
from cafleet.application.panes.keystrokes import Keystrokes, KeystrokeSender
from cafleet.application.ports.delivery import QueueDrains
from cafleet.application.ports.panes import (
    AgentStateFeeds,
    AgentStates,
    PaneDrivers,
    PaneLocks,
    PanePresentation,
)
from cafleet.application.ports.store import UnitOfWork, UnitOfWorkFactory
from cafleet.application.ports.system import Clock, LoopMarks, ProcessIdentity
from cafleet.application.relay.service import RelayClient, live_beats
from cafleet.domain.delivery import DeliveryState
from cafleet.domain.errors import CafleetError, NotFound
from cafleet.domain.fleet import Agent, AgentKind, CardKind, Fleet
from cafleet.domain.monitor import (
    BLOCKED,
    DueAgent,
    MonitorRuntime,
    MonitorSchedule,
    blocked_notice,
    state_of,
    status_reason,
    wake_text,
)
from cafleet.domain.panes import PaneInfo, ours
from cafleet.domain.placement import Multiplexer, PaneState, Placement, PushTarget
from cafleet.domain.relay import RELAY_WAKE_SECONDS, PaneReport, PaneVerb

# A row pending this long has outlived its sender's wait and its drainer's start: whoever
# holds the pane's queue still takes it, as a drainer started for it finds the lock held.
STRANDED_AFTER_SECONDS = 15


class Stop(StrEnum):
    FLEET_DELETED = "fleet-deleted"
    DISPLACED = "displaced"


@dataclass(frozen=True)
class TickReport:
    due: tuple[DueAgent, ...] = ()
    woke: bool = False
    not_delivered: str | None = None  # why due agents got no wake
    stop: Stop | None = None
    drained: tuple[int, ...] = ()  # recipients whose stranded queue went to a drainer


@dataclass(frozen=True)
class StatusRow:
    agent: Agent
    role: str
    schedule: MonitorSchedule
    pending: int


@dataclass(frozen=True)
class MonitorStatus:
    runtime: MonitorRuntime | None
    running: bool
    rows: tuple[StatusRow, ...]
    now: datetime
    fleet_deleted_at: datetime | None = None  # set: no loop, no schedules; read-only


@dataclass(frozen=True)
class _Target:
    agent: Agent
    role: str
    placement: Placement
    schedule: MonitorSchedule


@dataclass
class _FleetView:
    fleet: Fleet
    watcher: tuple[Agent, Placement] | None
    targets: list[_Target] = field(default_factory=list)
    # what the live relays of other hosts last saw of those hosts' panes, by agent
    reports: dict[int, PaneReport] = field(default_factory=dict)


@dataclass(frozen=True)
class _Seen:
    """An agent's pane this tick: whether it runs, and the agent's state in the monitor's
    words (herdr's, or what the agent says of itself), if any."""

    alive: bool
    native: str | None


Sweep = dict[tuple[str, str | None], dict[str, PaneInfo]]  # (backend, socket) -> panes
Server = tuple[Multiplexer, str | None]


class MonitorService:
    def __init__(
        self,
        uow: UnitOfWorkFactory,
        clock: Clock,
        drivers: PaneDrivers,
        keystrokes: KeystrokeSender,
        process: ProcessIdentity,
        stall_interval: int,
        statuses: AgentStatusReader | None = None,
        receipts: ReceiptReader | None = None,
        feeds: AgentStateFeeds | None = None,
        drains: QueueDrains | None = None,
        relay: RelayClient | None = None,
        titles: PaneTitles | None = None,
        locks: PaneLocks | None = None,
        marks: LoopMarks | None = None,
    ) -> None:
        self._uow = uow
        self._locks = locks  # tells a queue whose drainer still runs (None: not asked)
        self._titles = titles  # keeps the panes' titles in step with their statuses
        self._clock = clock
        self._drivers = drivers
        self._keystrokes = keystrokes
        self._slot = MonitorSlot(uow, clock, process, marks)
        self._stall_interval = stall_interval
        self._statuses = statuses
        self._receipts = None if receipts is None else ReceiptRecorder(uow, receipts)
        self._feeds = feeds  # pushed agent states (the monitor loop's herdr servers)
        self._drains = drains
        self._relay = relay  # None: agents on other hosts are left to their own monitor
        self._notified: set[int] = set()  # members blocked since their notification
        self._listed: set[Server] = set()  # the servers the last tick listed pane by pane
        self._titled: dict[tuple[Server, str], str | None] = {}  # each pane's state when titled

    # --- the runtime slot ------------------------------------------------------------

    def has_watcher(self, fleet_id: int) -> bool:
        with self._uow() as uow:
            return self._view(uow, live_fleet(uow, fleet_id)).watcher is not None

    def claim(self, fleet_id: int, tick_seconds: int) -> MonitorRuntime:
        return self._slot.claim(fleet_id, tick_seconds)

    def release(self, fleet_id: int) -> None:
        self._slot.release(fleet_id)

    def judged(self, runtime: MonitorRuntime | None) -> tuple[MonitorRuntime | None, bool]:
        """The slot as this process sees it, and whether its loop lives (see monitor_slot)."""
        return self._slot.judged(runtime)

    # --- one tick ----------------------------------------------------------------------

    def tick(self, fleet_id: int) -> TickReport:
        with self._uow(write=True) as uow:
            fleet = uow.fleets.get(fleet_id)
            if fleet is None or fleet.is_deleted:
                return TickReport(stop=Stop.FLEET_DELETED)
            if not self._slot.heartbeat(uow, fleet_id):
                return TickReport(stop=Stop.DISPLACED)
            uow.commit()
        early = self._list_early()
        with self._uow() as uow:
            view = self._view(uow, fleet, with_reports=True)
            unread = uow.messages.pending_counts([t.agent.agent_id for t in view.targets])
            stranded = self._stranded(uow, view)
        stranded = [agent for agent in stranded if self._undrained(view, agent)]
        if stranded:
            assert self._drains is not None
            self._drains.start(stranded)
        panes, detected, fed = self._sweep(view, early)
        states = dict(detected)
        self._add_agent_states(view, panes, states, unread)
        self._record_receipts(view)
        seen = {
            t.agent.agent_id: self._seen(view, t.placement, panes, states, unread)
            for t in view.targets
        }
        now = self._clock.now()
        due: list[DueAgent] = []
        observed: dict[int, MonitorSchedule] = {}
        for target in view.targets:
            alive, native = seen[target.agent.agent_id].alive, seen[target.agent.agent_id].native
            reasons = target.schedule.due(
                now, alive=alive, stall_interval=self._stall_interval, native_status=native
            )
            if reasons:
                due.append(DueAgent(target.agent.agent_id, target.agent.name, target.role, reasons))
            kept = target.schedule.observed(alive=alive, native_status=native)
            if kept != target.schedule:
                observed[target.agent.agent_id] = kept
        self._save(observed.values())
        self._notify_blocked(view, due, seen)
        self._retitle(view, panes, detected, fed)
        drained = tuple(stranded)
        if not due:
            return TickReport(drained=drained)
        problem = self._wake(view, panes, due)
        if problem is not None:
            return TickReport(tuple(due), woke=False, not_delivered=problem, drained=drained)
        self._record_wake(view, due, seen, observed, now)
        return TickReport(tuple(due), woke=True, drained=drained)

    def _here(self, placement: Placement) -> bool:
        return self._drivers.reaches(placement.host)

    def _seen(
        self,
        view: _FleetView,
        placement: Placement,
        panes: Sweep,
        states: dict[str, str],
        unread: dict[int, int],
    ) -> _Seen:
        """A pane here from this tick's sweep; one on another host from its relay's report
        (not running while that relay is not alive: nothing could reach it)."""
        if self._here(placement):
            return _Seen(_alive(placement, panes), states.get(placement.pane_id or ""))
        report = view.reports.get(placement.agent_id)
        if report is None:
            return _Seen(False, None)
        alive = report.pane in (PaneState.RUNNING, PaneState.STARTING)
        told = state_of(report.status.status, unread.get(placement.agent_id, 0))
        return _Seen(alive, report.detected or told)

    def _notify_blocked(
        self, view: _FleetView, due: list[DueAgent], seen: dict[int, _Seen]
    ) -> None:
        """A member whose turn to blocked makes its wake due gets one notification where the
        multiplexer shows them (herdr), and no other until it left blocked; a wake that is
        not delivered stays due, the notification is not raised again."""
        turned = {d.agent_id for d in due if status_reason(BLOCKED) in d.reasons}
        for target in view.targets:
            agent, placement = target.agent, target.placement
            if seen[agent.agent_id].native != BLOCKED:
                self._notified.discard(agent.agent_id)
            elif (
                agent.agent_id in turned
                and agent.agent_id not in self._notified
                and target.role == AgentKind.MEMBER.value
                and self._here(placement)  # a notification shows on its own host's screen
            ):
                self._notified.add(agent.agent_id)
                driver = self._drivers(placement.backend, placement.socket, placement.host)
                if isinstance(driver, PanePresentation):
                    with contextlib.suppress(CafleetError):  # cosmetic: never fails a tick
                        driver.notify(*blocked_notice(agent, view.fleet.fleet_id))

    def _stranded(self, uow: UnitOfWork, view: _FleetView) -> list[int]:
        if self._drains is None:
            return []
        # rows for another host's panes wait for its relay, which takes them itself
        recipients = [t.agent.agent_id for t in view.targets if self._here(t.placement)]
        if view.watcher is not None and self._here(view.watcher[1]):
            recipients.append(view.watcher[0].agent_id)
        before = self._clock.now() - timedelta(seconds=STRANDED_AFTER_SECONDS)
        return uow.deliveries.stranded(recipients, before)

    def _undrained(self, view: _FleetView, agent_id: int) -> bool:
        """Whether no process holds the agent's pane queue: a drainer that watches a held
        row there holds it, and one started now would only find it taken."""
        placements = [t.placement for t in view.targets]
        placements += [view.watcher[1]] if view.watcher is not None else []
        placement = next((p for p in placements if p.agent_id == agent_id), None)
        if self._locks is None or placement is None:
            return True
        try:
            with self._locks.hold(queue_key(PushTarget.of(placement)), 0.0):
                return True
        except TimeoutError:
            return False

    def _view(self, uow: UnitOfWork, fleet: Fleet, *, with_reports: bool = False) -> _FleetView:
        """The fleet's watcher and targets; with_reports: and what the live relays of
        other hosts report of those hosts' panes. Without a relay client, agents on other
        hosts are left to a monitor there."""
        agents = uow.agents.in_fleet(fleet.fleet_id)
        placements = {
            agent_id: placement
            for agent_id, placement in uow.placements.for_agents(a.agent_id for a in agents).items()
            if self._relay is not None or self._here(placement)
        }
        schedules = uow.monitor.for_agents(a.agent_id for a in agents)
        watcher = next(
            (
                (a, placements[a.agent_id])
                for a in agents
                if a.card_kind is CardKind.MONITORING_MEMBER
                and a.agent_id in placements
                and not placements[a.agent_id].is_pending
            ),
            None,
        )
        view = _FleetView(fleet, watcher)
        for agent in agents:
            placement, schedule = placements.get(agent.agent_id), schedules.get(agent.agent_id)
            kind = agent.kind(fleet)
            if (
                placement is None
                or schedule is None
                or kind not in (AgentKind.DIRECTOR, AgentKind.MEMBER)
            ):
                continue
            view.targets.append(_Target(agent, kind.value, placement, schedule))
        elsewhere = [p for p in placements.values() if not self._here(p)]
        if with_reports and elsewhere:
            live = live_beats(uow, self._clock.now())
            reports = uow.relays.reports(p.agent_id for p in elsewhere)
            view.reports = {a: r for a, r in reports.items() if r.host in live}
        return view

    def _list_early(self) -> dict[Server, Background[dict[str, PaneInfo]]]:
        """The listings of the servers the last tick listed, started now: the multiplexer
        answers while this process reads the store (the fleet rarely changes servers; one
        it no longer uses is listed for nothing, one it newly uses is listed in the sweep).
        A server with an event feed is not: its feed, once subscribed, answers instead."""
        early = {}
        for backend, socket in self._listed:
            if self._feeds is not None and self._feeds(backend, socket) is not None:
                continue
            driver = self._drivers(backend, socket)
            early[(backend, socket)] = Background(driver.list_panes)
        return early

    def _placements_here(self, view: _FleetView) -> list[Placement]:
        """The placements of the targets and the watcher whose panes live on this host."""
        placements = [t.placement for t in view.targets]
        if view.watcher is not None:
            placements.append(view.watcher[1])
        return [p for p in placements if self._here(p)]

    def _sweep(
        self, view: _FleetView, early: dict[Server, Background[dict[str, PaneInfo]]]
    ) -> tuple[Sweep, dict[str, str], set[Server]]:
        """Per multiplexer server the fleet uses: its feed's reading when it has one that
        follows every watched pane, else one pane listing (never one per agent); and the
        servers whose feed answered."""
        placements = self._placements_here(view)
        servers: dict[Server, set[str]] = {}
        for placement in placements:
            watched = servers.setdefault((placement.backend, placement.socket), set())
            if placement.pane_id is not None:
                watched.add(placement.pane_id)
        panes: Sweep = {}
        states: dict[str, str] = {}
        fed: set[Server] = set()
        self._listed = set()
        for (backend, socket), watched in servers.items():
            feed = None if self._feeds is None else self._feeds(backend, socket)
            reading = None if feed is None else feed.reading(watched)
            if reading is not None:
                panes[(backend.value, socket)] = dict(reading.panes)
                states.update(reading.states)
                fed.add((backend, socket))
                continue
            driver = self._drivers(backend, socket)
            listing = early.pop((backend, socket), None)
            panes[(backend.value, socket)] = (
                driver.list_panes() if listing is None else listing.result()
            )
            self._listed.add((backend, socket))
            if isinstance(driver, AgentStates):
                states.update(driver.agent_states())
        return panes, states, fed

    def _retitle(
        self, view: _FleetView, panes: Sweep, detected: dict[str, str], fed: set[Server]
    ) -> None:
        """Title the watched panes from this tick's sweep, never a listing of their own: every
        pane of a server listed this tick, and of a server whose feed answered only the
        panes whose state changed since they were last titled (herdr pushes states, not
        labels, and whatever changes someone's mail retitles that pane itself)."""
        if self._titles is None:
            return
        placements = self._placements_here(view)
        titled, self._titled = self._titled, {}
        chosen = []
        for placement in placements:
            server, pane_id = (placement.backend, placement.socket), placement.pane_id or ""
            state = self._titled[(server, pane_id)] = detected.get(pane_id)
            if server not in fed or titled.get((server, pane_id), "") != state:
                chosen.append(placement.agent_id)
        listed = {
            (p.backend, p.socket, p.host): (panes.get((p.backend.value, p.socket), {}), detected)
            for p in placements
        }
        self._titles.refresh(chosen, listed)

    def _add_agent_states(
        self, view: _FleetView, panes: Sweep, states: dict[str, str], unread: dict[int, int]
    ) -> None:
        """Where the multiplexer tells no state (tmux), what each agent says of itself."""
        if self._statuses is None:
            return
        for target in view.targets:
            placement = target.placement
            if (
                placement.pane_id is None
                or placement.pane_id in states
                or not self._here(placement)
            ):
                continue
            told = self._statuses.report(
                placement, placement.pane_state(_pane_info(placement, panes))
            )
            state = state_of(told.status, unread.get(target.agent.agent_id, 0))
            if state is not None:
                states[placement.pane_id] = state

    def _record_receipts(self, view: _FleetView) -> None:
        """What the agents' own records say they took in becomes `confirmed_at`; another
        host's agents keep their records there, where its relay reads them."""
        if self._receipts is not None:
            self._receipts.record(t.placement for t in view.targets if self._here(t.placement))

    def _wake(self, view: _FleetView, panes: Sweep, due: list[DueAgent]) -> str | None:
        """None when the wake was typed, else why not."""
        if view.watcher is None:
            return "no monitoring member with a pane"
        watcher, placement = view.watcher
        text = wake_text(due, view.fleet.director_agent_id or 0)
        if not self._here(placement):
            return self._wake_elsewhere(view, watcher, placement, text)
        if not _alive(placement, panes):
            return f"the monitoring member's pane {placement.pane_id} is gone"
        outcome = self._keystrokes.deliver(PushTarget.of(placement), Keystrokes.wake(text))
        if outcome.state is DeliveryState.SENT:
            return None
        return outcome.error or outcome.state.value

    def _wake_elsewhere(
        self, view: _FleetView, watcher: Agent, placement: Placement, text: str
    ) -> str | None:
        """The wake typed by the relay of the monitoring member's host."""
        assert self._relay is not None and placement.host is not None
        try:
            self._relay.run(
                placement.host,
                view.fleet.fleet_id,
                watcher.agent_id,
                PaneVerb.WAKE,
                text,
                RELAY_WAKE_SECONDS,
            )
        except CafleetError as exc:
            return exc.message
        return None

    def _record_wake(
        self,
        view: _FleetView,
        due: list[DueAgent],
        seen: dict[int, _Seen],
        observed: dict[int, MonitorSchedule],
        now: datetime,
    ) -> None:
        reasons = {d.agent_id: d.reasons for d in due}
        updated = []
        for target in view.targets:
            if target.agent.agent_id not in reasons:
                continue
            base = observed.get(target.agent.agent_id, target.schedule)
            native = seen[target.agent.agent_id].native
            updated.append(base.after_wake(reasons[target.agent.agent_id], now, native))
        self._save(updated)

    def _save(self, schedules: Iterable[MonitorSchedule]) -> None:
        batch = list(schedules)
        if batch:
            with self._uow(write=True) as uow:
                uow.monitor.record_progress(batch)
                uow.commit()

    # --- status and config --------------------------------------------------------------

    def status(self, fleet_id: int) -> MonitorStatus:
        """A deleted fleet reports a stopped monitor with no schedules (they went with it)."""
        with self._uow() as uow:
            fleet = existing_fleet(uow, fleet_id)
            view = self._view(uow, fleet)
            runtime = uow.monitor.runtime(fleet_id)
            pending = uow.messages.pending_counts([t.agent.agent_id for t in view.targets])
        runtime, running = self._slot.judged(runtime)
        now = self._clock.now()
        rows = tuple(
            StatusRow(t.agent, t.role, t.schedule, pending.get(t.agent.agent_id, 0))
            for t in view.targets
        )
        return MonitorStatus(runtime, running, rows, now, fleet.deleted_at)

    def config(
        self,
        fleet_id: int,
        agent_id: int,
        interval_seconds: int | None = None,
        enabled: bool | None = None,
    ) -> MonitorSchedule:
        not_enrolled = f"agent {agent_id} is not enrolled in monitoring for fleet {fleet_id}."
        writes = interval_seconds is not None or enabled is not None
        with self._uow(write=writes) as uow:
            if writes:
                refuse_deleted_fleet(uow, fleet_id)
            active_agent(uow, fleet_id, agent_id, not_enrolled)
            schedule = uow.monitor.get(agent_id)
            if schedule is None:
                raise NotFound(not_enrolled)
            if interval_seconds is None and enabled is None:
                return schedule
            schedule = schedule.reconfigured(interval_seconds, enabled)
            uow.monitor.save(schedule)
            uow.commit()
        return schedule


def _pane_info(placement: Placement, panes: Sweep) -> PaneInfo | None:
    """The placement's pane in this tick's listing of its server, if it is there."""
    if placement.pane_id is None:
        return None
    info = panes.get((placement.backend.value, placement.socket), {}).get(placement.pane_id)
    return ours(info, placement.identity)  # a pane that took the id later is not the agent's


def _alive(placement: Placement, panes: Sweep) -> bool:
    info = _pane_info(placement, panes)
    return info is not None and not info.dead
