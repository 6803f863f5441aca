"""Choosing herdr by environment, the placement it records, and the keystroke sequence with the
herdr agent check over the fake herdr server."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from tests.fakes.herdr_server import FakeHerdrServer

from cafleet.adapters.fake.clock import FakeClock
from cafleet.adapters.fake.pane_driver import FakePaneDrivers, ThreadLocks
from cafleet.adapters.fake.store import MemoryStore
from cafleet.adapters.herdr.driver import HerdrPaneDriver
from cafleet.adapters.multiplexers import EnvironmentPaneLocator, SystemPaneDrivers
from cafleet.application.fleets import FleetService
from cafleet.application.panes.keystrokes import Keystrokes, KeystrokeSender
from cafleet.application.panes.teardown import PaneTeardown
from cafleet.domain.agents.registry import AgentProfiles, ProfileOverrides
from cafleet.domain.delivery import DeliveryState
from cafleet.domain.errors import Unavailable
from cafleet.domain.panes import PaneInfo, agent_check
from cafleet.domain.placement import CodingAgent, Multiplexer, PaneLocation, PushTarget

START = datetime(2026, 1, 1, 8, 0, tzinfo=UTC)
DELAYS = {"claude": 0.5, "codex": 0.5, "opencode": 0.5, "custom": 0.25}
PROFILES = AgentProfiles.resolved(
    {agent: ProfileOverrides(submit_delay=DELAYS[agent.value]) for agent in CodingAgent}
)


def herdr_env(server: FakeHerdrServer, **extra: str) -> dict[str, str]:
    return {
        "HERDR_ENV": "1",
        "HERDR_PANE_ID": server.root_pane,
        "HERDR_SOCKET_PATH": server.socket_path,
        "HOME": "/nonexistent",
        **extra,
    }


# --------------------------------------------------------------------------- the locator


def test_the_locator_reports_the_calling_herdr_pane(server: FakeHerdrServer) -> None:
    located = EnvironmentPaneLocator(herdr_env(server, CAFLEET_HOST="laptop")).current_pane()

    assert located == PaneLocation(
        Multiplexer.HERDR, "w1", "w1:t1", "w1:p1", server.socket_path, host="laptop"
    )


def test_the_locator_needs_herdr_pane_id(server: FakeHerdrServer) -> None:
    env = herdr_env(server)
    del env["HERDR_PANE_ID"]

    with pytest.raises(Unavailable) as raised:
        EnvironmentPaneLocator(env).current_pane()

    assert raised.value.message == "HERDR_PANE_ID is not set; not running inside a herdr pane"


def test_the_locator_needs_a_reachable_server(tmp_path: Path) -> None:
    env = {"HERDR_ENV": "1", "HERDR_PANE_ID": "w1:p1", "HOME": str(tmp_path)}
    expected = tmp_path / ".config" / "herdr" / "herdr.sock"

    with pytest.raises(Unavailable) as raised:
        EnvironmentPaneLocator(env).current_pane()

    assert raised.value.message == (
        f"cannot reach the herdr server at {expected}: No such file or directory"
    )


def test_cafleet_multiplexer_selects_herdr_inside_tmux(server: FakeHerdrServer) -> None:
    env = herdr_env(server, TMUX="/tmp/tmux-0/default,1,0", CAFLEET_MULTIPLEXER="herdr")

    assert EnvironmentPaneLocator(env).current_pane().backend is Multiplexer.HERDR


def test_fleet_create_records_backend_herdr_and_the_socket(server: FakeHerdrServer) -> None:
    store, clock, drivers = MemoryStore(), FakeClock(START), FakePaneDrivers()
    keys = KeystrokeSender(drivers, ThreadLocks(), clock, PROFILES)
    fleets = FleetService(
        store, clock, EnvironmentPaneLocator(herdr_env(server)), PaneTeardown(keys, drivers, clock)
    )

    made = fleets.create("h", CodingAgent.CUSTOM)

    assert made.placement.backend is Multiplexer.HERDR
    assert made.placement.socket == server.socket_path
    assert (made.placement.session, made.placement.window_id, made.placement.pane_id) == (
        "w1",
        "w1:t1",
        "w1:p1",
    )


# --------------------------------------------------------------------------- the drivers


def test_system_drivers_give_one_herdr_driver_per_socket() -> None:
    drivers = SystemPaneDrivers({"HOME": "/home/u"})

    first = drivers(Multiplexer.HERDR, "/run/a.sock")

    assert isinstance(first, HerdrPaneDriver)
    assert first.socket == "/run/a.sock"
    assert drivers(Multiplexer.HERDR, "/run/a.sock") is first
    assert drivers(Multiplexer.HERDR, "/run/b.sock") is not first


def test_a_placement_without_a_socket_uses_the_environment_s_server() -> None:
    drivers = SystemPaneDrivers({"HOME": "/home/u", "HERDR_SESSION": "team"})

    driver = drivers(Multiplexer.HERDR, None)

    assert isinstance(driver, HerdrPaneDriver)
    assert driver.socket == "/home/u/.config/herdr/sessions/team/herdr.sock"


def test_system_drivers_write_launch_files_in_the_runtime_directory(
    server: FakeHerdrServer, tmp_path: Path
) -> None:
    runtime = tmp_path / "xdg"
    runtime.mkdir(mode=0o700)
    driver = SystemPaneDrivers({"XDG_RUNTIME_DIR": str(runtime)})(
        Multiplexer.HERDR, server.socket_path
    )

    driver.spawn(server.root_pane, ["/bin/agent", "--x"], {}, str(tmp_path))

    (launch,) = (runtime / "cafleet").glob("launch-*.json")
    assert str(launch) in server.typed("w1:p2").decode()


# --------------------------------------------------------------------------- the agent check


@pytest.mark.parametrize(
    ("info", "accepted", "agent", "expected"),
    [
        (PaneInfo("w1:p2", False, "weird", "claude"), ("claude",), "claude", None),
        (PaneInfo("w1:p2", False, "bash", "Claude"), ("claude",), "claude", None),
        (PaneInfo("w1:p2", False, "bash", "codex"), ("claude",), "claude", "not-agent:bash"),
        (PaneInfo("w1:p2", False, "node", None), ("claude", "node"), "claude", "not-agent:node"),
        (
            PaneInfo("w1:p2", False, "node", None, ("node", "/x/claude")),
            ("claude", "node"),
            "claude",
            None,
        ),
        (PaneInfo("w1:p2", False, "", None), ("claude",), "claude", "agent-not-detected"),
        (PaneInfo("w1:p2", False, "", "opencode"), (), "claude", "agent-not-detected"),
        (PaneInfo("w1:p2", True, "claude", "claude"), (), "claude", "pane-gone"),
        (None, (), "claude", "pane-gone"),
        (PaneInfo("%1", False, "python", None), ("python",), None, "not-agent:python"),
        (PaneInfo("%1", False, "python", None, ("python", "a.py")), ("python", "a.py"), None, None),
    ],
)
def test_the_agent_check_trusts_a_detected_agent_first(
    info: PaneInfo | None, accepted: tuple[str, ...], agent: str | None, expected: str | None
) -> None:
    assert agent_check(info, accepted, agent) == expected


@pytest.fixture
def sender(server: FakeHerdrServer) -> KeystrokeSender:
    drivers = SystemPaneDrivers({"HOME": "/nonexistent"})
    return KeystrokeSender(drivers, ThreadLocks(), FakeClock(START), PROFILES)


def target(server: FakeHerdrServer, coding_agent: CodingAgent, pane_id: str) -> PushTarget:
    commands = ("python",) if coding_agent is CodingAgent.CUSTOM else ()
    return PushTarget(7, Multiplexer.HERDR, server.socket_path, pane_id, coding_agent, commands)


def member_pane(server: FakeHerdrServer, tmp_path: Path) -> str:
    driver = HerdrPaneDriver(server.socket_path, launch_dir=lambda: tmp_path)
    return driver.spawn(server.root_pane, ["/bin/agent", "--x"], {}, str(tmp_path))


def test_a_preview_is_one_bracketed_paste_then_enter_without_esc(
    server: FakeHerdrServer, sender: KeystrokeSender, tmp_path: Path
) -> None:
    pane = member_pane(server, tmp_path)
    server.set_processes(pane, [{"pid": 5, "name": "claude", "argv0": "/v/bin/claude"}])
    server.set_bracketed_paste(pane)
    start = len(server.inputs(pane))

    outcome = sender.deliver(
        target(server, CodingAgent.CLAUDE, pane), Keystrokes.preview("[cafleet msg 1]\nhi")
    )

    assert outcome.state is DeliveryState.SENT
    assert outcome.transport == "herdr"
    assert server.inputs(pane)[start:] == [
        b"\x1b[200~[cafleet msg 1]\nhi\x1b[201~",
        b"\r",
    ]


def test_a_claude_pane_showing_a_dialog_is_not_typed_into(
    server: FakeHerdrServer, sender: KeystrokeSender, tmp_path: Path
) -> None:
    pane = member_pane(server, tmp_path)
    server.set_processes(pane, [{"pid": 5, "name": "claude", "argv0": "claude"}])
    server.set_screen(pane, "Bash command\n  rm -rf build\nDo you want to proceed?\n> 1. Yes")
    start = len(server.inputs(pane))

    outcome = sender.deliver(target(server, CodingAgent.CLAUDE, pane), Keystrokes.preview("hi"))

    assert (outcome.state, outcome.error) == (
        DeliveryState.SKIPPED,
        "dialog:do you want to proceed",
    )
    assert server.inputs(pane)[start:] == []


def test_a_claude_pane_is_not_typed_into_as_node(
    server: FakeHerdrServer, sender: KeystrokeSender, tmp_path: Path
) -> None:
    pane = member_pane(server, tmp_path)
    server.set_processes(pane, [{"pid": 5, "name": "node", "argv0": "node"}])
    start = len(server.inputs(pane))

    outcome = sender.deliver(target(server, CodingAgent.CLAUDE, pane), Keystrokes.wake("wake"))

    assert (outcome.state, outcome.error) == (DeliveryState.SKIPPED, "not-agent:node")
    assert server.inputs(pane)[start:] == []


def test_a_pane_showing_a_shell_is_not_typed_into(
    server: FakeHerdrServer, sender: KeystrokeSender, tmp_path: Path
) -> None:
    pane = member_pane(server, tmp_path)  # plain mode: process_info reports `sh`
    start = len(server.inputs(pane))

    outcome = sender.deliver(target(server, CodingAgent.CUSTOM, pane), Keystrokes.exit_command())

    assert (outcome.state, outcome.error) == (DeliveryState.SKIPPED, "not-agent:sh")
    assert server.inputs(pane)[start:] == []


def test_herdr_s_detected_agent_passes_whatever_runs_in_front(
    server: FakeHerdrServer, sender: KeystrokeSender, tmp_path: Path
) -> None:
    pane = member_pane(server, tmp_path)
    server.set_processes(pane, [{"pid": 5, "name": "claude-wrapper"}])
    server.set_agent_status(pane, "idle", agent="claude")

    outcome = sender.deliver(target(server, CodingAgent.CLAUDE, pane), Keystrokes.wake("wake"))

    assert outcome.state is DeliveryState.SENT


def test_an_undetectable_pane_is_skipped_as_agent_not_detected(
    server: FakeHerdrServer, sender: KeystrokeSender, tmp_path: Path
) -> None:
    pane = member_pane(server, tmp_path)
    server.fail("pane.process_info", "process_observation_unavailable", "pending", times=5)

    outcome = sender.deliver(target(server, CodingAgent.CLAUDE, pane), Keystrokes.wake("wake"))

    assert (outcome.state, outcome.error) == (DeliveryState.SKIPPED, "agent-not-detected")


def test_a_closed_pane_is_skipped_as_gone(
    server: FakeHerdrServer, sender: KeystrokeSender, tmp_path: Path
) -> None:
    pane = member_pane(server, tmp_path)
    server.exit_pane(pane)

    outcome = sender.deliver(target(server, CodingAgent.CLAUDE, pane), Keystrokes.wake("wake"))

    assert (outcome.state, outcome.error) == (DeliveryState.SKIPPED, "pane-gone")


def test_a_stopped_server_fails_the_delivery_with_one_line(
    server: FakeHerdrServer, sender: KeystrokeSender, tmp_path: Path
) -> None:
    pane = member_pane(server, tmp_path)
    server.stop()

    outcome = sender.deliver(target(server, CodingAgent.CLAUDE, pane), Keystrokes.wake("wake"))

    assert outcome.state is DeliveryState.FAILED
    assert outcome.error is not None
    assert outcome.error.startswith(f"cannot reach the herdr server at {server.socket_path}: ")
