"""The agent check on a real tmux: a bare runtime in front is not the agent (H3), an agent that
leaves between the paste and Enter gets no Enter (M1), and an agent without bracketed paste
gets a preview as one submission (M2)."""

from __future__ import annotations

import shlex
import shutil
import sys
from pathlib import Path

import pytest
from panes_support import DEMO_AGENT, PaneFleet, wait_until

pytestmark = pytest.mark.tmux

NODE = shutil.which("node")

# Quits at the first Esc it reads: a bracketed paste starts with one, so the rest of the
# paste is left to the shell behind it (any agent exit between the check and the paste).
EXITER = """
import os, sys, termios, tty
old = termios.tcgetattr(0)
tty.setraw(0)
os.write(1, b"\\x1b[?2004hexiter ready\\r\\n")
while os.read(0, 1) not in (b"", b"\\x1b"):
    pass
os.write(1, b"\\x1b[?2004l")
termios.tcsetattr(0, termios.TCSANOW, old)
"""

# A line-oriented agent: cooked terminal, no bracketed paste; `!cmd` runs cmd (bash mode).
LINE_AGENT = """
import subprocess, sys
log = open(sys.argv[1], "a", buffering=1)
while True:
    line = input("> ")
    log.write("SUBMIT:%r\\n" % line)
    if line.startswith("!"):
        subprocess.run(line[1:], shell=True)
"""


def in_front(fleet: PaneFleet, pane: str, command: str) -> None:
    wait_until(
        lambda: fleet.tmux.panes()[pane]["command"] == command, f"{command} in front of {pane}"
    )


def start_in_shell(fleet: PaneFleet, pane: str, line: str) -> None:
    wait_until(lambda: fleet.tmux.capture(pane).strip(), f"a prompt in {pane}")
    fleet.tmux.run("send-keys", "-t", pane, "-l", line)
    fleet.tmux.run("send-keys", "-t", pane, "Enter")


def director_of(fleet: PaneFleet, coding_agent: str) -> tuple[str, int, int, int]:
    """(pane, fleet id, Director id, Administrator id) of a fleet whose Director runs
    `coding_agent`: the fixture's own for custom, else a new fleet in a new window."""
    if coding_agent == "custom":
        return fleet.director_pane, fleet.fleet_id, fleet.director, fleet.admin
    pane = fleet.tmux.run("new-window", "-d", "-P", "-F", "#{pane_id}", "bash --norc")
    made = fleet.json(
        "fleet", "create", "--name", "c", "--coding-agent", coding_agent,
        env={"TMUX_PANE": pane},
    )  # fmt: skip
    return pane, made["fleet_id"], made["director"]["agent_id"], made["administrator_agent_id"]


# custom: any program but a shell is the agent; codex: its profile accepts node (Codex runs
# on it), but only running Codex's script
@pytest.mark.skipif(NODE is None, reason="node is not installed")
@pytest.mark.parametrize("coding_agent", ["custom", "codex"])
def test_a_node_repl_in_the_directors_pane_is_not_taken_for_the_agent(
    pane_fleet: PaneFleet, coding_agent: str
) -> None:
    fleet = pane_fleet
    pane, fleet_id, director, admin = director_of(fleet, coding_agent)
    written = fleet.tmp / "written-by-the-message"
    start_in_shell(fleet, pane, "node")
    in_front(fleet, pane, "node")
    fleet.wait_screen(pane, ">")

    sent = fleet.json(
        "message", "send", "--fleet-id", str(fleet_id), "--agent-id", str(admin),
        "--to", str(director), "--text", f"require('fs').writeFileSync('{written}', 'x')",
    )  # fmt: skip

    assert sent["notification"] == {
        "state": "skipped",
        "transport": "tmux",
        "reason": "not-agent:node",
    }
    assert "cafleet msg" not in fleet.tmux.capture(pane)
    assert not written.exists()


def test_an_agent_exiting_as_the_preview_arrives_gets_no_enter(pane_fleet: PaneFleet) -> None:
    fleet = pane_fleet
    pane = fleet.director_pane
    exiter = fleet.tmp / "exiter.py"
    exiter.write_text(EXITER, encoding="utf-8")
    touched = fleet.tmp / "touched-by-the-shell"
    # the shell behind it: the Director's own pane; tmux shows the name given as argv[0]
    start_in_shell(fleet, pane, f"(exec -a exiter {shlex.quote(sys.executable)} {exiter})")
    fleet.wait_screen(pane, "exiter ready")
    in_front(fleet, pane, "exiter")

    sent = fleet.send(
        fleet.admin, fleet.director, f"hello; touch {touched}",
        env={"CAFLEET_SUBMIT_DELAY_CUSTOM": "0.5"},  # the shell takes the terminal back
    )  # fmt: skip

    assert sent["notification"] == {
        "state": "skipped",
        "transport": "tmux",
        "reason": "not-agent:bash (before Enter)",
    }
    in_front(fleet, pane, "bash")
    fleet.wait_screen(pane, "touch")  # the rest of the paste waits in the shell's line
    assert not touched.exists()


def test_a_preview_to_an_agent_without_bracketed_paste_is_one_submission(
    pane_fleet: PaneFleet,
) -> None:
    fleet = pane_fleet
    agent = fleet.tmp / "lineagent.py"
    agent.write_text(LINE_AGENT, encoding="utf-8")
    log = fleet.tmp / "line.log"
    touched = fleet.tmp / "touched-by-the-body"
    member = fleet.create_member("line", agent_argv=[sys.executable, str(agent), str(log)])
    fleet.wait_screen(member.pane, ">")

    sent = fleet.send(fleet.director, member.agent_id, f"!touch {touched}")
    assert sent["notification"]["state"] == "sent", sent

    submits = wait_until(
        lambda: log.exists() and log.read_text(encoding="utf-8").splitlines(), "a submission"
    )
    task = sent["task"]
    assert submits == [
        f"SUBMIT:'[cafleet msg {task['id']} from {fleet.director} {task['ts']}] !touch {touched}'"
    ]
    assert not touched.exists()


def test_a_runtime_agent_started_with_a_module_is_typed_into(pane_fleet: PaneFleet) -> None:
    # `python -m cafleet.demo.agent`: python in front, running the module the template names
    fleet = pane_fleet
    member = fleet.create_member("demo")
    assert fleet.tmux.panes()[member.pane]["command"] == Path(DEMO_AGENT[0]).name

    sent = fleet.send(fleet.director, member.agent_id, "ping")

    assert sent["notification"]["state"] == "sent", sent
    member.wait_event("ack")
