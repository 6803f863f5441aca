"""The pane verbs on one placed agent: capture, exec, ping.

Each reaches the pane through the multiplexer and socket its placement recorded,
never through the caller's environment.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from cafleet.application.lookups import active_agent, refuse_deleted_fleet
from cafleet.application.members.shell import AgentServerShell
from cafleet.application.panes.keystrokes import Keystrokes, KeystrokeSender
from cafleet.application.ports.panes import LimitedCaptures, PaneDrivers
from cafleet.application.ports.store import UnitOfWork, UnitOfWorkFactory
from cafleet.application.ports.system import Clock
from cafleet.application.relay.service import RelayClient
from cafleet.domain.delivery import DeliveryState, PushOutcome, describe_skip
from cafleet.domain.digests import sha256_hex
from cafleet.domain.errors import Invalid, NotFound, Unavailable
from cafleet.domain.fleet import Agent
from cafleet.domain.panes import PaneGone, ours, strip_ansi
from cafleet.domain.placement import PushTarget
from cafleet.domain.relay import PaneVerb, RelayRequest


@dataclass(frozen=True)
class PlacedAgent:
    agent: Agent
    target: PushTarget


@dataclass(frozen=True)
class Capture:
    member_agent_id: int
    pane_id: str
    lines: int  # asked
    content: str
    captured_at: datetime
    # set when the multiplexer, which reads at most this many rows of a pane, left out
    # older lines that were asked for
    cut_at: int | None = None

    @property
    def content_sha256(self) -> str:
        return sha256_hex(self.content.encode())

    @property
    def lines_returned(self) -> int:
        return len(self.content.splitlines())


def placed_agent(uow: UnitOfWork, fleet_id: int, agent_id: int, verb: str) -> PlacedAgent:
    """An active agent of the fleet with a recorded pane, or the error that names what is
    missing (no agent, no placement row, pending pane); a deleted fleet is refused first."""
    refuse_deleted_fleet(uow, fleet_id)
    agent = active_agent(uow, fleet_id, agent_id, f"Agent {agent_id} not found")
    placement = uow.placements.get(agent_id)
    if placement is None:
        raise NotFound(
            f"agent {agent_id} has no placement row; it was not spawned via"
            " `cafleet member create`."
        )
    if placement.is_pending:
        raise Invalid(f"member {agent_id} has no pane yet (pending placement) — nothing to {verb}.")
    return PlacedAgent(agent, PushTarget.of(placement))


class MemberPanes:
    def __init__(
        self,
        uow: UnitOfWorkFactory,
        clock: Clock,
        drivers: PaneDrivers,
        keystrokes: KeystrokeSender,
        shell: AgentServerShell | None = None,
        relay: RelayClient | None = None,
    ) -> None:
        self._uow = uow
        self._clock = clock
        self._drivers = drivers
        self._keystrokes = keystrokes
        self._shell = shell
        self._relay = relay  # None: a pane on another host is refused

    def _placed(self, fleet_id: int, agent_id: int, verb: str) -> PlacedAgent:
        with self._uow() as uow:
            return placed_agent(uow, fleet_id, agent_id, verb)

    def _relayed(self, placed: PlacedAgent, verb: PaneVerb, argument: str) -> str | None:
        """The answer of the pane's host's relay when the pane is on another host, else None
        (the verb runs here)."""
        target = placed.target
        if self._drivers.reaches(target.host):
            return None
        assert target.host is not None
        if self._relay is None:
            self._drivers(target.backend, target.socket, target.host)  # raises PaneElsewhere
        assert self._relay is not None
        fleet_id = placed.agent.fleet_id
        return self._relay.run(target.host, fleet_id, target.agent_id, verb, argument)

    def capture(self, fleet_id: int, member_id: int, lines: int, *, ansi: bool) -> Capture:
        placed = self._placed(fleet_id, member_id, "capture")
        target = placed.target
        verb = PaneVerb.CAPTURE_ANSI if ansi else PaneVerb.CAPTURE
        relayed = self._relayed(placed, verb, str(lines))
        if relayed is not None:
            return Capture(member_id, target.pane_id, lines, relayed, self._clock.now())
        driver = self._drivers(target.backend, target.socket, target.host)
        if ours(driver.pane(target.pane_id), target.identity) is None:
            raise PaneGone(target.pane_id)  # never show another pane that took the id
        cut_at = None
        if isinstance(driver, LimitedCaptures):
            content, cut = driver.capture_cut(target.pane_id, lines, ansi=ansi)
            cut_at = driver.capture_limit if cut else None
        else:
            content = driver.capture(target.pane_id, lines, ansi=ansi)
        if not ansi:
            content = strip_ansi(content)
        return Capture(member_id, target.pane_id, lines, content, self._clock.now(), cut_at)

    def exec(self, fleet_id: int, member_id: int, command: str) -> PlacedAgent:
        placed = self._placed(fleet_id, member_id, "exec")
        if self._relayed(placed, PaneVerb.EXEC, command) is not None:
            return placed
        outcome = None if self._shell is None else self._shell.run(placed.target, command)
        if outcome is None:  # the agent's server cannot take it: its shell mode is typed
            outcome = self._keystrokes.deliver(placed.target, Keystrokes.shell_command(command))
        self._require_sent(placed, outcome, "the shell command")
        return placed

    def ping(self, fleet_id: int, member_id: int) -> PlacedAgent:
        placed = self._placed(fleet_id, member_id, "ping")
        if self._relayed(placed, PaneVerb.PING, "") is not None:
            return placed
        outcome = self._keystrokes.deliver(
            placed.target, Keystrokes.poll_trigger(fleet_id, member_id)
        )
        self._require_sent(placed, outcome, "the poll-trigger keystroke")
        return placed

    def wake(self, fleet_id: int, watcher_id: int, text: str) -> None:
        """The monitor's wake line into the monitoring member's pane, for a monitor on
        another host (MonitorService types it itself on its own host)."""
        placed = self._placed(fleet_id, watcher_id, "wake")
        outcome = self._keystrokes.deliver(placed.target, Keystrokes.wake(text))
        self._require_sent(placed, outcome, "the wake line")

    def _require_sent(self, placed: PlacedAgent, outcome: PushOutcome, what: str) -> None:
        target = placed.target
        if outcome.state is DeliveryState.SKIPPED:
            raise Invalid(
                f"{what} was not typed into pane {target.pane_id} ({target.coding_agent.value}):"
                f" {describe_skip(outcome.error)}."
            )
        if outcome.state is DeliveryState.FAILED:
            channel = "tmux send-keys" if target.backend.value == "tmux" else "herdr"
            raise Unavailable(
                f"send failed: {channel} did not deliver {what} to pane {target.pane_id}."
            )

    def run_relayed(self, request: RelayRequest) -> str:
        """A verb another host asked of this host's relay (domain/relay.py), run here."""
        fleet_id, member_id, argument = request.fleet_id, request.agent_id, request.argument
        match request.verb:
            case PaneVerb.EXEC:
                self.exec(fleet_id, member_id, argument)
            case PaneVerb.PING:
                self.ping(fleet_id, member_id)
            case PaneVerb.WAKE:
                self.wake(fleet_id, member_id, argument)
            case PaneVerb.CAPTURE | PaneVerb.CAPTURE_ANSI:
                ansi = request.verb is PaneVerb.CAPTURE_ANSI
                return self.capture(fleet_id, member_id, int(argument), ansi=ansi).content
            case _:
                raise Invalid(f"{request.verb.value} is not a pane verb")
        return ""
