"""Member identity on a real tmux server: a member's pane holds its secret only in its
environment (never on a command line), may act only as itself, and what it sends as itself
is recorded verified."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest
from panes_support import CAFLEET, PaneFleet, wait_until

pytestmark = pytest.mark.tmux

# A stand-in coding agent that does what an agent's shell tool does: it runs each command of
# IDENTITY_COMMANDS through the shell of its pane's environment, writes what each returned to
# IDENTITY_RESULTS, then stays in front like an agent waiting for input.
STAND_IN = """#!{python}
import json, os, subprocess, time
results = {{}}
for name, command in json.loads(os.environ["IDENTITY_COMMANDS"]):
    done = subprocess.run(command, shell=True, capture_output=True, text=True)
    results[name] = [done.returncode, done.stdout, done.stderr]
target = os.environ["IDENTITY_RESULTS"]
with open(target + ".partial", "w") as handle:
    json.dump(results, handle)
os.rename(target + ".partial", target)
time.sleep(600)
"""


def environ_of(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes().decode()
    return dict(entry.partition("=")[::2] for entry in raw.split("\0") if entry)


def descendants(pid: int) -> list[int]:
    found, frontier = [], [pid]
    while frontier:
        parent = frontier.pop()
        for child in Path(f"/proc/{parent}/task/{parent}/children").read_text().split():
            found.append(int(child))
            frontier.append(int(child))
    return found


def test_a_member_pane_is_refused_another_id_and_its_own_sends_are_verified(
    pane_fleet: PaneFleet,
) -> None:
    fleet = pane_fleet
    cafleet = shlex.join(CAFLEET)
    stand_in = fleet.tmp / "stand-in-agent"
    stand_in.write_text(STAND_IN.format(python=sys.executable))
    stand_in.chmod(0o755)
    results = fleet.tmp / "identity-results.json"
    commands = [
        (
            "as_director",
            f"{cafleet} message send --fleet-id $CAFLEET_FLEET_ID --agent-id {fleet.director}"
            f" --to {fleet.admin} --text impersonated",
        ),
        (
            "as_itself",
            f"{cafleet} --json message send --fleet-id $CAFLEET_FLEET_ID --to {fleet.director}"
            " --text from-my-own-pane",
        ),
    ]

    member = fleet.create_member(
        "prober",
        agent_argv=[str(stand_in)],
        env={"IDENTITY_COMMANDS": json.dumps(commands), "IDENTITY_RESULTS": str(results)},
        demo=False,
    )
    done = json.loads(wait_until(lambda: results.exists() and results.read_text(), "results"))

    code, out, err = done["as_director"]
    assert (code, out) == (1, "")
    assert err == (
        f"Error: this pane belongs to agent {member.agent_id}; it cannot act as agent"
        f" {fleet.director}.\n"
    )
    code, out, err = done["as_itself"]
    assert (code, err) == (0, "")
    sent = json.loads(out)
    assert sent["sender_verified"] is True
    rows = fleet.rows("SELECT from_agent_id, to_agent_id, text, sender_verified FROM tasks")
    assert [tuple(r) for r in rows] == [
        (member.agent_id, fleet.director, "from-my-own-pane", 1)
    ]  # the impersonation stored nothing
    shown = fleet.ok(
        "message", "show", "--fleet-id", str(fleet.fleet_id), "--agent-id", str(fleet.director),
        "--task-id", str(sent["task"]["id"]), "--full",
    )  # fmt: skip
    assert f"  from:  {member.agent_id} (verified)\n" in shown

    # The secret is in the agent's environment only: not on the pane's command line, not in
    # any process's argv, and the database keeps only its digest.
    pane_pid = int(fleet.tmux.panes()[member.pane]["pid"])
    [agent_pid] = [p for p in descendants(pane_pid) if str(stand_in) in _cmdline(p)]
    secret = environ_of(agent_pid)["CAFLEET_MEMBER_SECRET"]
    assert len(secret) >= 40
    start = fleet.tmux.run("display-message", "-p", "-t", member.pane, "#{pane_start_command}")
    assert secret not in start
    for pid in [pane_pid, *descendants(pane_pid)]:
        assert secret not in _cmdline(pid)
    [placement] = fleet.rows(
        "SELECT identity_digest FROM agent_placements WHERE agent_id = ?", member.agent_id
    )
    assert placement["identity_digest"].startswith("sha256:")
    assert secret not in placement["identity_digest"]
    assert secret not in fleet.tmux.run("show-environment", "-g")


def _cmdline(pid: int) -> str:
    return Path(f"/proc/{pid}/cmdline").read_bytes().decode().replace("\0", " ")
