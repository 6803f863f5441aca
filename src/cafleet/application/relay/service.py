"""The relay of one host, and the client side of its pane requests (domain/relay.py).

A relay beats (says it is alive), delivers the queued messages left for its host's panes by
senders on other hosts, runs the pane verbs asked of its host and writes each answer back,
and reports what it sees of its host's panes for the other hosts' commands and monitor.
Every piece of work waits in the store, so a relay that was down catches up when it starts.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from cafleet.application.ports.store import UnitOfWork, UnitOfWorkFactory, WorkSignals
from cafleet.application.ports.system import Clock, ProcessIdentity
from cafleet.domain.errors import CafleetError, Conflict, ErrorKind, error_of_kind
from cafleet.domain.holds import hold_of
from cafleet.domain.placement import PaneLocation, Placement
from cafleet.domain.relay import (
    RELAY_ANSWER_SECONDS,
    RELAY_BEAT_SECONDS,
    HostRelay,
    PaneReport,
    PaneVerb,
    RelayBeat,
    RelayDown,
    RelayRequest,
    RelaySession,
    RequestState,
    relayed_host,
)

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

ANSWER_POLL_SECONDS = 0.05
REPORT_SECONDS = 2.0  # how often a relay looks at its host's panes for the other hosts
PANES_CHANGED = frozenset({PaneVerb.SPAWN, PaneVerb.DELETE, PaneVerb.CLOSE})

# runs one verb on this host's pane: (request) -> the answer text; raises a CafleetError
VerbRunner = Callable[[RelayRequest], str]
# delivers what is queued for these recipients' panes (MessagingService.drain_queued)
QueueDrainer = Callable[[list[int]], None]
# what this host's multiplexers and agents say of these placements' panes now
PaneReader = Callable[[Sequence[Placement]], list[PaneReport]]


@dataclass(frozen=True)
class RelayDuties:
    """What a relay does for its host, as the services that do it for a local command."""

    drain: QueueDrainer
    run_verb: VerbRunner
    read_panes: PaneReader | None = None  # None: no reports for the other hosts
    # the receipts the agents' own records show, written as the monitor does for its host
    record_receipts: Callable[[Sequence[Placement]], None] | None = None
    own_pane: Callable[[], PaneLocation | None] | None = None  # the pane the relay runs in
    # a session of the relay's own, for a relay in no pane (raises a CafleetError if it cannot)
    own_session: Callable[[], RelaySession] | None = None
    # the titles of this host's panes (PaneTitles.refresh): mail sent from another host
    # could not title them
    retitle: Callable[[Sequence[int]], object] | None = None


@dataclass(frozen=True)
class RelayTick:
    delivered_to: tuple[int, ...] = ()  # recipients whose queues were delivered
    answered: tuple[RelayRequest, ...] = ()
    displaced: bool = False  # another relay of this host took over: stop


class PolledWork(WorkSignals):
    """No word of new work (SQLite): the relay looks again when the time is up."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock

    def wait(self, seconds: float) -> bool:
        self._clock.sleep(seconds)
        return False

    def close(self) -> None:
        pass


def no_relay(host: str, beat: RelayBeat | None) -> RelayDown:
    seen = "never seen" if beat is None else f"last seen {beat.seen_at.isoformat()}"
    return RelayDown(
        host, f"no relay of host {host!r} is alive ({seen}); start `cafleet relay` on that host"
    )


def beat_of(uow: UnitOfWork, host: str) -> RelayBeat | None:
    return next((b for b in uow.relays.beats() if b.host == host), None)


@dataclass(frozen=True)
class HostPanes:
    """One host of the store: its relay, and how many live placements have panes there."""

    relay: HostRelay
    panes: int


def hosts_of(uow: UnitOfWorkFactory, now: datetime) -> list[HostPanes]:
    """Every host with a relay beat or a placed pane, by name (`cafleet doctor`)."""
    with uow() as tx:
        beats = {b.host: b for b in tx.relays.beats()}
        panes: dict[str, int] = {}
        for placement in placed_panes(tx):
            if placement.host is not None:
                panes[placement.host] = panes.get(placement.host, 0) + 1
    return [
        HostPanes(HostRelay.of(host, beats, now), panes.get(host, 0))
        for host in sorted({*beats, *panes})
    ]


def placed_panes(uow: UnitOfWork) -> list[Placement]:
    """The placements with a pane, of every live fleet."""
    return [
        placement
        for fleet in uow.fleets.list_live()
        for placement in uow.placements.for_agents(
            a.agent_id for a in uow.agents.in_fleet(fleet.fleet_id)
        ).values()
        if not placement.is_pending
    ]


def live_beats(uow: UnitOfWork, now: datetime) -> dict[str, RelayBeat]:
    """The hosts whose relay is alive now, with its beat."""
    return {b.host: b for b in uow.relays.beats() if b.is_alive(now)}


class RelayService:
    def __init__(
        self,
        uow: UnitOfWorkFactory,
        clock: Clock,
        process: ProcessIdentity,
        host: str,
        duties: RelayDuties,
        workers: int = 0,
    ) -> None:
        """workers: threads that run pane requests, so a long one (a spawn waiting for its
        agent) holds up neither deliveries nor other requests; 0 runs them in the tick."""
        self._uow = uow
        self._clock = clock
        self._process = process
        self.host = host
        self._duties = duties
        self._workers = workers
        self._pool: ThreadPoolExecutor | None = None
        self._running: dict[int, Future[RelayRequest]] = {}
        self._beaten_at: datetime | None = None
        self._reported_at: datetime | None = None
        self._reported: list[PaneReport] | None = None
        self._pane: PaneLocation | None = None
        self.session: RelaySession | None = None  # set when it runs in no pane
        self.no_session: str | None = None  # why no session of its own could be made

    def start(self) -> RelayBeat:
        """Claim this host's relay; refused while another live one holds it."""
        pid = self._process.pid()
        self._pane = self._home()
        with self._uow(write=True) as uow:
            now = self._clock.now()
            current = beat_of(uow, self.host)
            if current is not None and current.holds_against(pid, now, self._process.alive):
                raise Conflict(
                    f"a relay for host {self.host!r} is already running (pid {current.pid})"
                )
            beat = RelayBeat(self.host, pid, now, now, self._pane)
            uow.relays.beat(beat)
            uow.commit()
        self._beaten_at = now
        return beat

    def _home(self) -> PaneLocation | None:
        """The pane members spawned here from other hosts open beside: the relay's own, else
        one of a session of its own (None: no multiplexer to spawn them in)."""
        own_pane, own_session = self._duties.own_pane, self._duties.own_session
        pane = None if own_pane is None else own_pane()
        if pane is not None or own_session is None:
            return pane
        try:
            self.session = own_session()
        except CafleetError as exc:
            self.no_session = exc.message
            return None
        return self.session.pane

    def stop(self) -> None:
        """Finish the requests in hand (those not begun stay pending), then leave."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
        with self._uow(write=True) as uow:
            if (
                current := beat_of(uow, self.host)
            ) is not None and current.pid == self._process.pid():
                uow.relays.report(self.host, [])
            uow.relays.leave(self.host, self._process.pid())
            uow.commit()

    def tick(self) -> RelayTick:
        """Beat when due, deliver the queues left for this host, report its panes when due,
        and take on its pending requests; the answers finished since the last tick."""
        if not self._beat():
            return RelayTick(displaced=True)
        here, recipients, requests = self._work()
        if recipients:
            self._drain(recipients)
        self._report(here)
        for request in requests:
            self._take(request)
        return RelayTick(tuple(recipients), self._finished())

    def _drain(self, recipients: list[int]) -> None:
        self._duties.drain(recipients)

    def _beat(self) -> bool:
        now = self._clock.now()
        if self._beaten_at is not None and now - self._beaten_at < timedelta(
            seconds=RELAY_BEAT_SECONDS
        ):
            return True
        pid = self._process.pid()
        with self._uow(write=True) as uow:
            current = beat_of(uow, self.host)
            if current is not None and current.pid != pid:
                return False
            started = now if current is None else current.started_at
            uow.relays.beat(RelayBeat(self.host, pid, started, now, self._pane))
            uow.commit()
        self._beaten_at = now
        return True

    def _work(self) -> tuple[list[Placement], list[int], list[RelayRequest]]:
        """This host's placed panes, the recipients with deliveries left for this relay,
        and the requests it has not taken on yet."""
        with self._uow() as uow:
            requests = [
                r for r in uow.relays.pending(self.host) if r.request_id not in self._running
            ]
            here = [p for p in placed_panes(uow) if p.host == self.host]
            members = [p.agent_id for p in here]
            waiting = uow.deliveries.stranded(members, self._clock.now() + timedelta(seconds=1))
            recipients = [  # relayed here, or held for a pane of this host (domain/holds)
                agent
                for agent in waiting
                if any(
                    relayed_host(row.error) == self.host or hold_of(row) is not None
                    for row in uow.deliveries.queued_for(agent)
                )
            ]
        return here, recipients, requests

    def _report(self, here: list[Placement]) -> None:
        """What this host's panes show, written when it changed, every REPORT_SECONDS."""
        read = self._duties.read_panes
        now = self._clock.now()
        if read is None or (
            self._reported_at is not None
            and now - self._reported_at < timedelta(seconds=REPORT_SECONDS)
        ):
            return
        self._reported_at = now
        if self._duties.record_receipts is not None:
            self._duties.record_receipts([p for p in here if p.is_member])
        if self._duties.retitle is not None:
            self._duties.retitle([p.agent_id for p in here])
        reports = read(here)
        if reports == self._reported:
            return
        with self._uow(write=True) as uow:
            uow.relays.report(self.host, reports)
            uow.commit()
        self._reported = reports

    def _take(self, request: RelayRequest) -> None:
        if self._workers <= 0:
            done: Future[RelayRequest] = Future()
            done.set_result(self._answer(request))
            self._running[request.request_id] = done
            return
        if self._pool is None:
            from concurrent.futures import ThreadPoolExecutor

            self._pool = ThreadPoolExecutor(self._workers, thread_name_prefix="relay")
        self._running[request.request_id] = self._pool.submit(self._answer, request)

    def _finished(self) -> tuple[RelayRequest, ...]:
        done = [rid for rid, future in self._running.items() if future.done()]
        return tuple(self._running.pop(rid).result() for rid in sorted(done))

    def _answer(self, request: RelayRequest) -> RelayRequest:
        try:
            answered = request.answered(self._duties.run_verb(request), self._clock.now())
        except CafleetError as exc:
            answered = request.failed(exc.kind.value, exc.message, self._clock.now())
        except Exception as exc:  # a bug in one verb is that request's answer, not the relay's end
            text = f"internal error: {type(exc).__name__}: {str(exc).strip()[:200]}"
            answered = request.failed(ErrorKind.UNAVAILABLE.value, text, self._clock.now())
        with self._uow(write=True) as uow:
            current = uow.relays.request(request.request_id)
            if current is not None and current.state is RequestState.PENDING:
                uow.relays.settle(answered)
                uow.commit()
        if request.verb in PANES_CHANGED:
            self._reported_at = None  # the other hosts see the new or closed pane next tick
        return answered


class RelayClient:
    """Asks a pane verb of another host's relay and waits (bounded) for its answer."""

    def __init__(
        self, uow: UnitOfWorkFactory, clock: Clock, wait: float = RELAY_ANSWER_SECONDS
    ) -> None:
        self._uow = uow
        self._clock = clock
        self._wait = wait

    def run(
        self,
        host: str,
        fleet_id: int,
        agent_id: int,
        verb: PaneVerb,
        argument: str,
        wait: float | None = None,
    ) -> str:
        """The verb's answer as the relay wrote it; its error raised as this host would.
        `wait`: how long the verb may take there (default RELAY_ANSWER_SECONDS)."""
        wait = self._wait if wait is None else wait
        with self._uow(write=True) as uow:
            now = self._clock.now()
            beat = beat_of(uow, host)
            if beat is None or not beat.is_alive(now):
                raise no_relay(host, beat)
            request_id = uow.relays.ask(RelayRequest(host, fleet_id, agent_id, verb, argument, now))
            uow.relays.wake(host)
            uow.commit()
        deadline = now + timedelta(seconds=wait)
        try:
            while True:
                with self._uow() as uow:
                    request = uow.relays.request(request_id)
                if request is not None and request.state is not RequestState.PENDING:
                    return _answer_of(request)
                if self._clock.now() >= deadline:
                    late = f"the relay of host {host!r} did not answer within {wait:g}s"
                    return _answer_of(self._withdraw(request_id, late))
                self._clock.sleep(ANSWER_POLL_SECONDS)
        except KeyboardInterrupt:
            self._withdraw(request_id, "the command that asked was interrupted")
            raise

    def _withdraw(self, request_id: int, reason: str) -> RelayRequest:
        """Withdraw an unanswered request, so a relay that comes back later does not run
        it; the request as settled (its answer, when that came in meanwhile)."""
        with self._uow(write=True) as uow:
            request = uow.relays.request(request_id)
            assert request is not None
            if request.state is not RequestState.PENDING:
                return request
            withdrawn = request.failed(ErrorKind.UNAVAILABLE.value, reason, self._clock.now())
            uow.relays.settle(withdrawn)
            uow.commit()
        return withdrawn


def _answer_of(request: RelayRequest) -> str:
    if request.state is RequestState.DONE:
        return request.answer or ""
    raise error_of_kind(request.error_kind or "", request.answer or "the relay gave no reason")
