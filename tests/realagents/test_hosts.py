"""A real Claude Code, Codex and OpenCode member on another host: spawned by that host's
relay from the Director's host, messaged and answered through its own channel, captured and
deleted across. The other host is `CAFLEET_HOST=far` on the same machine: its relay runs in a
window of the same tmux server, in the project's directory, and nothing on the Director's
host touches the member's pane itself."""

from __future__ import annotations

import re
import sys
import time

import pytest

from realagents.conftest import AgentTmux
from realagents.fleet import AGENTS, PROMPT, Fleet
from realagents.installed import require_agent

pytestmark = [pytest.mark.realagent, pytest.mark.tmux, pytest.mark.slow]
FAR = "far"
CHANNELS = {"claude": "claude-hook", "codex": "codex-queue", "opencode": "opencode-http"}


def start_far_relay(fleet: Fleet, agent_tmux: AgentTmux) -> str:
    """The relay of host `far` in a window of its own; its pane id once its beat is stored."""
    settings = {k: v for k, v in fleet.env.items() if k not in ("TMUX", "TMUX_PANE")}
    argv = ["env", *(f"{k}={v}" for k, v in sorted(settings.items())), f"CAFLEET_HOST={FAR}",
            sys.executable, "-m", "cafleet", "relay", "--poll", "0.2"]  # fmt: skip
    pane = agent_tmux.spawn(argv, fleet.workdir)
    deadline = time.monotonic() + 60
    while "relay started" not in agent_tmux.capture(pane):
        assert time.monotonic() < deadline, agent_tmux.capture(pane)
        time.sleep(0.2)
    return pane


@pytest.mark.parametrize("agent", AGENTS)
def test_a_member_on_another_host_is_spawned_talked_to_and_deleted_through_its_relay(
    agent: str, fleet: Fleet, agent_tmux: AgentTmux
) -> None:
    require_agent(agent)
    relay_pane = start_far_relay(fleet, agent_tmux)

    out = fleet.cli("member", "create", "--fleet-id", str(fleet.fleet_id), "--agent-id",
                    str(fleet.director), "--name", "faraway", "--description", f"{agent} far",
                    "--coding-agent", agent, "--host", FAR,
                    "--text", PROMPT.format(name="faraway"))  # fmt: skip
    member, pane = int(out.split()[0]), out.split()[3].removeprefix("pane=")
    shown = fleet.json("member", "show", "--fleet-id", str(fleet.fleet_id), "--member-id",
                       str(member))  # fmt: skip
    assert shown["placement"]["host"] == FAR
    assert agent_tmux.run("display-message", "-p", "-t", pane, "#{window_id}") == (
        agent_tmux.run("display-message", "-p", "-t", relay_pane, "#{window_id}")
    )  # beside the relay's pane, in its window

    # the relay announces it through the agent's own channel; the reply is stored at once
    # (the Director's host runs no relay here, so it is not typed into the Director's pane)
    sent = fleet.send(member, "ping 1")
    task = int(re.search(r"^\[(\d+) \|", sent, re.M).group(1))  # type: ignore[union-attr]
    assert "preview queued for host 'far'" in sent
    fleet.wait_for_texts({"pong 1"})
    assert fleet.announced_once(task) in {CHANNELS[agent], "keys"}

    capture = fleet.cli("member", "capture", "--fleet-id", str(fleet.fleet_id), "--member-id",
                        str(member), "--lines", "80")  # fmt: skip
    # Codex and OpenCode show the message as a prompt; Claude's hook hands it over unshown
    assert ("Claude Code" if agent == "claude" else "ping 1") in capture

    out = fleet.cli("member", "delete", "--fleet-id", str(fleet.fleet_id), "--member-id",
                    str(member))  # fmt: skip
    assert "(closed)" in out
    assert agent_tmux.wait_gone(pane, timeout=30)
