"""`member create`: validate everything, register, spawn the pane, watch the agent start.

Every check runs before anything is written or spawned, so a bad template or a
missing binary never burns an agent id. The agent starts through CAFleet's launcher
(a private launch file holds its argv and environment), and the command returns only
once the agent has taken its spawn prompt. Once registered, any later failure rolls
the registration back and closes a pane that was already opened.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

from cafleet.application.identity import proven
from cafleet.application.lookups import refuse_deleted_fleet
from cafleet.application.members.readiness import StartWatch, StartWatcher
from cafleet.application.members.titles import PaneTitles
from cafleet.application.ports.agents import AgentStarts, LaunchPad, LaunchPads, Programs
from cafleet.application.ports.panes import PaneDriver, PaneDrivers, PaneLabels
from cafleet.application.ports.store import UnitOfWork, UnitOfWorkFactory
from cafleet.application.ports.system import Clock
from cafleet.application.relay.service import RelayClient, beat_of, no_relay
from cafleet.domain.agents.custom import (
    DEMO_AGENT_FLAGS,
    SpawnIdentity,
    accepted_commands,
    check_prompt,
    render_prompt,
)
from cafleet.domain.agents.homes import AgentHomes
from cafleet.domain.agents.launch import LaunchSpec, member_environment
from cafleet.domain.agents.profile import SPAWN_FILE, SpawnFacts
from cafleet.domain.agents.registry import AgentProfiles, agent_sessions, possible_channels
from cafleet.domain.agents.status import AgentStatus
from cafleet.domain.delivery import Channel
from cafleet.domain.errors import CafleetError, Invalid, Unavailable, UsageProblem
from cafleet.domain.fleet import Agent, CardKind, Fleet
from cafleet.domain.identity import MemberCredential, new_secret, secret_digest
from cafleet.domain.monitor import MEMBER_INTERVAL_SECONDS, MonitorSchedule
from cafleet.domain.pane_titles import pane_title
from cafleet.domain.panes import ours
from cafleet.domain.placement import CodingAgent, PaneLocation, Placement
from cafleet.domain.relay import (
    RELAY_MARGIN_SECONDS,
    PaneVerb,
    RelayRequest,
    payload,
    values_of,
)


@dataclass(frozen=True)
class MemberRequest:
    fleet_id: int
    director_id: int
    name: str
    description: str
    prompt: str
    coding_agent: CodingAgent | None = None  # None: claude, or the Director's for a monitor
    model: str | None = None
    agent_command: str | None = None
    monitor: bool = False
    caller: MemberCredential | None = None  # a member pane's proof (it is never a Director)
    # the host whose multiplexer opens the pane: None, the Director's (beside its pane);
    # another, beside the pane that host's relay runs in
    host: str | None = None

    def relayed(self) -> str:
        """The request as the SPAWN verb's argument for the relay of its host."""
        return payload(
            {
                "name": self.name,
                "description": self.description,
                "prompt": self.prompt,
                "coding_agent": None if self.coding_agent is None else self.coding_agent.value,
                "model": self.model,
                "agent_command": self.agent_command,
                "monitor": self.monitor,
            }
        )

    @staticmethod
    def of_relayed(request: RelayRequest) -> MemberRequest:
        """A SPAWN request another host left for this host's relay."""
        asked = values_of(request.argument)
        agent = asked.get("coding_agent")
        return MemberRequest(
            fleet_id=request.fleet_id,
            director_id=request.agent_id,
            name=str(asked["name"]),
            description=str(asked["description"]),
            prompt=str(asked["prompt"]),
            coding_agent=None if agent is None else CodingAgent(agent),
            model=asked.get("model"),
            agent_command=asked.get("agent_command"),
            monitor=bool(asked.get("monitor")),
            host=request.host,
        )


@dataclass(frozen=True)
class SpawnContext:
    """What the new pane inherits from the caller."""

    caller_env: Mapping[str, str]
    cwd: str
    database_url: str  # with an absolute path
    default_agent_command: str | None
    home: Path
    start_timeout: float = 90.0
    database_dir: str | None = None  # a sandboxed agent must be able to write here
    git_dirs: tuple[str, ...] = ()  # the git directories of `cwd`'s repository, if any


@dataclass(frozen=True)
class MemberCreated:
    agent: Agent
    placement: Placement


@dataclass(frozen=True)
class _Checked:
    spec: LaunchSpec
    binary: str
    anchor: PaneLocation  # the pane the member's opens beside: the Director's, or a relay's
    agent_commands: tuple[str, ...]
    secret: str  # the new member's; only its digest is stored


class MemberSpawner:
    def __init__(
        self,
        uow: UnitOfWorkFactory,
        clock: Clock,
        drivers: PaneDrivers,
        programs: Programs,
        context: SpawnContext,
        ensure_opencode_preset: Callable[[Path], Path],
        pads: LaunchPads,
        profiles: AgentProfiles | None = None,
        relay: RelayClient | None = None,
        titles: PaneTitles | None = None,
        starts: AgentStarts | None = None,
    ) -> None:
        self._uow = uow
        self._clock = clock
        self._drivers = drivers
        self._programs = programs
        self._context = context
        self._ensure_opencode_preset = ensure_opencode_preset
        self._pads = pads
        self._profiles = profiles or AgentProfiles()
        self._watcher = StartWatcher(clock)
        self._relay = relay  # None: a member is only ever spawned on this host
        self._titles = titles  # None: the pane keeps the title it was spawned with
        self._starts = starts  # None: how an agent the caller runs under started is unknown

    def create(self, request: MemberRequest) -> MemberCreated:
        """Spawn on this host, or ask the relay of the host the pane must open on (after
        every check that needs no pane, so a bad request fails here in one line)."""
        with self._uow() as uow:
            director = uow.placements.get(request.director_id)
        host = request.host or (director.host if director else None)
        if self._drivers.reaches(host) or self._relay is None:
            return self._create_here(request)
        assert host is not None
        with self._uow() as uow:
            self._validated(uow, request)
        wait = self._context.start_timeout + RELAY_MARGIN_SECONDS
        answer = self._relay.run(
            host, request.fleet_id, request.director_id, PaneVerb.SPAWN, request.relayed(), wait
        )
        with self._uow() as uow:
            agent = uow.agents.get(int(answer))
            placement = uow.placements.get(int(answer))
        if agent is None or placement is None:
            raise Unavailable(f"member {answer} spawned on host {host!r} is gone already")
        return MemberCreated(agent, placement)

    def run_relayed(self, request: RelayRequest) -> str:
        """A SPAWN another host asked of this host's relay: the new member's id."""
        return str(self._create_here(MemberRequest.of_relayed(request)).agent.agent_id)

    def _create_here(self, request: MemberRequest) -> MemberCreated:
        checked = self._check(request)
        if checked.spec.coding_agent is CodingAgent.OPENCODE:
            self._ensure_opencode_preset(self._context.home)
        agent, placement = self._register(request, checked)
        driver = self._drivers(placement.backend, placement.socket, placement.host)
        identity = SpawnIdentity(request.fleet_id, agent.agent_id, request.director_id)
        prompt = render_prompt(request.prompt, identity.placeholders(checked.spec.coding_agent))
        beside = checked.anchor.pane_id
        pad: LaunchPad | None = None
        try:
            pad = self._pads.prepare(request.fleet_id, agent.agent_id)
            launcher = self._launcher(pad, checked, prompt, identity, placement)
            pane_id = driver.spawn(beside, launcher, {}, self._context.cwd)
        except Exception as exc:  # whatever failed, no member is left without a pane
            if pad is not None:
                pad.discard()
            warning = self._rollback(agent.agent_id)
            raise _with_warning(
                f"split_window failed: {_reason(exc)}. Rolled back registration"
                f" of {agent.agent_id}.",
                warning,
                agent,
                request,
            ) from exc
        recorded = self._record_pane(driver, placement, pane_id, request, agent, pad)
        _label(driver, pane_id, agent)
        ready = self._await_ready(driver, pad, recorded, checked, prompt)
        if self._titles is not None:  # no longer starting: the title says what it does now
            self._titles.refresh([agent.agent_id])
        return MemberCreated(agent, ready)

    def _launcher(
        self,
        pad: LaunchPad,
        checked: _Checked,
        prompt: str,
        identity: SpawnIdentity,
        placement: Placement,
    ) -> list[str]:
        profile = self._profiles[checked.spec.coding_agent]
        settings = profile.hook_settings(pad.event_recorder(), pad.mail_waiter())
        server = profile.server
        endpoint = pad.endpoint() if server else None
        argv = checked.spec.argv(
            binary=checked.binary,
            prompt=prompt,
            identity=identity,
            profile=profile,
            database_dir=self._context.database_dir,
            runtime_dir=self._pads.runtime,
            git_dirs=self._context.git_dirs,
            hook_settings=pad.write("agent-settings.json", settings) if settings else None,
            http_port=endpoint.port if endpoint else None,
        )
        env = member_environment(
            self._inherited(),
            fleet_id=identity.fleet_id,
            agent_id=identity.agent_id,
            database_url=self._context.database_url,
            multiplexer=placement.backend,
            member_secret=checked.secret,
            herdr_agent=profile.herdr_agent,
        )
        if server and endpoint:
            env[server.password_variable] = endpoint.password
        # to find its conversation (Codex) or session (OpenCode) later, for its status,
        # receipts and channel, whatever channels and readiness rules are on
        codex = Channel.CODEX_QUEUE in possible_channels(profile.coding_agent)
        if codex or profile.http is not None:
            homes = AgentHomes.from_environ(self._context.caller_env, self._context.home)
            facts = SpawnFacts(
                prompt,
                self._context.cwd,
                str(homes.codex) if codex else "",
                checked.binary,
                self._clock.now(),
            )
            pad.write(SPAWN_FILE, facts.text())
        return pad.launcher(argv, env, self._context.cwd)

    def _inherited(self) -> dict[str, str]:
        """The caller's environment less what the agents it runs under (as their tool) set
        for their tools: each such variable as the agent was started with, or none."""
        env = dict(self._context.caller_env)
        for session in agent_sessions(env):
            started = self._starts.environment(session.markers) if self._starts else None
            env = session.handed_on(env, started)
        return env

    def _await_ready(
        self,
        driver: PaneDriver,
        pad: LaunchPad,
        placement: Placement,
        checked: _Checked,
        prompt: str,
    ) -> Placement:
        """Watch the agent start; record when it became ready, or undo the member."""
        profile = self._profiles[checked.spec.coding_agent]
        pane_id = placement.pane_id or ""
        accepted = checked.agent_commands or profile.foreground_names
        watch = StartWatch(profile, pane_id, accepted, prompt, self._context.start_timeout)
        try:
            verdict = self._watcher.watch(driver, pad, watch)
        except BaseException:  # interrupted: leave no half-started member behind
            self._undo(driver, pad, placement.agent_id, pane_id)
            raise
        if verdict.rule is not None:
            pad.mark_ready()
            ready = placement.became_ready(verdict.rule.value, self._clock.now())
            with self._uow(write=True) as uow:
                if uow.placements.get(placement.agent_id) is not None:
                    uow.placements.save(ready)
                    uow.commit()
            return ready
        warning = self._undo(driver, pad, placement.agent_id, pane_id)
        shown = "\n".join(f"  | {row}" for row in verdict.last_lines.splitlines())
        message = (
            f"{checked.spec.coding_agent.value} did not start: {verdict.problem}."
            f" Rolled back registration of {placement.agent_id}."
            + (f"\nLast lines of pane {pane_id}:\n{shown}" if shown else "")
        )
        if warning is None:
            raise Unavailable(message)
        raise Unavailable(f"{message}\nWARNING: rollback deregister failed: {warning}")

    def _undo(self, driver: PaneDriver, pad: LaunchPad, agent_id: int, pane_id: str) -> str | None:
        with contextlib.suppress(CafleetError):
            driver.kill(pane_id)
        pad.discard()
        return self._rollback(agent_id)

    def _validated(self, uow: UnitOfWork, request: MemberRequest) -> tuple[LaunchSpec, Placement]:
        """Every check of the request that needs no pane: its launch spec and the
        Director's placement."""
        refuse_deleted_fleet(uow, request.fleet_id)  # before the Director's (gone) rows
        proven(uow, request.director_id, request.caller)
        coding_agent = request.coding_agent or self._default_agent(uow, request)
        spec = LaunchSpec.validated(
            coding_agent,
            name=request.name,
            model=request.model,
            agent_command=request.agent_command,
            default_agent_command=self._context.default_agent_command,
        )
        check_prompt(request.prompt)
        return spec, _director_placement(uow, request.fleet_id, request.director_id)

    def _check(self, request: MemberRequest) -> _Checked:
        with self._uow() as uow:
            spec, director = self._validated(uow, request)
            anchor = _anchor(uow, director, request.host, self._clock.now())
        driver = self._drivers(anchor.backend, anchor.socket, anchor.host)
        if ours(driver.pane(anchor.pane_id), anchor.identity) is None:
            whose = "the Director's pane" if anchor.host == director.host else "the relay's pane"
            raise Invalid(f"{whose} {anchor.pane_id} is gone; cannot place a member beside it.")
        coding_agent = spec.coding_agent
        binary = self._programs.which(spec.binary_name)
        if binary is None:
            raise Invalid(
                f"binary {spec.binary_name} not found on PATH"
                + ("" if request.coding_agent else _implicit_agent_hint(request, coding_agent))
            )
        commands: tuple[str, ...] = ()
        if coding_agent is CodingAgent.CUSTOM:
            words = spec.custom.leading_words if spec.custom else ()
            commands = accepted_commands(binary, self._programs.first_line(binary), words)
        return _Checked(spec, binary, anchor, commands, new_secret())

    def _default_agent(self, uow: UnitOfWork, request: MemberRequest) -> CodingAgent:
        if not request.monitor:
            return CodingAgent.CLAUDE
        director = uow.agents.get(request.director_id)
        if director is None or director.fleet_id != request.fleet_id:
            raise Invalid(
                f"cannot resolve the monitor's coding agent: Director"
                f" {request.director_id} not found in fleet {request.fleet_id}."
                " Re-run with an explicit --coding-agent."
            )
        placement = uow.placements.get(request.director_id)
        if placement is None:
            raise Invalid(
                f"cannot resolve the monitor's coding agent: Director"
                f" {request.director_id} has no placement row recording its backend."
                " Re-run with an explicit --coding-agent."
            )
        return placement.coding_agent

    def _register(self, request: MemberRequest, checked: _Checked) -> tuple[Agent, Placement]:
        with self._uow(write=True) as uow:
            fleet = _live_fleet_for_spawn(uow, request.fleet_id)
            _director_placement(uow, request.fleet_id, request.director_id, fleet)
            if request.monitor:
                _require_no_monitor(uow, fleet)
            now = self._clock.now()
            agent = Agent(
                0,
                fleet.fleet_id,
                request.name,
                request.description,
                now,
                card_kind=CardKind.MONITORING_MEMBER if request.monitor else None,
            )
            agent = replace(agent, agent_id=uow.agents.add(agent))
            anchor = checked.anchor
            placement = Placement(
                agent.agent_id,
                request.director_id,
                anchor.backend,
                anchor.session,
                anchor.window_id,
                None,
                checked.spec.coding_agent,
                now,
                anchor.socket,
                checked.agent_commands,
                identity_digest=secret_digest(checked.secret),
                host=anchor.host,
            )
            uow.placements.add(placement)
            if not request.monitor:
                uow.monitor.enroll(MonitorSchedule(agent.agent_id, MEMBER_INTERVAL_SECONDS))
            uow.commit()
        return agent, placement

    def _record_pane(
        self,
        driver: PaneDriver,
        placement: Placement,
        pane_id: str,
        request: MemberRequest,
        agent: Agent,
        pad: LaunchPad,
    ) -> Placement:
        failure: str | None = None
        try:
            # what tells this pane from one a restarted server later gives the same id
            recorded = placement.with_pane(pane_id, pad.location, driver.claim(pane_id))
            with self._uow(write=True) as uow:
                if uow.placements.get(agent.agent_id) is None:
                    failure = "placement row vanished before pane-id patch"
                else:
                    uow.placements.save(recorded)
                    uow.commit()
        except CafleetError as exc:
            failure = f"placement update failed: {exc.message}"
        if failure is None:
            return recorded
        with contextlib.suppress(CafleetError):  # the registration rollback matters more
            driver.kill(pane_id)
        pad.discard()
        raise _with_warning(failure, self._rollback(agent.agent_id), agent, request)

    def _rollback(self, agent_id: int) -> str | None:
        """Deregister a half-created member; the failure text when that fails too."""
        try:
            with self._uow(write=True) as uow:
                agent = uow.agents.get(agent_id)
                if agent is not None:
                    uow.agents.save(agent.retired(self._clock.now()))
                uow.placements.remove(agent_id)
                uow.monitor.unenroll(agent_id)
                uow.commit()
        except CafleetError as exc:
            return exc.message
        return None


def _label(driver: PaneDriver, pane_id: str, agent: Agent) -> None:
    """Title the member's pane while its agent starts (PaneTitles keeps it current)."""
    if isinstance(driver, PaneLabels):
        with contextlib.suppress(CafleetError):  # cosmetic: a refusal never fails the spawn
            driver.label(pane_id, pane_title(agent.label, AgentStatus.STARTING, 0))


def _live_fleet_for_spawn(uow: UnitOfWork, fleet_id: int) -> Fleet:
    fleet = uow.fleets.get(fleet_id)
    if fleet is None:
        raise UsageProblem(f"Fleet '{fleet_id}' not found.")
    return fleet.require_live()


def _implicit_agent_hint(request: MemberRequest, picked: CodingAgent) -> str:
    """Where a coding agent nobody named came from, and how to name another."""
    origin = "the Director's coding agent" if request.monitor else "the default coding agent"
    return (
        f" ({picked.value} is {origin}); pass --coding-agent, or {DEMO_AGENT_FLAGS}"
        " for the built-in demo agent"
    )


def _director_placement(
    uow: UnitOfWork, fleet_id: int, director_id: int, fleet: Fleet | None = None
) -> Placement:
    """The root Director's placement, enforcing the no-nested-teams invariants."""
    fleet = fleet or _live_fleet_for_spawn(uow, fleet_id)
    fleet.require_member_director(uow.agents.get(director_id), director_id)
    placement = uow.placements.get(director_id)
    if placement is None or placement.pane_id is None:
        raise Invalid(
            f"the Director's pane {placement.pane_id if placement else '-'} is gone; cannot"
            " place a member beside it."
        )
    return placement


def _anchor(uow: UnitOfWork, director: Placement, host: str | None, now: datetime) -> PaneLocation:
    """The pane a member opens beside: the Director's, unless the member goes to another
    host, where it opens beside the pane that host's relay runs in."""
    if host is None or host == director.host:
        return director.location()
    beat = beat_of(uow, host)
    if beat is None or not beat.is_alive(now):
        raise no_relay(host, beat)
    if beat.pane is None:
        raise Invalid(
            f"the relay of host {host!r} has no pane to open members beside: it runs in no"
            " tmux or herdr pane and could not make a tmux session of its own (its first line"
            " of output says why)"
        )
    return beat.pane


def _require_no_monitor(uow: UnitOfWork, fleet: Fleet) -> None:
    for agent in uow.agents.in_fleet(fleet.fleet_id):
        if agent.card_kind is CardKind.MONITORING_MEMBER:
            raise Invalid(
                f"fleet {fleet.fleet_id} already has an active monitoring member"
                f" (agent {agent.agent_id}); only one is allowed."
            )


def _reason(exc: Exception) -> str:
    if isinstance(exc, CafleetError):
        return exc.message
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return f"{type(exc).__name__}: {exc}"


def _with_warning(
    message: str, rollback_error: str | None, agent: Agent, request: MemberRequest
) -> Unavailable:
    if rollback_error is None:
        return Unavailable(message)
    return Unavailable(
        f"{message}\nWARNING: rollback deregister failed — agent {agent.agent_id} is orphaned"
        f" in the registry. Run `cafleet member delete --fleet-id {request.fleet_id}"
        f" --member-id {agent.agent_id}` manually to clean up. Cause: {rollback_error}"
    )
