"""MemberSpawner (`member create`): validate, register, spawn beside the Director through a
launch pad, record the pane, watch the agent start; roll back on failure."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest

from cafleet.adapters.fake.agent_starts import FakeAgentStarts
from cafleet.adapters.fake.launch_pads import FakeLaunchPad
from cafleet.application.fleets import FleetCreated
from cafleet.application.members.spawning import (
    MemberCreated,
    MemberRequest,
    MemberSpawner,
    SpawnContext,
)
from cafleet.application.ports.agents import LauncherStatus
from cafleet.domain.agents.claude import CLAUDE_FLOOR
from cafleet.domain.agents.custom import MAX_PROMPT_BYTES
from cafleet.domain.agents.profile import SPAWN_FILE, ReadyRule, SpawnFacts
from cafleet.domain.errors import CafleetError, Conflict, Invalid, Unavailable, UsageProblem
from cafleet.domain.fleet import AgentStatus, CardKind
from cafleet.domain.placement import CodingAgent, Multiplexer
from support.pane_rig import (
    DIRECTOR_PANE,
    SOCKET,
    START,
    WINDOW,
    FakePrograms,
    PaneRig,
    PresetRecorder,
)

PROMPT = "You are {agent_id} in fleet {fleet_id}; report to {director_agent_id} ({coding_agent})."
CWD = "/fake/project"
DATABASE_URL = "sqlite:////fake/data/cafleet.db"
HOME = Path("/fake/home")
CALLER_ENV = {
    "PATH": "/fake/bin:/usr/bin",
    "HOME": "/fake/home",
    "TERM": "xterm",
    "LANG": "C.UTF-8",
    "ANTHROPIC_API_KEY": "sk-fake",
    "XDG_CONFIG_HOME": "/fake/home/.config",
    "CAFLEET_SUBMIT_DELAY_CLAUDE": "0.5",
    "CAFLEET_DEBUG": "1",
    "CAFLEET_FLEET_ID": "999",
    "CAFLEET_AGENT_ID": "999",
    "CAFLEET_DATABASE_URL": "sqlite:///relative.db",
    "CAFLEET_MULTIPLEXER": "herdr",
    # never handed on: the admin token, the caller's own pane, an agent's session markers
    "CAFLEET_WEBUI_TOKEN": "0123456789abcdef",
    "TMUX": "/tmp/tmux-1000/default,1,0",
    "TMUX_PANE": "%0",
    "HERDR_PANE_ID": "w1:p1",
    "HERDR_SOCKET_PATH": "/fake/herdr.sock",
    "CLAUDECODE": "1",
    "CLAUDE_CODE_ENTRYPOINT": "cli",
    "CLAUDE_CODE_SESSION_ID": "3125912a-26dc-48da-8629-7b86a15412ee",
}
MEMBER_ENV_FROM_CALLER = {
    "PATH": "/fake/bin:/usr/bin",
    "HOME": "/fake/home",
    "TERM": "xterm",
    "LANG": "C.UTF-8",
    "ANTHROPIC_API_KEY": "sk-fake",
    "XDG_CONFIG_HOME": "/fake/home/.config",
    "CAFLEET_SUBMIT_DELAY_CLAUDE": "0.5",
    "CAFLEET_DEBUG": "1",
}
BINARIES = {
    "claude": "/fake/bin/claude",
    "codex": "/fake/bin/codex",
    "opencode": "/fake/bin/opencode",
    "demo-agent": "/fake/bin/demo-agent",
}
ALLOW = ",".join(CLAUDE_FLOOR)
CODEX_HEAD = (
    "--no-daemon", "--ask-for-approval", "never", "--sandbox", "workspace-write",
    "-c", "allow_login_shell=false", "-c", "sandbox_workspace_write.network_access=true",
)  # fmt: skip


class Spawning:
    """A fleet, its spawner and the fakes the spawner talks to."""

    def __init__(
        self,
        rig: PaneRig,
        director_agent: CodingAgent = CodingAgent.CLAUDE,
        default_agent_command: str | None = None,
        start_timeout: float = 90.0,
        database_dir: str | None = None,
        git_dirs: tuple[str, ...] = (),
    ) -> None:
        self.rig = rig
        self.made: FleetCreated = rig.fleet(director_agent)
        self.programs = FakePrograms(BINARIES, {"/fake/bin/demo-agent": "#!/usr/bin/env python3"})
        self.preset = PresetRecorder()
        self.starts: FakeAgentStarts | None = None
        self.context = SpawnContext(
            caller_env=CALLER_ENV,
            cwd=CWD,
            database_url=DATABASE_URL,
            default_agent_command=default_agent_command,
            home=HOME,
            start_timeout=start_timeout,
            database_dir=database_dir,
            git_dirs=git_dirs,
        )

    @property
    def fleet_id(self) -> int:
        return self.made.fleet.fleet_id

    @property
    def director_id(self) -> int:
        return self.made.director.agent_id

    def spawner(self) -> MemberSpawner:
        return self.rig.spawner(self.programs, self.context, self.preset, self.starts)

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

    def on_spawn(self, action: Callable[[FakeLaunchPad, str], None]) -> None:
        """Run `action(pad, pane_id)` right after the pane is opened, as the agent starts."""
        self.rig.driver.after_spawn = lambda pane_id: action(self.rig.pads.pads[-1], pane_id)

    def coder(self) -> int:
        """The id the member named coder got (whether or not it survived)."""
        [agent] = [a for a in self.rig.store.tables.agents.values() if a.name == "coder"]
        return agent.agent_id


@pytest.fixture
def spawning(rig: PaneRig) -> Spawning:
    return Spawning(rig)


def rendered(agent_id: int, fleet_id: int, director_id: int, coding_agent: str) -> str:
    return f"You are {agent_id} in fleet {fleet_id}; report to {director_id} ({coding_agent})."


def drawn(text: str, width: int = 20) -> list[str]:
    """`text` as a TUI shows it: wrapped and framed."""
    rows = [f"│ {text[i : i + width]:<{width}} │" for i in range(0, len(text), width)]
    return ["╭" + "─" * (width + 2) + "╮", *rows, "╰" + "─" * (width + 2) + "╯", "> "]


def at(seconds: float) -> object:
    return START + timedelta(seconds=seconds)


# --------------------------------------------------------------------------- success


def test_a_claude_member_is_registered_spawned_and_recorded(
    rig: PaneRig, spawning: Spawning
) -> None:
    created = spawning.create()

    new_id = created.agent.agent_id
    [call] = rig.driver.spawned
    assert call.beside == DIRECTOR_PANE
    assert call.argv == (
        "/fake/bin/claude", "--permission-mode", "dontAsk", "--allowedTools", ALLOW,
        "--name", "coder", "--settings", f"/pads/{spawning.fleet_id}-{new_id}/agent-settings.json",
        "--", rendered(new_id, spawning.fleet_id, spawning.director_id, "claude"),
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
    assert placement.ready_at is not None
    assert not placement.is_starting
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
    pad = rig.pad(new_id)
    assert (pad.fleet_id, pad.ready, pad.discarded) == (spawning.fleet_id, True, False)


def test_the_pane_is_spawned_through_the_pad_with_no_environment_of_its_own(
    rig: PaneRig, spawning: Spawning
) -> None:
    created = spawning.create()

    [call] = rig.driver.spawned
    pad = rig.pad(created.agent.agent_id)
    assert call.env == {}
    assert rig.driver.panes[call.pane_id].env == {}
    assert tuple(pad.argv) == call.argv  # the fake pad's launcher is transparent
    assert pad.cwd == CWD


def test_the_member_gets_the_callers_whole_environment_less_what_must_not_leak(
    rig: PaneRig, spawning: Spawning
) -> None:
    created = spawning.create()

    env = dict(rig.pad(created.agent.agent_id).env)
    secret = env.pop("CAFLEET_MEMBER_SECRET")
    assert env == {
        **MEMBER_ENV_FROM_CALLER,
        "CAFLEET_FLEET_ID": str(spawning.fleet_id),
        "CAFLEET_AGENT_ID": str(created.agent.agent_id),
        "CAFLEET_DATABASE_URL": DATABASE_URL,
        "CAFLEET_MULTIPLEXER": "tmux",
    }
    assert len(secret) >= 40  # 256 random bits


# a Claude Code Director's tool (2.1.332): what the user exported, plus what Claude Code set
USER_EXPORTS = {"PATH": "/home/me/bin:/usr/bin", "HOME": "/home/me", "PAGER": "less"}
CLAUDE_TOOL = USER_EXPORTS | {
    "CLAUDECODE": "1",
    "CLAUDE_CODE_SESSION_ID": "3125912a-26dc-48da-8629-7b86a15412ee",
    "CLAUDE_CODE_CHILD_SESSION": "1",
    "CLAUDE_CODE_MESSAGING_SOCKET": "/tmp/cc-socks/11599.sock",
    "CLAUDE_CODE_MESSAGING_TOKEN": "c000750e7070f126ee3ef953da5a9909",
    "CLAUDE_PID": "11599",
    "GIT_EDITOR": "true",
}
# a Codex Director's tool (0.171.0, in its sandbox)
CODEX_TOOL = USER_EXPORTS | {
    "CODEX_THREAD_ID": "01a251ea",
    "CODEX_SESSION_ID": "01a251ea",
    "CODEX_TOOL_CALL_ID": "call_000003",
    "CODEX_CI": "1",
    "NO_COLOR": "1",
    "PAGER": "cat",
    "LC_ALL": "C.UTF-8",
    "PATH": "/opt/codex/vendor/codex-path:/home/me/bin:/usr/bin",
}


def spawned_env(spawning: Spawning, caller: dict[str, str]) -> dict[str, str]:
    spawning.context = replace(spawning.context, caller_env=caller)
    created = spawning.create()
    env = dict(spawning.rig.pad(created.agent.agent_id).env)
    return {k: v for k, v in env.items() if not k.startswith("CAFLEET_")}


def test_a_member_of_a_claude_code_director_gets_what_the_user_started_it_with(
    spawning: Spawning,
) -> None:
    spawning.starts = FakeAgentStarts({"CLAUDECODE": USER_EXPORTS})

    assert spawned_env(spawning, CLAUDE_TOOL) == USER_EXPORTS
    assert spawning.starts.asked == [("CLAUDECODE",)]


def test_a_tool_setting_comes_back_as_the_user_exported_it(spawning: Spawning) -> None:
    spawning.starts = FakeAgentStarts({"CODEX_THREAD_ID": USER_EXPORTS})

    assert spawned_env(spawning, CODEX_TOOL) == USER_EXPORTS  # PAGER=less, no NO_COLOR


def test_where_the_agents_start_is_unknown_its_variables_are_dropped(spawning: Spawning) -> None:
    """A sandbox with its own pid namespace hides the Codex Director's own process."""
    spawning.starts = FakeAgentStarts({"CODEX_THREAD_ID": None})

    bare = {"PATH": "/home/me/bin:/usr/bin", "HOME": "/home/me"}  # no PAGER, NO_COLOR, LC_ALL
    assert spawned_env(spawning, CODEX_TOOL) == bare


def test_a_director_in_a_plain_shell_hands_on_everything_it_exported(spawning: Spawning) -> None:
    spawning.starts = FakeAgentStarts({})
    exported = USER_EXPORTS | {"NO_COLOR": "1", "LC_ALL": "C", "AGENT": "mine"}

    assert spawned_env(spawning, exported) == exported
    assert spawning.starts.asked == []


@pytest.mark.parametrize(
    ("coding_agent", "hint"),
    [(CodingAgent.CLAUDE, "claude"), (CodingAgent.CODEX, "codex"),
     (CodingAgent.OPENCODE, "opencode"), (CodingAgent.CUSTOM, None)],
)  # fmt: skip
def test_a_member_on_herdr_is_named_to_herdr_by_its_agent(
    coding_agent: CodingAgent, hint: str | None
) -> None:
    rig = PaneRig(backend=Multiplexer.HERDR)
    custom = coding_agent is CodingAgent.CUSTOM
    created = Spawning(rig).create(
        coding_agent=coding_agent, agent_command="demo-agent {prompt}" if custom else None
    )

    env = rig.pad(created.agent.agent_id).env
    assert (env["CAFLEET_MULTIPLEXER"], env.get("HERDR_AGENT")) == ("herdr", hint)


def test_a_member_on_tmux_gets_no_herdr_hint(rig: PaneRig, spawning: Spawning) -> None:
    created = spawning.create(coding_agent=CodingAgent.CODEX)

    assert "HERDR_AGENT" not in rig.pad(created.agent.agent_id).env


def test_the_binary_is_launched_by_its_absolute_path(rig: PaneRig, spawning: Spawning) -> None:
    spawning.create()

    assert spawning.programs.looked_up == ["claude"]
    assert rig.driver.spawned[0].argv[0] == "/fake/bin/claude"


def test_a_model_is_passed_before_the_prompt(rig: PaneRig, spawning: Spawning) -> None:
    spawning.create(model="opus")

    argv = rig.driver.spawned[0].argv
    assert argv[7:11] == ("--settings", argv[8], "--model", "opus")
    assert argv[-2] == "--"
    assert len(argv) == 13


def test_claude_gets_hook_settings_that_record_its_events_in_the_pad(
    rig: PaneRig, spawning: Spawning
) -> None:
    created = spawning.create()

    pad = rig.pad(created.agent.agent_id)
    events = f"/pads/{spawning.fleet_id}-{created.agent.agent_id}/events"
    settings = json.loads(pad.files["agent-settings.json"])
    commands = {
        event: [hook["command"] for entry in entries for hook in entry["hooks"]]
        for event, entries in settings["hooks"].items()
    }
    assert commands == {
        "SessionStart": [f"record-event {events} session"],
        "UserPromptSubmit": [f"record-event {events} prompt", f"wait-for-mail {pad.location}"],
        "Stop": [f"record-event {events} idle", f"wait-for-mail {pad.location}"],
        "Notification": [f"record-event {events} waiting"],
    }
    waiter = settings["hooks"]["Stop"][1]["hooks"][0]
    assert (waiter["asyncRewake"], waiter["timeout"]) == (True, 86400)


def test_claude_without_the_hook_channel_gets_no_mail_waiter(
    rig: PaneRig, spawning: Spawning
) -> None:
    rig.channels = {"claude": ()}

    created = spawning.create()

    settings = json.loads(rig.pad(created.agent.agent_id).files["agent-settings.json"])
    assert [len(entry) for entry in settings["hooks"].values()] == [1, 1, 1, 1]
    assert "asyncRewake" not in json.dumps(settings)


def test_claude_without_the_hook_rule_or_channel_gets_no_hook_settings(
    rig: PaneRig, spawning: Spawning
) -> None:
    rig.ready_rules = {"claude": (ReadyRule.SCREEN, ReadyRule.WAIT)}
    rig.channels = {"claude": ()}

    created = spawning.create()

    assert rig.pad(created.agent.agent_id).files == {}
    assert "--settings" not in rig.driver.spawned[0].argv


def test_a_codex_member_gets_the_codex_command_line(rig: PaneRig, spawning: Spawning) -> None:
    created = spawning.create(coding_agent=CodingAgent.CODEX, prompt="Go.")

    assert rig.driver.spawned[0].argv == (
        "/fake/bin/codex", *CODEX_HEAD, "--add-dir", "/fake/runtime", "--", "Go."
    )  # fmt: skip
    assert created.placement.coding_agent is CodingAgent.CODEX
    files = rig.pad(created.agent.agent_id).files
    assert set(files) == {SPAWN_FILE}  # no hook settings; what finds its conversation later
    assert SpawnFacts.parse(files[SPAWN_FILE]) == SpawnFacts(
        "Go.", "/fake/project", "/fake/home/.codex", "/fake/bin/codex", START
    )


def test_a_codex_member_with_its_queue_channel_off_still_keeps_what_finds_its_conversation(
    rig: PaneRig, spawning: Spawning
) -> None:
    rig.channels = {"codex": ()}  # keys only: its status and receipts still read the record

    created = spawning.create(coding_agent=CodingAgent.CODEX, prompt="Go.")

    assert set(rig.pad(created.agent.agent_id).files) == {SPAWN_FILE}


def test_a_codex_member_may_write_the_database_and_runtime_directories(rig: PaneRig) -> None:
    """Its tools run `cafleet` in Codex's sandbox: the store, the send locks and the other
    members' pads must be writable there."""
    spawning = Spawning(rig, database_dir="/fake/data")

    spawning.create(coding_agent=CodingAgent.CODEX, model="gpt-5", prompt="Go.")

    assert rig.driver.spawned[0].argv == (
        "/fake/bin/codex", *CODEX_HEAD, "--add-dir", "/fake/data", "--add-dir", "/fake/runtime",
        "--model", "gpt-5", "--", "Go.",
    )  # fmt: skip


def test_a_codex_member_may_write_the_git_directories_of_its_repository(rig: PaneRig) -> None:
    spawning = Spawning(rig, database_dir="/fake/data", git_dirs=(f"{CWD}/.git",))

    spawning.create(coding_agent=CodingAgent.CODEX, prompt="Go.")
    spawning.create(coding_agent=CodingAgent.CLAUDE, name="other", prompt="Go.")

    codex, claude = (call.argv for call in rig.driver.spawned)
    assert codex == (
        "/fake/bin/codex", *CODEX_HEAD, "--add-dir", "/fake/data", "--add-dir", "/fake/runtime",
        "--add-dir", f"{CWD}/.git", "--", "Go.",
    )  # fmt: skip
    assert "--add-dir" not in claude  # its git runs unsandboxed; its floor allows commits


def test_an_opencode_member_gets_its_preset_and_command_line(
    rig: PaneRig, spawning: Spawning
) -> None:
    spawning.create(coding_agent=CodingAgent.OPENCODE, model="openai/gpt-5", prompt="Go.")

    assert spawning.preset.homes == [HOME]
    assert rig.driver.spawned[0].argv == (
        "/fake/bin/opencode", "--agent", "cafleet", "--port", "4242", "--model", "openai/gpt-5",
        "--prompt", "Go.",
    )  # fmt: skip


def test_an_opencode_member_s_server_gets_a_password_in_its_environment(
    rig: PaneRig, spawning: Spawning
) -> None:
    created = spawning.create(coding_agent=CodingAgent.OPENCODE, prompt="Go.")

    pad = rig.pad(created.agent.agent_id)
    assert pad.served is not None
    assert pad.env["OPENCODE_SERVER_PASSWORD"] == pad.served.password == "fake-password"
    assert "--port" in pad.argv
    assert pad.argv[pad.argv.index("--port") + 1] == str(pad.served.port)


def test_an_opencode_member_keeps_what_finds_its_session_later(
    rig: PaneRig, spawning: Spawning
) -> None:
    """Whatever readiness rule decides, the pad keeps what finds its session on its server."""
    rig.ready_rules = {"opencode": (ReadyRule.WAIT,)}

    created = spawning.create(coding_agent=CodingAgent.OPENCODE, prompt="Go.")

    files = rig.pad(created.agent.agent_id).files
    assert SpawnFacts.parse(files.get(SPAWN_FILE)) == SpawnFacts(
        "Go.", "/fake/project", "", "/fake/bin/opencode", START
    )


@pytest.mark.parametrize("coding_agent", [CodingAgent.CLAUDE, CodingAgent.CODEX])
def test_other_members_get_no_server(
    rig: PaneRig, spawning: Spawning, coding_agent: CodingAgent
) -> None:
    created = spawning.create(coding_agent=coding_agent)

    pad = rig.pad(created.agent.agent_id)
    assert pad.served is None
    assert "OPENCODE_SERVER_PASSWORD" not in pad.env
    assert "--port" not in pad.argv


def test_a_multi_line_prompt_stays_one_argument(rig: PaneRig, spawning: Spawning) -> None:
    spawning.create(prompt="line one\nline two {{literal}}")

    assert rig.driver.spawned[0].argv[-1] == "line one\nline two {literal}"


def test_a_prompt_starting_with_a_dash_follows_the_double_dash(
    rig: PaneRig, spawning: Spawning
) -> None:
    spawning.create(prompt="--help is not an option here")

    assert rig.driver.spawned[0].argv[-2:] == ("--", "--help is not an option here")


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


# --------------------------------------------------------------------------- readiness


def test_claude_is_ready_when_its_hook_reports_the_prompt(rig: PaneRig, spawning: Spawning) -> None:
    def agent_takes_the_prompt(pad: FakeLaunchPad, pane_id: str) -> None:
        pad.reported.extend(["session", "prompt"])

    spawning.on_spawn(agent_takes_the_prompt)

    created = spawning.create()

    assert (created.placement.ready_rule, created.placement.ready_at) == ("hook", START)
    assert rig.placement(created.agent.agent_id) == created.placement
    assert rig.pad(created.agent.agent_id).ready is True


def test_a_session_event_alone_is_not_ready(rig: PaneRig, spawning: Spawning) -> None:
    spawning.on_spawn(lambda pad, pane_id: pad.reported.append("session"))
    rig.clock.after(3.0, lambda: rig.pads.pads[-1].reported.append("prompt"))

    created = spawning.create()

    assert (created.placement.ready_rule, created.placement.ready_at) == ("hook", at(3.0))


def test_the_hook_wins_over_the_screen(rig: PaneRig, spawning: Spawning) -> None:
    def both(pad: FakeLaunchPad, pane_id: str) -> None:
        pad.reported.append("prompt")
        rig.driver.panes[pane_id].screen = drawn(pad.argv[-1])

    spawning.on_spawn(both)

    assert spawning.create().placement.ready_rule == "hook"


def prompt_appears_after(rig: PaneRig, seconds: float) -> Callable[[FakeLaunchPad, str], None]:
    def appears(pad: FakeLaunchPad, pane_id: str) -> None:
        pane = rig.driver.panes[pane_id]
        rig.clock.after(seconds, lambda: setattr(pane, "screen", drawn(pad.argv[-1])))

    return appears


def test_codex_is_ready_when_its_screen_shows_the_spawn_prompt(
    rig: PaneRig, spawning: Spawning
) -> None:
    spawning.on_spawn(prompt_appears_after(rig, 1.0))

    created = spawning.create(coding_agent=CodingAgent.CODEX)

    assert (created.placement.ready_rule, created.placement.ready_at) == ("screen", at(1.0))


BUSY = '{"ses_1": {"type": "busy"}}'


def test_opencode_is_ready_when_its_server_reports_a_busy_session(
    rig: PaneRig, spawning: Spawning
) -> None:
    def busy_later(pad: FakeLaunchPad, pane_id: str) -> None:
        pad.answers["/session/status"] = "{}"
        rig.clock.after(2.0, lambda: pad.answers.update({"/session/status": BUSY}))

    spawning.on_spawn(busy_later)

    created = spawning.create(coding_agent=CodingAgent.OPENCODE)

    assert (created.placement.ready_rule, created.placement.ready_at) == ("http", at(2.0))
    assert rig.pad(created.agent.agent_id).ready is True


def test_opencode_s_screen_never_counts(rig: PaneRig, spawning: Spawning) -> None:
    """opencode shows the spawn prompt in its composer before it takes it."""
    spawning.on_spawn(prompt_appears_after(rig, 1.0))

    created = spawning.create(coding_agent=CodingAgent.OPENCODE)

    assert (created.placement.ready_rule, created.placement.ready_at) == ("wait", at(45.0))


def test_opencode_with_the_screen_rule_may_use_it_once_its_server_is_late(
    rig: PaneRig, spawning: Spawning
) -> None:
    rig.ready_rules = {"opencode": (ReadyRule.HTTP, ReadyRule.SCREEN, ReadyRule.WAIT)}
    spawning.on_spawn(prompt_appears_after(rig, 1.0))

    created = spawning.create(coding_agent=CodingAgent.OPENCODE)

    assert (created.placement.ready_rule, created.placement.ready_at) == ("screen", at(8.0))


def test_claude_s_screen_counts_only_once_its_hook_is_late(
    rig: PaneRig, spawning: Spawning
) -> None:
    spawning.on_spawn(prompt_appears_after(rig, 1.0))

    created = spawning.create()

    assert (created.placement.ready_rule, created.placement.ready_at) == ("screen", at(8.0))


def test_claude_s_hook_within_the_grace_wins_over_its_screen(
    rig: PaneRig, spawning: Spawning
) -> None:
    spawning.on_spawn(prompt_appears_after(rig, 1.0))
    rig.clock.after(7.0, lambda: rig.pads.pads[-1].reported.append("prompt"))

    created = spawning.create()

    assert (created.placement.ready_rule, created.placement.ready_at) == ("hook", at(7.0))


def test_claude_without_the_hook_rule_trusts_its_screen_at_once(
    rig: PaneRig, spawning: Spawning
) -> None:
    rig.ready_rules = {"claude": (ReadyRule.SCREEN, ReadyRule.WAIT)}
    spawning.on_spawn(prompt_appears_after(rig, 1.0))

    created = spawning.create()

    assert (created.placement.ready_rule, created.placement.ready_at) == ("screen", at(1.0))


def test_the_screen_rule_needs_the_agent_in_front(rig: PaneRig, spawning: Spawning) -> None:
    def echoed_by_a_shell(pad: FakeLaunchPad, pane_id: str) -> None:
        pane = rig.driver.panes[pane_id]
        pane.command, pane.screen = "bash", drawn(pad.argv[-1])
        rig.clock.after(2.0, lambda: setattr(pane, "command", "codex"))

    spawning.on_spawn(echoed_by_a_shell)

    created = spawning.create(coding_agent=CodingAgent.CODEX)

    assert (created.placement.ready_rule, created.placement.ready_at) == ("screen", at(2.0))


@pytest.mark.parametrize(
    ("coding_agent", "changes", "seconds"),
    [
        (CodingAgent.CLAUDE, {}, 20.0),
        (CodingAgent.CODEX, {}, 20.0),
        (CodingAgent.OPENCODE, {}, 45.0),
        # 0.5 s, seen at the first look after it (the screen is read every 0.2 s)
        (CodingAgent.CUSTOM, {"agent_command": "demo-agent"}, 0.6),
    ],
)
def test_without_a_signal_an_agent_in_front_is_ready_after_its_wait(
    rig: PaneRig,
    spawning: Spawning,
    coding_agent: CodingAgent,
    changes: dict[str, object],
    seconds: float,
) -> None:
    created = spawning.create(coding_agent=coding_agent, **changes)

    assert (created.placement.ready_rule, created.placement.ready_at) == ("wait", at(seconds))
    assert rig.placement(created.agent.agent_id) == created.placement


def test_a_custom_agent_showing_its_interpreter_counts_as_in_front(
    rig: PaneRig, spawning: Spawning
) -> None:
    def shebang_script(pad: FakeLaunchPad, pane_id: str) -> None:
        pane = rig.driver.panes[pane_id]  # the kernel runs the interpreter on the script
        pane.command, pane.argv = "python3", ("/usr/bin/python3", *pane.argv)

    spawning.on_spawn(shebang_script)

    created = spawning.create(coding_agent=CodingAgent.CUSTOM, agent_command="demo-agent")

    assert (created.placement.ready_rule, created.placement.ready_at) == ("wait", at(0.6))


def test_a_custom_agent_whose_interpreter_runs_another_script_is_not_in_front(
    rig: PaneRig, spawning: Spawning
) -> None:
    def repl_in_front(pad: FakeLaunchPad, pane_id: str) -> None:
        pane = rig.driver.panes[pane_id]
        pane.command, pane.argv = "python3", ("/usr/bin/python3",)

    spawning.on_spawn(repl_in_front)

    with pytest.raises(Unavailable, match=r"does not run custom \(foreground: python3\)"):
        spawning.create(coding_agent=CodingAgent.CUSTOM, agent_command="demo-agent")


def test_a_runtime_template_records_its_script_and_is_in_front_running_it(
    rig: PaneRig, spawning: Spawning
) -> None:
    spawning.programs.paths["node"] = "/usr/bin/node"
    spawning.on_spawn(lambda pad, pane_id: setattr(rig.driver.panes[pane_id], "command", "node"))

    created = spawning.create(coding_agent=CodingAgent.CUSTOM, agent_command="node ./agent.js")

    assert created.placement.agent_commands == ("node", "agent.js")
    assert (created.placement.ready_rule, created.placement.ready_at) == ("wait", at(0.6))


def test_the_wait_counts_only_while_the_agent_is_in_front_without_a_dialog(
    rig: PaneRig, spawning: Spawning
) -> None:
    def flashing_dialog(pad: FakeLaunchPad, pane_id: str) -> None:
        pane = rig.driver.panes[pane_id]
        pane.screen = ["Do you want to proceed?"]
        rig.clock.after(0.6, lambda: setattr(pane, "screen", ["> "]))

    spawning.on_spawn(flashing_dialog)

    created = spawning.create()

    assert (created.placement.ready_rule, created.placement.ready_at) == ("wait", at(20.6))


def test_the_ready_rules_setting_limits_the_rules(rig: PaneRig, spawning: Spawning) -> None:
    rig.ready_rules = {"claude": (ReadyRule.WAIT,)}
    spawning.on_spawn(
        lambda pad, pane_id: setattr(rig.driver.panes[pane_id], "screen", drawn(pad.argv[-1]))
    )

    created = spawning.create()

    assert (created.placement.ready_rule, created.placement.ready_at) == ("wait", at(20.0))


def test_nothing_is_typed_into_a_starting_pane(rig: PaneRig, spawning: Spawning) -> None:
    created = spawning.create()

    assert rig.driver.panes[created.placement.pane_id or ""].typed == []


def test_registration_timestamps_come_from_the_clock(rig: PaneRig, spawning: Spawning) -> None:
    created = spawning.create()

    assert created.agent.registered_at == START
    assert created.placement.created_at == START
    assert created.placement.ready_at == at(20.0) == rig.clock.now()


# --------------------------------------------------------------------------- failed starts


def assert_rolled_back(rig: PaneRig, spawning: Spawning, pane_id: str) -> None:
    burned = rig.agent(spawning.coder())
    assert burned is not None
    assert burned.status is AgentStatus.DEREGISTERED
    assert rig.placement(burned.agent_id) is None
    assert rig.schedule(burned.agent_id) is None
    assert pane_id not in rig.driver.panes
    assert set(rig.driver.panes) == {DIRECTOR_PANE}
    pad = rig.pad(burned.agent_id)
    assert (pad.discarded, pad.ready) == (True, False)


def test_an_agent_that_exits_at_once_fails_with_its_last_lines(
    rig: PaneRig, spawning: Spawning
) -> None:
    opened: list[str] = []

    def exits(pad: FakeLaunchPad, pane_id: str) -> None:
        opened.append(pane_id)
        pad.launcher_status = LauncherStatus(exit_code=1)
        rig.driver.panes[pane_id].screen = [
            "Welcome to Claude Code", "", "Error: Invalid API key · Please run /login", "",
            "cafleet: /fake/bin/claude exited with status 1 during start-up",
        ]  # fmt: skip

    spawning.on_spawn(exits)

    with pytest.raises(Unavailable) as raised:
        spawning.create()

    [pane_id] = opened
    assert raised.value.message == (
        "claude did not start: the agent exited with status 1 before taking its first prompt."
        f" Rolled back registration of {spawning.coder()}.\n"
        f"Last lines of pane {pane_id}:\n"
        "  | Welcome to Claude Code\n"
        "  | Error: Invalid API key · Please run /login\n"
        "  | cafleet: /fake/bin/claude exited with status 1 during start-up"
    )
    assert_rolled_back(rig, spawning, pane_id)
    assert rig.clock.now() == START  # noticed on the first look


def test_only_the_last_twelve_lines_are_shown(rig: PaneRig, spawning: Spawning) -> None:
    def exits(pad: FakeLaunchPad, pane_id: str) -> None:
        pad.launcher_status = LauncherStatus(exit_code=2)
        rig.driver.panes[pane_id].screen = [f"line {n}   " for n in range(1, 31)]

    spawning.on_spawn(exits)

    with pytest.raises(Unavailable) as raised:
        spawning.create(coding_agent=CodingAgent.CODEX)

    shown = raised.value.message.split(":\n", 1)[1]
    assert shown == "\n".join(f"  | line {n}" for n in range(19, 31))


def test_a_dialog_on_screen_fails_the_start_and_is_never_answered(
    rig: PaneRig, spawning: Spawning
) -> None:
    opened = []

    def dialog(pad: FakeLaunchPad, pane_id: str) -> None:
        pane = rig.driver.panes[pane_id]
        opened.append(pane)
        pane.screen = ["Detected a custom API key in your environment", "", "Do you want to",
                       "use this API key?", "  1. Yes", "> 2. No (recommended)"]  # fmt: skip

    spawning.on_spawn(dialog)

    with pytest.raises(Unavailable) as raised:
        spawning.create()

    [pane] = opened
    assert raised.value.message == (
        "claude did not start: a dialog is on screen ('use this api key') and CAFleet never"
        " answers one: start claude once in this directory, answer it, and retry."
        f" Rolled back registration of {spawning.coder()}.\n"
        f"Last lines of pane {pane.pane_id}:\n"
        "  | Detected a custom API key in your environment\n"
        "  | Do you want to\n"
        "  | use this API key?\n"
        "  |   1. Yes\n"
        "  | > 2. No (recommended)"
    )
    assert pane.typed == []  # neither Esc nor Enter went to the dialog
    assert_rolled_back(rig, spawning, pane.pane_id)
    assert rig.clock.now() == at(1.0)  # a dialog may flash by for up to a second


def test_a_codex_dialog_fails_its_start(rig: PaneRig, spawning: Spawning) -> None:
    spawning.on_spawn(
        lambda pad, pane_id: setattr(
            rig.driver.panes[pane_id], "screen", ["Sign in with ChatGPT", "Provide your own key"]
        )
    )

    with pytest.raises(Unavailable) as raised:
        spawning.create(coding_agent=CodingAgent.CODEX)

    assert raised.value.message.startswith(
        "codex did not start: a dialog is on screen ('sign in with chatgpt')"
    )


def test_a_pane_that_closes_fails_the_start(rig: PaneRig, spawning: Spawning) -> None:
    opened: list[str] = []

    def closes(pad: FakeLaunchPad, pane_id: str) -> None:
        opened.append(pane_id)
        rig.clock.after(0.4, lambda: rig.driver.panes.pop(pane_id))

    spawning.on_spawn(closes)

    with pytest.raises(Unavailable) as raised:
        spawning.create()

    assert raised.value.message == (
        "claude did not start: the pane closed before the agent took its first prompt."
        f" Rolled back registration of {spawning.coder()}."
    )
    assert_rolled_back(rig, spawning, opened[0])


def test_an_agent_never_in_front_times_out(rig: PaneRig) -> None:
    spawning = Spawning(rig, start_timeout=5.0)
    opened: list[str] = []

    def shell_stays(pad: FakeLaunchPad, pane_id: str) -> None:
        opened.append(pane_id)
        rig.driver.panes[pane_id].command = "bash"
        rig.driver.panes[pane_id].screen = ["$ exec claude", "claude: command not found", "$"]

    spawning.on_spawn(shell_stays)

    with pytest.raises(Unavailable) as raised:
        spawning.create()

    assert raised.value.message == (
        "claude did not start: the pane does not run claude (foreground: bash) after 5s."
        f" Rolled back registration of {spawning.coder()}.\n"
        f"Last lines of pane {opened[0]}:\n"
        "  | $ exec claude\n"
        "  | claude: command not found\n"
        "  | $"
    )
    assert_rolled_back(rig, spawning, opened[0])
    assert rig.clock.now() == at(5.0)


def test_an_agent_in_front_without_its_signal_times_out(rig: PaneRig) -> None:
    rig.ready_rules = {"claude": (ReadyRule.HOOK,)}
    spawning = Spawning(rig, start_timeout=5.0)

    with pytest.raises(Unavailable) as raised:
        spawning.create()

    assert raised.value.message == (
        "claude did not start: the agent did not take its first prompt within 5s."
        f" Rolled back registration of {spawning.coder()}."
    )
    assert rig.clock.now() == at(5.0)


def test_an_interrupted_start_leaves_no_member_behind(rig: PaneRig, spawning: Spawning) -> None:
    opened: list[str] = []

    def interrupt() -> None:
        raise KeyboardInterrupt

    def starts(pad: FakeLaunchPad, pane_id: str) -> None:
        opened.append(pane_id)
        rig.clock.after(1.0, interrupt)

    spawning.on_spawn(starts)

    with pytest.raises(KeyboardInterrupt):
        spawning.create()

    assert_rolled_back(rig, spawning, opened[0])


def test_a_failed_kill_does_not_stop_the_rollback(rig: PaneRig, spawning: Spawning) -> None:
    def exits(pad: FakeLaunchPad, pane_id: str) -> None:
        pad.launcher_status = LauncherStatus(exit_code=1)
        rig.driver.kill_failures[pane_id] = Unavailable("tmux kill-pane failed")

    spawning.on_spawn(exits)

    with pytest.raises(Unavailable) as raised:
        spawning.create()

    assert raised.value.message.startswith("claude did not start: the agent exited with status 1")
    burned = rig.agent(spawning.coder())
    assert burned is not None
    assert burned.status is AgentStatus.DEREGISTERED
    assert rig.placement(burned.agent_id) is None
    assert rig.pad(burned.agent_id).discarded is True


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
        _no_binaries, {}, Invalid,
        "binary claude not found on PATH (claude is the default coding agent); pass"
        ' --coding-agent, or --coding-agent custom --agent-command "cafleet-demo-agent {prompt}"'
        " for the built-in demo agent",
        id="missing-binary",
    ),
    pytest.param(
        _no_binaries, {"coding_agent": CodingAgent.CLAUDE}, Invalid,
        "binary claude not found on PATH", id="missing-named-binary",
    ),
    pytest.param(
        _no_binaries, {"monitor": True}, Invalid,
        "binary claude not found on PATH (claude is the Director's coding agent); pass"
        ' --coding-agent, or --coding-agent custom --agent-command "cafleet-demo-agent {prompt}"'
        " for the built-in demo agent",
        id="missing-inherited-binary",
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
        _fleet_deleted, {}, Conflict, "fleet 1 is deleted; its history is read-only",
        id="deleted-fleet",
    ),
    pytest.param(
        _fleet_deleted, {"monitor": True}, Conflict,
        "fleet 1 is deleted; its history is read-only", id="deleted-fleet-monitor",
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
    assert rig.pads.pads == []
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
    assert rig.pad(burned.agent_id).discarded is True


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
    assert rig.pad(burned.agent_id).discarded is True


def test_a_spawn_that_fails_in_any_way_rolls_the_registration_back(
    rig: PaneRig, spawning: Spawning
) -> None:
    rig.driver.failures["spawn"] = OSError(7, "Argument list too long")

    with pytest.raises(Unavailable) as raised:
        spawning.create()

    burned = spawning.coder()
    assert raised.value.message == (
        f"split_window failed: Argument list too long. Rolled back registration of {burned}."
    )
    assert rig.store.tables.agents[burned].status is AgentStatus.DEREGISTERED
    assert rig.placement(burned) is None
    assert rig.schedule(burned) is None
    assert set(rig.driver.panes) == {DIRECTOR_PANE}
    assert rig.pad(burned).discarded is True


def test_a_prompt_over_the_argument_bound_is_refused_before_anything_is_registered(
    rig: PaneRig, spawning: Spawning
) -> None:
    agents_before = dict(rig.store.tables.agents)

    with pytest.raises(Invalid) as raised:
        spawning.create(prompt="p" * (MAX_PROMPT_BYTES + 1))

    assert raised.value.message == (
        f"spawn prompt is {MAX_PROMPT_BYTES + 1} bytes; the limit is {MAX_PROMPT_BYTES} bytes"
        " (the agent takes it as one command-line argument); put the long part in a file and"
        " name the file in the prompt"
    )
    assert rig.store.tables.agents == agents_before
    assert set(rig.driver.panes) == {DIRECTOR_PANE}


def test_a_prompt_at_the_bound_is_passed_whole(rig: PaneRig, spawning: Spawning) -> None:
    prompt = "é" * (MAX_PROMPT_BYTES // 2)

    created = spawning.create(prompt=prompt)

    assert rig.driver.panes[created.placement.pane_id or ""].argv[-1] == prompt
