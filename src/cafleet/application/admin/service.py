"""What the admin WebUI can see and do in one fleet.

Reads work on deleted fleets too (history stays readable); writes need a live
fleet. The WebUI only ever sends as the fleet's Administrator, through
MessagingService so the push still happens after commit. Not-found answers use
the WebUI's own wording and are identical for unknown ids, ids of other fleets
and deregistered agents where a WebUI route names only active ones.

Each member's agent status comes from MemberService, as `member list` reads it. The
event stream's fingerprint reuses one reading per fleet for a few seconds, so the
panes and agents are asked at that pace however many pages are open.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Final, Literal

from cafleet.application.admin.views import (
    AgentStatusMark,
    FleetMark,
    MessageView,
    Page,
    RosterEntry,
    RuntimeView,
    SearchView,
    SendReceipt,
)
from cafleet.application.fleets import FleetRow, FleetService
from cafleet.application.lookups import answered_message
from cafleet.application.members.registry import MemberService, MemberView
from cafleet.application.messaging.search import SearchService
from cafleet.application.messaging.service import MessagingService
from cafleet.application.monitoring.service import MonitorService
from cafleet.application.ports.store import UnitOfWork, UnitOfWorkFactory
from cafleet.application.ports.system import Clock
from cafleet.domain.agents.status import StatusReport
from cafleet.domain.delivery import Delivery
from cafleet.domain.errors import Invalid, NotFound
from cafleet.domain.fleet import Agent, Fleet
from cafleet.domain.message import Message
from cafleet.domain.monitor import MonitorRuntime, MonitorSchedule
from cafleet.domain.placement import CodingAgent, Placement
from cafleet.domain.search import SearchQuery
from cafleet.domain.since import parse_since

BROADCAST: Final = "*"
Recipient = int | Literal["*"]

FLEET_NOT_FOUND = "Fleet not found"
AGENT_NOT_FOUND = "Agent not found"
AGENT_NOT_ENROLLED = "Agent not enrolled"
NO_ADMINISTRATOR = "from_agent not in fleet"
NO_BROADCAST_REPLY = "a broadcast answers no message: send the reply to one agent"
NOT_THE_ADMINISTRATOR = "from_agent must be the fleet Administrator"
EMPTY_TEXT = "text may not be empty"

# Ids are SQLite INTEGERs; a number outside that range names nothing, and asking the
# database about it would fail with an overflow instead of "not found".
_ID_RANGE = range(-(2**63), 2**63)

STATUS_SECONDS = 2.0  # how long the event stream reuses one reading of the agent statuses


class AdminService:
    def __init__(
        self,
        uow: UnitOfWorkFactory,
        clock: Clock,
        fleets: FleetService,
        messaging: MessagingService,
        monitoring: MonitorService,
        members: MemberService,
        search: SearchService | None = None,
        status_seconds: float = STATUS_SECONDS,
    ) -> None:
        self._uow = uow
        self._search = search or SearchService(uow)
        self._clock = clock
        self._fleets = fleets
        self._messaging = messaging
        self._monitoring = monitoring
        self._members = members
        self._status_ttl = timedelta(seconds=status_seconds)
        self._status_lock = threading.Lock()
        self._status_reads: dict[int, tuple[datetime, AgentStatusMark]] = {}

    # --- fleets -------------------------------------------------------------------------

    def fleets(self, *, include_deleted: bool = False) -> list[FleetRow]:
        return self._fleets.list(include_deleted=include_deleted)

    def fleet(self, fleet_id: int, *, writable: bool = False) -> Fleet:
        """The fleet a request is scoped to; a deleted fleet is readable but not writable."""
        with self._uow() as uow:
            return _fleet(uow, fleet_id, writable=writable)

    # --- agents and their monitoring ------------------------------------------------------

    def roster(self, fleet_id: int) -> list[RosterEntry]:
        """Active agents plus deregistered ones that still own or sent a message, each
        member with its agent status."""
        with self._uow() as uow:
            fleet = _fleet(uow, fleet_id)
            agents = uow.agents.in_fleet(fleet_id, active_only=False)
            retired = [a.agent_id for a in agents if not a.is_active]
            activity = uow.messages.activity(retired)
            shown = [
                a for a in agents if a.is_active or activity[a.agent_id].last_contact is not None
            ]
            schedules = uow.monitor.for_agents(a.agent_id for a in shown)
            placements = uow.placements.for_agents(a.agent_id for a in shown)
            unread = uow.messages.pending_counts([a.agent_id for a in shown])
        told = self._agent_statuses(fleet, shown, placements)
        return [
            RosterEntry(
                a,
                a.kind(fleet),
                schedules.get(a.agent_id),
                told.get(a.agent_id),
                _coding_agent(placements.get(a.agent_id)),
                unread.get(a.agent_id, 0),
            )
            for a in shown
        ]

    def watchable(self, fleet_id: int, agent_ids: Iterable[int]) -> None:
        """Refuses an id that is no agent of the fleet (the event stream's pane watch); an
        agent without a pane is watchable, its frames say why there is nothing to show."""
        with self._uow() as uow:
            _fleet(uow, fleet_id)
            known = {a.agent_id for a in uow.agents.in_fleet(fleet_id, active_only=False)}
        if any(agent_id not in known for agent_id in agent_ids):
            raise NotFound(AGENT_NOT_FOUND)

    def _agent_statuses(
        self, fleet: Fleet, agents: Iterable[Agent], placements: Mapping[int, Placement]
    ) -> dict[int, StatusReport]:
        """What `member list` says of each member's agent; none for a deleted fleet."""
        if fleet.is_deleted:
            return {}
        views = [
            MemberView(a, a.kind(fleet), placements[a.agent_id])
            for a in agents
            if a.agent_id in placements
        ]
        return {
            v.agent.agent_id: v.agent_status
            for v in self._members.with_panes(views)
            if v.agent_status is not None
        }

    def _status_mark(self, fleet_id: int) -> AgentStatusMark:
        """The agent statuses for the fingerprint, read at most once per interval per
        fleet whatever the number of streams (the lock keeps them from reading at once)."""
        with self._status_lock:
            now = self._clock.now()
            kept = self._status_reads.get(fleet_id)
            if kept is not None and now - kept[0] < self._status_ttl:
                return kept[1]
            with self._uow() as uow:
                fleet = uow.fleets.get(fleet_id)
                agents = uow.agents.in_fleet(fleet_id)
                placements = uow.placements.for_agents(a.agent_id for a in agents)
            told = {} if fleet is None else self._agent_statuses(fleet, agents, placements)
            mark = tuple((i, r.status.value, r.since) for i, r in sorted(told.items()))
            self._status_reads[fleet_id] = (now, mark)
            return mark

    def monitor_runtime(self, fleet_id: int) -> RuntimeView:
        with self._uow() as uow:
            _fleet(uow, fleet_id)
            runtime = uow.monitor.runtime(fleet_id)
        return self._judged(runtime)

    def schedule(self, fleet_id: int, agent_id: int) -> MonitorSchedule:
        return self._configure(fleet_id, agent_id, None, None)

    def reschedule(
        self, fleet_id: int, agent_id: int, interval_seconds: int | None, enabled: bool | None
    ) -> MonitorSchedule:
        """A partial edit; nothing to change is a plain read. Disabling clears the
        stall-check time (the schedule's own rule)."""
        self.fleet(fleet_id, writable=True)
        return self._configure(fleet_id, agent_id, interval_seconds, enabled)

    def _configure(
        self, fleet_id: int, agent_id: int, interval_seconds: int | None, enabled: bool | None
    ) -> MonitorSchedule:
        if agent_id not in _ID_RANGE:
            raise NotFound(AGENT_NOT_ENROLLED)
        try:
            return self._monitoring.config(fleet_id, agent_id, interval_seconds, enabled)
        except NotFound as exc:
            raise NotFound(AGENT_NOT_ENROLLED) from exc

    # --- messages -----------------------------------------------------------------------

    def inbox(self, fleet_id: int, agent_id: int, page: Page) -> list[MessageView]:
        with self._uow() as uow:
            _fleet(uow, fleet_id)
            _agent_of_fleet(uow, fleet_id, agent_id)
            found = uow.messages.owned_by(agent_id, page.limit, _bounded(page.before))
            return _views(uow, fleet_id, found)

    def sent(self, fleet_id: int, agent_id: int, page: Page) -> list[MessageView]:
        with self._uow() as uow:
            _fleet(uow, fleet_id)
            _agent_of_fleet(uow, fleet_id, agent_id)
            found = uow.messages.sent_by(agent_id, page.limit, _bounded(page.before))
            return _views(uow, fleet_id, found)

    def timeline(self, fleet_id: int, page: Page) -> list[MessageView]:
        with self._uow() as uow:
            _fleet(uow, fleet_id)
            found = uow.messages.timeline(fleet_id, page.limit, _bounded(page.before))
            return _views(uow, fleet_id, found)

    def since(self, text: str) -> datetime:
        """A search's `since` (an ISO time or an age), read against this server's clock."""
        return parse_since(text, self._clock.now())

    def search(self, fleet_id: int, query: SearchQuery) -> list[SearchView]:
        """The fleet's messages that match, best first, as the timeline shows them."""
        found = self._search.search(fleet_id, None, query)
        with self._uow() as uow:
            views = _views(uow, fleet_id, [h.message for h in found.hits])
        return [SearchView(v, h.score, h.snippet) for v, h in zip(views, found.hits, strict=True)]

    def send(
        self,
        fleet_id: int,
        to: Recipient,
        text: str,
        from_agent_id: int | None = None,
        reply_to: int | None = None,
    ) -> SendReceipt:
        """Send or broadcast ("*") as the Administrator; returns after the pushes settled.
        `reply_to`: a message the Administrator sent or received, whose thread it joins."""
        with self._uow() as uow:
            _fleet(uow, fleet_id, writable=True)
            administrator = next(
                (a for a in uow.agents.in_fleet(fleet_id) if a.is_administrator), None
            )
            if administrator is None:
                raise Invalid(NO_ADMINISTRATOR)
            if from_agent_id is not None and from_agent_id != administrator.agent_id:
                raise Invalid(NOT_THE_ADMINISTRATOR)
            if not text.strip():
                raise Invalid(EMPTY_TEXT)
            if to == BROADCAST and reply_to is not None:
                raise Invalid(NO_BROADCAST_REPLY)
            if reply_to is not None:  # refused in its own words, before the recipient's
                answered_message(uow, fleet_id, administrator.agent_id, reply_to)
            if to != BROADCAST:
                _active_agent(uow, fleet_id, to)
        sender = administrator.agent_id
        if to == BROADCAST:
            spread = self._messaging.broadcast(fleet_id, sender, text)
            return SendReceipt(spread.summary.task_id, spread.summary.state, spread.unrecorded)
        try:
            sent = self._messaging.send(fleet_id, sender, to, text, reply_to=reply_to)
        except NotFound as exc:  # the recipient left between the check and the send
            raise NotFound(AGENT_NOT_FOUND) from exc
        return SendReceipt(sent.message.task_id, sent.message.state, sent.unrecorded)

    # --- change detection for the event stream ---------------------------------------------

    def mark(self, fleet_id: int) -> FleetMark:
        """A few small reads; compared with an earlier mark, it tells what changed."""
        with self._uow() as uow:
            conversation = uow.messages.conversation_mark(fleet_id)
            agents = uow.agents.in_fleet(fleet_id, active_only=False)
            schedules = uow.monitor.for_agents(a.agent_id for a in agents)
            runtime = uow.monitor.runtime(fleet_id)
        return FleetMark(
            conversation,
            tuple((a.agent_id, a.status.value) for a in agents),
            tuple(
                (s.agent_id, s.interval_seconds, s.enabled, s.last_ping_at)
                for s in sorted(schedules.values(), key=lambda s: s.agent_id)
            ),
            self._judged(runtime).running,
            self._status_mark(fleet_id),
        )

    def _judged(self, runtime: MonitorRuntime | None) -> RuntimeView:
        seen, running = self._monitoring.judged(runtime)
        return RuntimeView(seen, running, self._clock.now())


def _fleet(uow: UnitOfWork, fleet_id: int, *, writable: bool = False) -> Fleet:
    fleet = uow.fleets.get(fleet_id) if fleet_id in _ID_RANGE else None
    if fleet is None:
        raise NotFound(FLEET_NOT_FOUND)
    return fleet.require_live() if writable else fleet


def _agent_of_fleet(uow: UnitOfWork, fleet_id: int, agent_id: int) -> Agent:
    """Any agent of the fleet, deregistered ones included (their history stays readable)."""
    agent = uow.agents.get(agent_id) if agent_id in _ID_RANGE else None
    if agent is None or agent.fleet_id != fleet_id:
        raise NotFound(AGENT_NOT_FOUND)
    return agent


def _active_agent(uow: UnitOfWork, fleet_id: int, agent_id: int) -> Agent:
    agent = _agent_of_fleet(uow, fleet_id, agent_id)
    if not agent.is_active:
        raise NotFound(AGENT_NOT_FOUND)
    return agent


def _coding_agent(placement: Placement | None) -> CodingAgent | None:
    return None if placement is None else placement.coding_agent


def _bounded(before: int | None) -> int | None:
    """The same page with the bound clamped into the storable range."""
    if before is None:
        return None
    return max(min(before, _ID_RANGE.stop - 1), _ID_RANGE.start)


def _views(uow: UnitOfWork, fleet_id: int, messages: Sequence[Message]) -> list[MessageView]:
    """Messages with names resolved (deregistered agents included) and their ledger row."""
    names = {a.agent_id: a.name for a in uow.agents.in_fleet(fleet_id, active_only=False)}
    ledger: dict[tuple[int, int], list[Delivery]] = {}
    for d in uow.deliveries.for_tasks([m.task_id for m in messages]):  # in attempt order
        ledger.setdefault((d.task_id, d.recipient_agent_id), []).append(d)
    views = []
    for m in messages:
        attempts = tuple(ledger.get((m.task_id, m.context_id), ()))
        views.append(
            MessageView(
                m,
                names.get(m.from_agent_id),
                names.get(m.to_agent_id) if m.to_agent_id is not None else None,
                attempts[-1] if attempts else None,
                attempts,
            )
        )
    return views
