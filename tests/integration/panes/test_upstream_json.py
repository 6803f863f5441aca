"""Our `--json` output keeps upstream 0.17.1's shapes (tests/fixtures/upstream_json).

The recorded scenario is replayed on our CLI, step by step, with the same argv: a fleet in a
private tmux server, two members running the demo agent, messages, a broadcast, acks,
cancels, the member verbs, the monitor and doctor. Each output must have every key upstream's
has, at the same nesting, with the same JSON type (support/json_shapes).
"""

from __future__ import annotations

import json

import pytest
from panes_support import DEMO_AGENT, Member, PaneFleet

from support.json_shapes import shape_mismatches, upstream_fixtures

pytestmark = pytest.mark.slow


def ours_for(fleet: PaneFleet, name: str, argv: list[str]) -> list[str]:
    """The argv our CLI needs for the same step: its fleet and members run the demo agent
    (upstream's ran a stand-in `claude`, which ours would wait on for its hook)."""
    if name == "fleet_create":
        return [*argv, "--coding-agent", "custom"]
    if name.startswith("member_create"):
        return [*argv, *fleet.custom_options(DEMO_AGENT)]
    return argv


def test_every_recorded_command_keeps_upstreams_shape(bare_pane_fleet: PaneFleet) -> None:
    fleet = bare_pane_fleet
    problems: list[str] = []
    for fixture in upstream_fixtures():
        name = fixture["name"]
        argv = ours_for(fleet, name, fixture["argv"])
        if name.startswith("member_create"):
            ours = json.loads(create_demo_member(fleet, name, argv).created.stdout)
        else:
            ours = fleet.json(*argv)
        problems += [f"{name}: {p}" for p in shape_mismatches(fixture["output"], ours)]
    assert not problems, "\n".join(problems)


def create_demo_member(fleet: PaneFleet, name: str, argv: list[str]) -> Member:
    """Run a recorded `member create`; wait until the demo agent reads its terminal raw."""
    log = fleet.tmp / f"{name}.jsonl"
    result = fleet.run("--json", *argv, env={"CAFLEET_DEMO_LOG": str(log)})
    assert result.code == 0 and result.stderr == "", result
    made = json.loads(result.stdout)
    member = Member(made["agent_id"], made["name"], made["placement"]["mux_pane_id"], log, result)
    fleet.members.append(member)
    member.wait_event("ready")
    return member
