"""--fleet-id and --agent-id default to CAFLEET_FLEET_ID / CAFLEET_AGENT_ID (set in every
member's pane), an explicit flag wins, and --json is taken after any subcommand too."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest


@dataclass
class Pair:
    fid: int
    director: int
    worker: int
    other_fid: int


@pytest.fixture
def pair(run) -> Pair:
    made = run.world.fleet("alpha")
    other = run.world.fleet("beta")
    worker = run.world.member(made, "worker", pane_id="%1")
    return Pair(made.fleet.fleet_id, made.director.agent_id, worker, other.fleet.fleet_id)


def stored(run) -> list[tuple[int, int | None]]:
    return [(m.from_agent_id, m.to_agent_id) for m in run.world.all_messages()]


def test_send_takes_both_ids_from_the_environment(run, pair: Pair) -> None:
    env = {"CAFLEET_FLEET_ID": str(pair.fid), "CAFLEET_AGENT_ID": str(pair.director)}

    result = run("message", "send", "--to", str(pair.worker), "--text", "hi", env=env)

    assert result.exit_code == 0, result.output
    assert stored(run) == [(pair.director, pair.worker)]


def test_explicit_flags_win_over_the_environment(run, pair: Pair) -> None:
    env = {"CAFLEET_FLEET_ID": str(pair.other_fid), "CAFLEET_AGENT_ID": str(pair.worker)}

    result = run(
        "message", "send", "--fleet-id", str(pair.fid), "--agent-id", str(pair.director),
        "--to", str(pair.worker), "--text", "hi", env=env,
    )  # fmt: skip

    assert result.exit_code == 0, result.output
    assert stored(run) == [(pair.director, pair.worker)]


@pytest.mark.parametrize(
    "args",
    [["member", "list"], ["monitor", "status"], ["fleet", "show"]],
    ids=["member-list", "monitor-status", "fleet-show"],
)
def test_commands_without_an_acting_agent_take_the_fleet_from_the_environment(
    run, pair: Pair, args: list[str]
) -> None:
    with_env = run("--json", *args, env={"CAFLEET_FLEET_ID": str(pair.fid)})
    explicit = run("--json", *args, "--fleet-id", str(pair.fid))

    assert with_env.exit_code == 0, with_env.output
    assert with_env.stdout == explicit.stdout


def test_a_bad_fleet_variable_is_refused_in_one_line_naming_it(run, pair: Pair) -> None:
    result = run("member", "list", env={"CAFLEET_FLEET_ID": "abc"})

    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == (
        "Error: Invalid value for '--fleet-id' (from CAFLEET_FLEET_ID): 'abc' is not an integer"
        " between 1 and 9223372036854775807."
    )


def test_help_says_when_the_ids_may_be_omitted(run) -> None:
    shown = " ".join(run("message", "send", "--help").stdout.split())

    assert "required unless CAFLEET_FLEET_ID is set" in shown
    assert "Required unless CAFLEET_AGENT_ID is set" in shown


@pytest.mark.parametrize(
    "args",
    [
        ["message", "poll"],
        ["member", "list"],
        ["monitor", "status"],
        ["fleet", "list"],
    ],
    ids=["message-poll", "member-list", "monitor-status", "fleet-list"],
)
def test_json_after_the_subcommand_equals_json_before_it(run, pair: Pair, args: list[str]) -> None:
    env = {"CAFLEET_FLEET_ID": str(pair.fid), "CAFLEET_AGENT_ID": str(pair.worker)}
    before = run("--json", *args, env=env)
    after = run(*args, "--json", env=env)

    assert after.exit_code == 0, after.output
    assert after.stdout == before.stdout
    json.loads(after.stdout)  # really JSON, not the text rendering
