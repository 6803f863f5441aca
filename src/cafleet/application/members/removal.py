"""Removing members: close the pane (gracefully unless forced), then deregister."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from cafleet.application.lookups import active_agent, refuse_deleted_fleet
from cafleet.application.panes.teardown import Closing, PaneClosing, PaneTeardown
from cafleet.application.ports.panes import PaneDrivers
from cafleet.application.ports.store import UnitOfWorkFactory
from cafleet.application.ports.system import Clock
from cafleet.application.relay.service import RelayClient
from cafleet.domain.errors import CafleetError, NotFound, Unavailable
from cafleet.domain.placement import Placement, PushTarget
from cafleet.domain.relay import (
    RELAY_MARGIN_SECONDS,
    PaneVerb,
    RelayDown,
    RelayRequest,
    payload,
    values_of,
)

DEFAULT_EXIT_TIMEOUT_SECONDS = 15.0


@dataclass(frozen=True)
class MemberDeleted:
    agent_id: int
    pane_status: str
    forced: bool
    warning: str | None = None


def kill_failed(target: PushTarget, reason: str | None) -> Unavailable:
    return Unavailable(
        f"kill_pane failed for pane {target.pane_id}: {reason}. The {target.backend.value}"
        " server may be unreachable. Verify with 'cafleet doctor', then re-run the command."
    )


class MemberRemoval:
    def __init__(
        self,
        uow: UnitOfWorkFactory,
        clock: Clock,
        drivers: PaneDrivers,
        teardown: PaneTeardown,
        relay: RelayClient | None = None,
    ) -> None:
        self._uow = uow
        self._clock = clock
        self._drivers = drivers
        self._teardown = teardown
        self._relay = relay  # None: a pane on another host is refused

    def delete(
        self,
        fleet_id: int,
        member_id: int,
        *,
        force: bool = False,
        timeout: float = DEFAULT_EXIT_TIMEOUT_SECONDS,
    ) -> MemberDeleted:
        with self._uow() as uow:
            refuse_deleted_fleet(uow, fleet_id)
            agent = active_agent(uow, fleet_id, member_id, f"Agent {member_id} not found")
            fleet = uow.fleets.get(fleet_id)
            if fleet is None:
                raise NotFound(f"Agent {member_id} not found")
            agent.deregistered(fleet, self._clock.now())  # refuses the Director and Admin
            placement = uow.placements.get(member_id)
        host = None if placement is None else placement.host
        if self._drivers.reaches(host) or self._relay is None:
            status, closing, warning = self._close(placement, force, timeout)
        else:
            assert host is not None and placement is not None
            try:
                return self._delete_elsewhere(host, fleet_id, member_id, force, timeout)
            except RelayDown as down:
                status, closing, warning = _left_open(placement, down, force)
        with self._uow(write=True) as uow:
            current = uow.agents.get(member_id)
            if current is not None and current.is_active:
                uow.agents.save(current.deregistered(fleet, self._clock.now()))
            uow.placements.remove(member_id)
            uow.monitor.unenroll(member_id)
            uow.commit()
        untouched = closing is Closing.NOT_OURS  # never relayout a window not the fleet's
        if placement is not None and placement.pane_id is not None and not untouched:
            self._relayout(placement)
        return MemberDeleted(member_id, status, force, warning)

    def _delete_elsewhere(
        self, host: str, fleet_id: int, member_id: int, force: bool, timeout: float
    ) -> MemberDeleted:
        """The member's host's relay closes its pane and deregisters it."""
        assert self._relay is not None
        asked = payload({"force": force, "timeout": timeout})
        wait = timeout + RELAY_MARGIN_SECONDS
        answer = self._relay.run(host, fleet_id, member_id, PaneVerb.DELETE, asked, wait)
        done = values_of(answer)
        return MemberDeleted(member_id, str(done["pane_status"]), force, done.get("warning"))

    def run_relayed(self, request: RelayRequest) -> str:
        """A DELETE another host asked of this host's relay: what it says of the pane."""
        asked = values_of(request.argument)
        done = self.delete(
            request.fleet_id,
            request.agent_id,
            force=bool(asked.get("force")),
            timeout=float(asked.get("timeout", DEFAULT_EXIT_TIMEOUT_SECONDS)),
        )
        return payload({"pane_status": done.pane_status, "warning": done.warning})

    def _close(
        self, placement: Placement | None, force: bool, timeout: float
    ) -> tuple[str, Closing | None, str | None]:
        if placement is None:
            return "(no placement)", None, None
        if placement.pane_id is None:
            return "(pending — no pane)", None, None
        target = PushTarget.of(placement)
        closing = (
            self._teardown.force(target) if force else self._teardown.graceful([target], timeout)[0]
        )
        shown, warning = _describe(closing, timeout, force)
        return shown, closing.status, warning

    def _relayout(self, placement: Placement) -> None:
        with contextlib.suppress(CafleetError):  # layout is cosmetic
            self._drivers(placement.backend, placement.socket, placement.host).relayout(
                placement.window_id
            )


def _left_open(
    placement: Placement, down: RelayDown, force: bool
) -> tuple[str, Closing | None, str | None]:
    """A member whose host has no live relay: deregistered only when forced, its pane left
    as it is (nothing here can reach it)."""
    if not force:
        raise Unavailable(
            f"{down.message}, or pass --force to deregister the member and leave its pane"
        ) from down
    shown = f"{placement.pane_id or '-'} (left open: host {down.host!r} is unreachable)"
    return shown, Closing.NOT_OURS, f"Warning: {down.message}"


def _describe(closing: PaneClosing, timeout: float, forced: bool) -> tuple[str, str | None]:
    target = closing.target
    pane = target.pane_id
    if closing.status is Closing.FAILED:
        raise kill_failed(target, closing.detail)
    if closing.status is Closing.NOT_OURS:
        return f"{pane} (pane-gone: not the member's pane any more; left untouched)", None
    if forced:
        return f"{pane} (killed)", None
    if closing.status is Closing.KILLED:
        return f"{pane} (killed: /exit not delivered)", None
    if closing.status is Closing.KILLED_NOT_AGENT:
        return f"{pane} (killed: not running {target.coding_agent.value})", None
    if closing.status is Closing.KILLED_AT_DIALOG:
        return f"{pane} (killed: a dialog is on screen ({closing.detail}); /exit not typed)", None
    if closing.status is Closing.KILLED_AFTER_TIMEOUT:
        warning = (
            f"Warning: pane {pane} did not close within {timeout:.1f}s after /exit;"
            f" killing it.\n--- pane {pane} tail (last 80 lines) ---\n"
            f"{closing.tail or ''}\n---"
        )
        return f"{pane} (killed after timeout)", warning
    return f"{pane} (closed)", None
