"""The stale-skills gate in front of fleet, member, message and monitor commands."""

from __future__ import annotations

import pytest

from cafleet import __version__
from cafleet.domain.skills import SkillInstall

GATED = [
    ("fleet", "list"),
    ("member", "list", "--fleet-id", "1"),
    ("message", "poll", "--fleet-id", "1", "--agent-id", "1"),
    ("monitor", "status", "--fleet-id", "1"),
]


def record(run, agent: str, version: str) -> None:
    with run.store(write=True) as uow:
        uow.installs.record(SkillInstall(agent, version, run.clock.now()))
        uow.commit()


def forget_installs(run) -> None:
    run.store.tables.installs.clear()


@pytest.mark.parametrize("args", GATED)
def test_a_team_command_without_a_recorded_install_is_refused(run, args) -> None:
    forget_installs(run)

    result = run(*args)

    assert result.exit_code == 1
    assert result.stderr == "Error: no skills install is recorded; run 'cafleet setup' first\n"


@pytest.mark.parametrize("args", GATED)
def test_a_stale_install_names_every_stale_agent_in_order(run, args) -> None:
    forget_installs(run)
    record(run, "codex", "0.0.1")
    record(run, "claude", "0.0.2")
    record(run, "opencode", __version__)

    result = run(*args)

    assert result.exit_code == 1
    assert result.stderr == (
        f"Error: stale skills detected (claude=0.0.2, codex=0.0.1; CLI {__version__});"
        " run 'cafleet setup skill' to reinstall\n"
    )


@pytest.mark.parametrize("args", GATED)
def test_help_bypasses_the_gate(run, args) -> None:
    forget_installs(run)

    result = run(*args[:2], "--help")

    assert result.exit_code == 0
    assert "Usage:" in result.stdout


def test_a_current_install_lets_team_commands_run(run) -> None:
    result = run("fleet", "list")

    assert result.exit_code == 0
    assert result.stdout == "No fleets found.\n"
