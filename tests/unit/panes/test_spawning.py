"""MemberSpawner (`member create`): validate, register, spawn beside the Director, record
the pane; roll back on failure (§5.5, §8.1–8.5)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path

import pytest

from cafleet.application.fleets import FleetCreated
from cafleet.application.spawning import MemberCreated, MemberRequest, MemberSpawner, SpawnContext
from cafleet.domain.agent import AgentStatus, CardKind
from cafleet.domain.errors import CafleetError, Invalid, Unavailable, UsageProblem
from cafleet.domain.placement import CodingAgent, Multiplexer

from .builders import DIRECTOR_PANE, SOCKET, WINDOW, FakePrograms, PaneRig, PresetRecorder

PROMPT = "You are {agent_id} in fleet {fleet_id}; report to {director_agent_id} ({coding_agent})."
CWD = "/fake/project"
DATABASE_URL = "sqlite:////fake/data/cafleet.db"
HOME = Path("/fake/home")
CALLER_ENV = {
    "PATH": "/fake/bin:/usr/bin",
    "HOME": "/fake/home",
    "TERM": "xterm",
    "CAFLEET_SUBMIT_DELAY_CLAUDE": "0.5",
    "CAFLEET_DEBUG": "1",
    "CAFLEET_FLEET_ID": "999",
    "CAFLEET_AGENT_ID": "999",
    "CAFLEET_DATABASE_URL": "sqlite:///relative.db",
    "CAFLEET_MULTIPLEXER": "herdr",
}
BINARIES = {
    "claude": "/fake/bin/claude",
    "codex": "/fake/bin/codex",
    "opencode": "/fake/bin/opencode",
    "demo-agent": "/fake/bin/demo-agent",
}


class Spawning:
    """A fleet, its spawner and the fakes the spawner talks to."""

    def __init__(
        self,
        rig: PaneRig,
        director_agent: CodingAgent = CodingAgent.CLAUDE,
        default_agent_command: str | None = None,
    ) -> None:
        self.rig = rig
        self.made: FleetCreated = rig.fleet(director_agent)
        self.programs = FakePrograms(BINARIES, {"/fake/bin/demo-agent": "#!/usr/bin/env python3"})
        self.preset = PresetRecorder()
        self.context = SpawnContext(
            caller_env=CALLER_ENV,
            cwd=CWD,
            database_url=DATABASE_URL,
            default_agent_command=default_agent_command,
            home=HOME,
        )

    @property
    def fleet_id(self) -> int:
        return self.made.fleet.fleet_id

    @property
    def director_id(self) -> int:
        return self.made.director.agent_id

    def spawner(self) -> MemberSpawner:
        return self.rig.spawner(self.programs, self.context, self.preset)

    def request(self, **changes: object) -> MemberRequest:
        fields: dict[str, object] = {
            "fleet_id": self.fleet_id,
            "director_id": self.director_id,
            "name": "coder",
            "description": "Writes code",
            "prompt": PROMPT,
        }
        fields.update(changes)
        return MemberRequest(**fields)  # type: ignore[arg-type]

    def create(self, **changes: object) -> MemberCreated:
        return self.spawner().create(self.request(**changes))


@pytest.fixture
def spawning(rig: PaneRig) -> Spawning:
    return Spawning(rig)


def rendered(agent_id: int, fleet_id: int, director_id: int, coding_agent: str) -> str:
    return f"You are {agent_id} in fleet {fleet_id}; report to {director_id} ({coding_agent})."


# --------------------------------------------------------------------------- success


def test_a_claude_member_is_registered_spawned_and_recorded(
    rig: PaneRig, spawning: Spawning
) -> None:
    created = spawning.create()

    new_id = created.agent.agent_id
    [call] = rig.driver.spawned
    assert call.beside == DIRECTOR_PANE
    assert call.argv == (
        "/fake/bin/claude", "--permission-mode", "dontAsk", "--name", "coder",
        rendered(new_id, spawning.fleet_id, spawning.director_id, "claude"),
    )  # fmt: skip
    assert call.cwd == CWD
    placement = rig.placement(new_id)
    assert placement == created.placement
    assert placement is not None
    assert (placement.pane_id, placement.director_agent_id) == (call.pane_id, spawning.director_id)
    assert (placement.backend, placement.session, placement.window_id, placement.socket) == (
        Multiplexer.TMUX, "main", WINDOW, SOCKET,
    )  # fmt: skip
    assert (placement.coding_agent, placement.agent_commands) == (CodingAgent.CLAUDE, ())
    agent = rig.agent(new_id)
    assert agent == created.agent
    assert agent is not None
    assert (agent.fleet_id, agent.name, agent.description) == (
        spawning.fleet_id, "coder", "Writes code",
    )  # fmt: skip
    assert (agent.status, agent.card_kind) == (AgentStatus.ACTIVE, None)
    schedule = rig.schedule(new_id)
    assert schedule is not None
    assert (schedule.interval_seconds, schedule.enabled) == (720, True)
    assert spawning.preset.homes == []


def test_the_pane_gets_the_identity_environment(rig: PaneRig, spawning: Spawning) -> None:
    created = spawning.create()

    [call] = rig.driver.spawned
    assert call.env == {
        "CAFLEET_FLEET_ID": str(spawning.fleet_id),
        "CAFLEET_AGENT_ID": str(created.agent.agent_id),
        "CAFLEET_DATABASE_URL": DATABASE_URL,
        "CAFLEET_MULTIPLEXER": "tmux",
        "CAFLEET_SUBMIT_DELAY_CLAUDE": "0.5",
        "CAFLEET_DEBUG": "1",
        "PATH": "/fake/bin:/usr/bin",
    }


def test_the_binary_is_launched_by_its_absolute_path(rig: PaneRig, spawning: Spawning) -> None:
    spawning.create()

    assert spawning.programs.looked_up == ["claude"]
    assert rig.driver.spawned[0].argv[0] == "/fake/bin/claude"


def test_a_model_is_passed_before_the_prompt(rig: PaneRig, spawning: Spawning) -> None:
    spawning.create(model="opus")

    argv = rig.driver.spawned[0].argv
    assert argv[5:7] == ("--model", "opus")
    assert len(argv) == 8


def test_a_codex_member_gets_the_codex_command_line(rig: PaneRig, spawning: Spawning) -> None:
    created = spawning.create(coding_agent=CodingAgent.CODEX, prompt="Go.")

    assert rig.driver.spawned[0].argv == (
        "/fake/bin/codex", "--ask-for-approval", "never", "--sandbox", "workspace-write", "Go.",
    )  # fmt: skip
    assert created.placement.coding_agent is CodingAgent.CODEX


def test_an_opencode_member_gets_its_preset_and_command_line(
    rig: PaneRig, spawning: Spawning
) -> None:
    spawning.create(coding_agent=CodingAgent.OPENCODE, model="openai/gpt-5", prompt="Go.")

    assert spawning.preset.homes == [HOME]
    assert rig.driver.spawned[0].argv == (
        "/fake/bin/opencode", "--agent", "cafleet", "--model", "openai/gpt-5", "--prompt", "Go.",
    )  # fmt: skip


def test_a_multi_line_prompt_stays_one_argument(rig: PaneRig, spawning: Spawning) -> None:
    spawning.create(prompt="line one\nline two {{literal}}")

    assert rig.driver.spawned[0].argv[-1] == "line one\nline two {literal}"


def test_a_monitor_inherits_the_directors_coding_agent_and_is_not_enrolled(rig: PaneRig) -> None:
    spawning = Spawning(rig, director_agent=CodingAgent.CODEX)

    created = spawning.create(name="watcher", monitor=True)

    assert created.placement.coding_agent is CodingAgent.CODEX
    assert rig.driver.spawned[0].argv[0] == "/fake/bin/codex"
    assert created.agent.card_kind is CardKind.MONITORING_MEMBER
    assert rig.schedule(created.agent.agent_id) is None


def test_an_explicit_coding_agent_wins_for_a_monitor(rig: PaneRig) -> None:
    spawning = Spawning(rig, director_agent=CodingAgent.CODEX)

    created = spawning.create(name="watcher", monitor=True, coding_agent=CodingAgent.CLAUDE)

    assert created.placement.coding_agent is CodingAgent.CLAUDE


def test_a_custom_member_stores_its_accepted_commands_from_the_shebang(
    rig: PaneRig, spawning: Spawning
) -> None:
    created = spawning.create(
        coding_agent=CodingAgent.CUSTOM, agent_command="demo-agent --rounds 3", prompt="Go."
    )

    assert rig.driver.spawned[0].argv == ("/fake/bin/demo-agent", "--rounds", "3", "Go.")
    assert created.placement.agent_commands == ("demo-agent", "python3")
    placement = rig.placement(created.agent.agent_id)
    assert placement is not None
    assert placement.agent_commands == ("demo-agent", "python3")


def test_a_custom_template_fills_its_placeholders(rig: PaneRig, spawning: Spawning) -> None:
    created = spawning.create(
        coding_agent=CodingAgent.CUSTOM,
        agent_command="demo-agent --id {agent_id} --name={name} {prompt} --via {coding_agent}",
        prompt="Go.",
    )

    assert rig.driver.spawned[0].argv == (
        "/fake/bin/demo-agent", "--id", str(created.agent.agent_id), "--name=coder", "Go.",
        "--via", "custom",
    )  # fmt: skip


def test_the_custom_command_can_come_from_the_setting(rig: PaneRig) -> None:
    spawning = Spawning(rig, default_agent_command="demo-agent --rounds 1")

    spawning.create(coding_agent=CodingAgent.CUSTOM, prompt="Go.")

    assert rig.driver.spawned[0].argv == ("/fake/bin/demo-agent", "--rounds", "1", "Go.")


def test_a_custom_binary_without_shebang_accepts_only_its_own_name(
    rig: PaneRig, spawning: Spawning
) -> None:
    spawning.programs.first_lines.clear()

    created = spawning.create(coding_agent=CodingAgent.CUSTOM, agent_command="demo-agent")

    assert created.placement.agent_commands == ("demo-agent",)


# --------------------------------------------------------------------------- validation


Mutation = Callable[[Spawning], None]


def _no_change(spawning: Spawning) -> None:
    pass


def _director_pane_gone(spawning: Spawning) -> None:
    del spawning.rig.driver.panes[DIRECTOR_PANE]
    # a pane with the same id on another server does not count
    spawning.rig.drivers(Multiplexer.TMUX, None).add_pane("claude", pane_id=DIRECTOR_PANE)


def _no_binaries(spawning: Spawning) -> None:
    spawning.programs.paths.clear()


def _fleet_deleted(spawning: Spawning) -> None:
    spawning.rig.fleet_service().delete(spawning.fleet_id, keep_panes=True)


VALIDATION_ERRORS = [
    pytest.param(
        _no_change, {"prompt": "Hi {nope}"}, UsageProblem,
        "Unknown placeholder 'nope' in custom prompt. Supported placeholders: {fleet_id},"
        " {agent_id}, {director_agent_id}, {coding_agent}. Double literal braces ({{, }}) to"
        " keep them as text.",
        id="unknown-prompt-placeholder",
    ),
    pytest.param(
        _no_change, {"prompt": "Hi {"}, UsageProblem,
        "Malformed custom prompt: Single '{' encountered in format string. Double literal"
        " braces ({{, }}) to keep them as text.",
        id="malformed-prompt",
    ),
    pytest.param(
        _no_change,
        {"coding_agent": CodingAgent.CUSTOM, "agent_command": "demo-agent {nope}"},
        UsageProblem,
        "Unknown placeholder 'nope' in --agent-command. Supported placeholders: {prompt},"
        " {name}, {model}, {fleet_id}, {agent_id}, {director_agent_id}, {coding_agent}.",
        id="unknown-command-placeholder",
    ),
    pytest.param(
        _no_change, {"agent_command": "demo-agent"}, UsageProblem,
        "--agent-command is only valid with --coding-agent custom.",
        id="agent-command-without-custom",
    ),
    pytest.param(
        _no_change, {"coding_agent": CodingAgent.CUSTOM}, UsageProblem,
        "--coding-agent custom needs --agent-command or CAFLEET_CUSTOM_AGENT_COMMAND.",
        id="custom-without-template",
    ),
    pytest.param(
        _no_change, {"coding_agent": CodingAgent.OPENCODE, "model": "gpt5"}, UsageProblem,
        "--model for the opencode backend must be '<provider-id>/<model-id>' (got 'gpt5').",
        id="opencode-model",
    ),
    pytest.param(
        _no_binaries, {}, Invalid, "binary claude not found on PATH", id="missing-binary",
    ),
    pytest.param(
        _no_binaries,
        {"coding_agent": CodingAgent.CUSTOM, "agent_command": "demo-agent --x"},
        Invalid,
        "binary demo-agent not found on PATH",
        id="missing-custom-binary",
    ),
    pytest.param(
        _director_pane_gone, {}, Invalid,
        "the Director's pane %0 is gone; cannot place a member beside it.",
        id="director-pane-gone",
    ),
    pytest.param(
        _no_change, {"fleet_id": 9}, UsageProblem, "Fleet '9' not found.", id="missing-fleet",
    ),
    pytest.param(
        _fleet_deleted, {}, Invalid, "fleet 1 is deleted", id="deleted-fleet",
    ),
    pytest.param(
        _no_change, {"monitor": True, "director_id": 99}, Invalid,
        "cannot resolve the monitor's coding agent: Director 99 not found in fleet 1. Re-run"
        " with an explicit --coding-agent.",
        id="monitor-without-director",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("mutate", "changes", "kind", "message"), VALIDATION_ERRORS)
def test_validation_errors_leave_the_store_and_panes_untouched(
    rig: PaneRig,
    spawning: Spawning,
    mutate: Mutation,
    changes: dict[str, object],
    kind: type[CafleetError],
    message: str,
) -> None:
    mutate(spawning)
    tables, commits = copy.deepcopy(rig.store.tables), rig.store.commits

    with pytest.raises(kind) as raised:
        spawning.create(**changes)

    assert raised.value.message == message
    assert rig.store.tables == tables
    assert rig.store.commits == commits
    assert rig.driver.spawned == []
    assert spawning.preset.homes == []


def test_a_member_cannot_be_the_director_of_a_nested_team(rig: PaneRig, spawning: Spawning) -> None:
    lead = spawning.create(name="lead").agent.agent_id
    tables = copy.deepcopy(rig.store.tables)

    with pytest.raises(UsageProblem) as raised:
        spawning.create(director_id=lead)

    assert raised.value.message == (
        f"nested teams are not supported; placement director_agent_id {lead} must equal the"
        f" fleet root Director {spawning.director_id}."
    )
    assert rig.store.tables == tables
    assert len(rig.driver.spawned) == 1


def test_an_inactive_director_is_refused(rig: PaneRig, spawning: Spawning) -> None:
    retired = rig.member(spawning.made, "retired", command=None).agent_id
    rig.removal().delete(spawning.fleet_id, retired)
    tables = copy.deepcopy(rig.store.tables)

    with pytest.raises(UsageProblem) as raised:
        spawning.create(director_id=retired, coding_agent=CodingAgent.CLAUDE)

    assert raised.value.message == (
        f"Director agent '{retired}' not found or not active in fleet '{spawning.fleet_id}'."
    )
    assert rig.store.tables == tables
    assert rig.driver.spawned == []


def test_a_director_of_another_fleet_is_refused(rig: PaneRig, spawning: Spawning) -> None:
    other = rig.fleet_service().create("beta", CodingAgent.CLAUDE)

    with pytest.raises(UsageProblem) as raised:
        spawning.create(director_id=other.director.agent_id)

    assert raised.value.message == (
        f"Director agent '{other.director.agent_id}' not found or not active in fleet"
        f" '{spawning.fleet_id}'."
    )
    assert rig.driver.spawned == []


def test_the_administrator_cannot_be_a_director(rig: PaneRig, spawning: Spawning) -> None:
    tables = copy.deepcopy(rig.store.tables)

    with pytest.raises(CafleetError) as raised:
        spawning.create(director_id=spawning.made.administrator.agent_id)

    assert raised.value.message == "Administrator cannot be a director"
    assert rig.store.tables == tables
    assert rig.driver.spawned == []


def test_a_second_monitoring_member_is_refused(rig: PaneRig, spawning: Spawning) -> None:
    first = spawning.create(name="watcher", monitor=True).agent.agent_id
    tables, commits = copy.deepcopy(rig.store.tables), rig.store.commits

    with pytest.raises(Invalid) as raised:
        spawning.create(name="watcher-2", monitor=True)

    assert raised.value.message == (
        f"fleet {spawning.fleet_id} already has an active monitoring member (agent {first});"
        " only one is allowed."
    )
    assert (rig.store.tables, rig.store.commits) == (tables, commits)
    assert len(rig.driver.spawned) == 1


def test_a_new_monitor_is_allowed_once_the_old_one_is_deleted(
    rig: PaneRig, spawning: Spawning
) -> None:
    first = spawning.create(name="watcher", monitor=True).agent.agent_id
    rig.removal().delete(spawning.fleet_id, first, force=True)

    second = spawning.create(name="watcher-2", monitor=True)

    assert second.agent.card_kind is CardKind.MONITORING_MEMBER


# --------------------------------------------------------------------------- rollback


def test_a_failed_spawn_rolls_the_registration_back(rig: PaneRig, spawning: Spawning) -> None:
    rig.driver.failures["spawn"] = Unavailable("tmux split-window failed: no space for new pane")

    with pytest.raises(Unavailable) as raised:
        spawning.create()

    [burned] = [a for a in rig.store.tables.agents.values() if a.name == "coder"]
    assert raised.value.message == (
        "split_window failed: tmux split-window failed: no space for new pane."
        f" Rolled back registration of {burned.agent_id}."
    )
    assert burned.status is AgentStatus.DEREGISTERED
    assert rig.placement(burned.agent_id) is None
    assert rig.schedule(burned.agent_id) is None
    assert set(rig.driver.panes) == {DIRECTOR_PANE}


def test_a_placement_that_vanishes_before_the_pane_is_recorded_kills_the_new_pane(
    rig: PaneRig, spawning: Spawning
) -> None:
    def remove_placement(pane_id: str) -> None:
        with rig.store(write=True) as uow:
            for agent in uow.agents.in_fleet(spawning.fleet_id):
                if agent.name == "coder":
                    uow.placements.remove(agent.agent_id)
            uow.commit()

    rig.driver.after_spawn = remove_placement

    with pytest.raises(Unavailable) as raised:
        spawning.create()

    assert raised.value.message == "placement row vanished before pane-id patch"
    [burned] = [a for a in rig.store.tables.agents.values() if a.name == "coder"]
    assert burned.status is AgentStatus.DEREGISTERED
    assert rig.schedule(burned.agent_id) is None
    assert set(rig.driver.panes) == {DIRECTOR_PANE}


def test_registration_timestamps_come_from_the_clock(rig: PaneRig, spawning: Spawning) -> None:
    created = spawning.create()

    assert created.agent.registered_at == rig.clock.now()
    assert created.placement.created_at == rig.clock.now()
