"""Closing a real Claude Code member that still runs background work.

Claude Code asks "Background work is running" when `/exit` meets a background task (the
monitoring member's loop runs as one). `member delete` and `fleet delete` ask the agent to
exit on the user's request, so confirming that exit is theirs to do: the dialog is read from
the screen and answered with the key that chooses "Exit and stop tasks".
"""

from __future__ import annotations

from typing import Any

import pytest

from realagents.fleet import REPLY_TIMEOUT, Fleet
from realagents.installed import require_agent

pytestmark = [pytest.mark.realagent, pytest.mark.tmux, pytest.mark.slow]

BACKGROUND_WORK = r"(?i)\d+ (background task|shell)"


def start_background_work(fleet: Fleet, agent_tmux: Any, name: str) -> tuple[int, str]:
    member, pane = fleet.create_member("claude", name)
    fleet.send(member, "RUN: BACKGROUND sleep 600")
    agent_tmux.wait_for_screen(pane, BACKGROUND_WORK, timeout=REPLY_TIMEOUT)
    return member, pane


def test_member_delete_confirms_the_exit_over_background_work(
    fleet: Fleet, agent_tmux: Any
) -> None:
    require_agent("claude")
    member, pane = start_background_work(fleet, agent_tmux, "busy")

    out = fleet.cli("member", "delete", "--fleet-id", str(fleet.fleet_id), "--member-id",
                    str(member))  # fmt: skip

    assert f"{pane} (closed)" in out, out
    assert agent_tmux.wait_gone(pane, timeout=30)
    assert agent_tmux.wait_no_leftovers(timeout=15) == {}  # the background sleep ended too


def test_fleet_delete_confirms_the_exit_over_background_work(fleet: Fleet, agent_tmux: Any) -> None:
    require_agent("claude")
    _, busy = start_background_work(fleet, agent_tmux, "busy")
    _, idle = fleet.create_member("claude", "idle")

    out = fleet.cli("fleet", "delete", "--fleet-id", str(fleet.fleet_id))

    assert "2 closed" in out, out
    for pane in (busy, idle):
        assert agent_tmux.wait_gone(pane, timeout=30)
    assert agent_tmux.wait_no_leftovers(timeout=15) == {}
