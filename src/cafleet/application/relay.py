"""The relay of one host, and the client side of its pane requests (domain/relay.py).

A relay beats (says it is alive), delivers the queued messages left for its host's panes by
senders on other hosts, and runs the pane verbs asked of its host, writing each answer back.
Every piece of work waits in the store, so a relay that was down catches up when it starts.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from cafleet.application.ports import Clock, ProcessIdentity, UnitOfWork, UnitOfWorkFactory
from cafleet.domain.errors import CafleetError, Conflict, ErrorKind, Unavailable, error_of_kind
from cafleet.domain.relay import (
    RELAY_ANSWER_SECONDS,
    RELAY_BEAT_SECONDS,
    PaneVerb,
    RelayBeat,
    RelayRequest,
    RequestState,
    relayed_host,
)

ANSWER_POLL_SECONDS = 0.05

# runs one verb on this host's pane: (request) -> the answer text; raises a CafleetError
VerbRunner = Callable[[RelayRequest], str]
# delivers what is queued for these recipients' panes (MessagingService.drain_queued)
QueueDrainer = Callable[[list[int]], None]


@dataclass(frozen=True)
class RelayTick:
    delivered_to: tuple[int, ...] = ()  # recipients whose queues were delivered
    answered: tuple[RelayRequest, ...] = ()
    displaced: bool = False  # another relay of this host took over: stop


def no_relay(host: str, beat: RelayBeat | None) -> Unavailable:
    seen = "never seen" if beat is None else f"last seen {beat.seen_at.isoformat()}"
    return Unavailable(
        f"no relay of host {host!r} is alive ({seen}); start `cafleet relay` on that host"
    )


def beat_of(uow: UnitOfWork, host: str) -> RelayBeat | None:
    return next((b for b in uow.relays.beats() if b.host == host), None)


class RelayService:
    def __init__(
        self,
        uow: UnitOfWorkFactory,
        clock: Clock,
        process: ProcessIdentity,
        host: str,
        drain: QueueDrainer,
        run_verb: VerbRunner,
    ) -> None:
        self._uow = uow
        self._clock = clock
        self._process = process
        self.host = host
        self._drain = drain
        self._run_verb = run_verb
        self._beaten_at: datetime | None = None

    def start(self) -> RelayBeat:
        """Claim this host's relay; refused while another live one holds it."""
        pid = self._process.pid()
        with self._uow(write=True) as uow:
            now = self._clock.now()
            current = beat_of(uow, self.host)
            if current is not None and current.holds_against(pid, now, self._process.alive):
                raise Conflict(
                    f"a relay for host {self.host!r} is already running (pid {current.pid})"
                )
            beat = RelayBeat(self.host, pid, now, now)
            uow.relays.beat(beat)
            uow.commit()
        self._beaten_at = now
        return beat

    def stop(self) -> None:
        with self._uow(write=True) as uow:
            uow.relays.leave(self.host, self._process.pid())
            uow.commit()

    def tick(self) -> RelayTick:
        """Beat when due, then deliver the queues left for this host and answer its requests."""
        if not self._beat():
            return RelayTick(displaced=True)
        recipients, requests = self._work()
        if recipients:
            self._drain(recipients)
        return RelayTick(tuple(recipients), tuple(self._answer(r) for r in requests))

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
            uow.relays.beat(RelayBeat(self.host, pid, started, now))
            uow.commit()
        self._beaten_at = now
        return True

    def _work(self) -> tuple[list[int], list[RelayRequest]]:
        with self._uow() as uow:
            requests = uow.relays.pending(self.host)
            here = [
                placement.agent_id
                for fleet in uow.fleets.list_live()
                for placement in uow.placements.for_agents(
                    a.agent_id for a in uow.agents.in_fleet(fleet.fleet_id)
                ).values()
                if placement.host == self.host and not placement.is_pending
            ]
            waiting = uow.deliveries.stranded(here, self._clock.now() + timedelta(seconds=1))
            recipients = [
                agent
                for agent in waiting
                if any(
                    relayed_host(row.error) == self.host for row in uow.deliveries.queued_for(agent)
                )
            ]
        return recipients, requests

    def _answer(self, request: RelayRequest) -> RelayRequest:
        try:
            answered = request.answered(self._run_verb(request), self._clock.now())
        except CafleetError as exc:
            answered = request.failed(exc.kind.value, exc.message, self._clock.now())
        with self._uow(write=True) as uow:
            current = uow.relays.request(request.request_id)
            if current is not None and current.state is RequestState.PENDING:
                uow.relays.settle(answered)
                uow.commit()
        return answered


class RelayClient:
    """Asks a pane verb of another host's relay and waits (bounded) for its answer."""

    def __init__(
        self, uow: UnitOfWorkFactory, clock: Clock, wait: float = RELAY_ANSWER_SECONDS
    ) -> None:
        self._uow = uow
        self._clock = clock
        self._wait = wait

    def run(self, host: str, fleet_id: int, agent_id: int, verb: PaneVerb, argument: str) -> str:
        """The verb's answer as the relay wrote it; its error raised as this host would."""
        with self._uow(write=True) as uow:
            now = self._clock.now()
            beat = beat_of(uow, host)
            if beat is None or not beat.is_alive(now):
                raise no_relay(host, beat)
            request_id = uow.relays.ask(RelayRequest(host, fleet_id, agent_id, verb, argument, now))
            uow.commit()
        deadline = now + timedelta(seconds=self._wait)
        while True:
            with self._uow() as uow:
                request = uow.relays.request(request_id)
            if request is not None and request.state is not RequestState.PENDING:
                return _answer_of(request)
            if self._clock.now() >= deadline:
                return self._give_up(request_id, host)
            self._clock.sleep(ANSWER_POLL_SECONDS)

    def _give_up(self, request_id: int, host: str) -> str:
        """Withdraw an unanswered request, unless the answer came in meanwhile."""
        with self._uow(write=True) as uow:
            request = uow.relays.request(request_id)
            assert request is not None
            if request.state is not RequestState.PENDING:
                return _answer_of(request)
            message = f"the relay of host {host!r} did not answer within {self._wait:g}s"
            uow.relays.settle(
                request.failed(ErrorKind.UNAVAILABLE.value, message, self._clock.now())
            )
            uow.commit()
        raise Unavailable(message)


def _answer_of(request: RelayRequest) -> str:
    if request.state is RequestState.DONE:
        return request.answer or ""
    raise error_of_kind(request.error_kind or "", request.answer or "the relay gave no reason")
