"""`--agent-id` in a member's pane (CAFLEET_MEMBER_SECRET set): it defaults to the member, no
other id is accepted, and the output says whether the sender was verified."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace

import pytest

from cafleet.domain.identity import secret_digest

SECRET = "a-members-secret-of-enough-length-0123456789"


@dataclass
class Pane:
    fid: str
    director: int
    member: int
    other: int
    env: dict[str, str]


@pytest.fixture
def pane(run) -> Pane:
    """A fleet with two members; the commands run in the first member's pane."""
    made = run.world.fleet("alpha")
    member = run.world.member(made, "worker", pane_id="%1")
    other = run.world.member(made, "reviewer", pane_id="%2")
    with run.store(write=True) as uow:
        placement = uow.placements.get(member)
        assert placement is not None
        uow.placements.save(replace(placement, identity_digest=secret_digest(SECRET)))
        uow.commit()
    env = {"CAFLEET_AGENT_ID": str(member), "CAFLEET_MEMBER_SECRET": SECRET}
    return Pane(str(made.fleet.fleet_id), made.director.agent_id, member, other, env)


def stored(run) -> list[tuple[int, int, bool]]:
    return [(m.from_agent_id, m.to_agent_id, m.sender_verified) for m in run.world.all_messages()]


def test_send_without_agent_id_acts_as_the_member_and_is_verified(run, pane: Pane) -> None:
    result = run(
        "--json", "message", "send", "--fleet-id", pane.fid, "--to", str(pane.director),
        "--text", "done", env=pane.env,
    )  # fmt: skip

    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["sender_verified"] is True
    assert stored(run) == [(pane.member, pane.director, True)]


def test_show_full_and_json_say_the_sender_was_verified(run, pane: Pane) -> None:
    run("message", "send", "--fleet-id", pane.fid, "--to", str(pane.director), "--text", "x",
        env=pane.env)  # fmt: skip
    [message] = run.world.all_messages()
    show = ["message", "show", "--fleet-id", pane.fid, "--agent-id", str(pane.director),
            "--task-id", str(message.task_id)]  # fmt: skip

    text = run(*show, "--full")
    as_json = run("--json", *show, "--full")

    assert f"  from:  {pane.member} (verified)\n" in text.stdout
    assert json.loads(as_json.stdout)["sender_verified"] is True


@pytest.mark.parametrize(
    "command",
    [
        ["message", "send", "--to", "{director}", "--text", "as the Director"],
        ["message", "broadcast", "--text", "as the Director"],
        ["message", "poll"],
        ["member", "nudge", "--member-id", "{other}", "--text", "as the Director"],
        ["member", "create", "--name", "x", "--description", "y", "--text", "p"],
    ],
    ids=["send", "broadcast", "poll", "nudge", "create"],
)
def test_claiming_another_agents_id_is_one_line_and_exit_1(
    run, pane: Pane, command: list[str]
) -> None:
    args = [a.format(director=pane.director, other=pane.other) for a in command]
    claimed = pane.director if command[1] != "poll" else pane.other

    result = run(
        *args[:2], "--fleet-id", pane.fid, "--agent-id", str(claimed), *args[2:], env=pane.env
    )

    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr == (
        f"Error: this pane belongs to agent {pane.member}; it cannot act as agent {claimed}.\n"
    )
    assert stored(run) == []


def test_a_secret_that_does_not_verify_is_refused(run, pane: Pane) -> None:
    env = {**pane.env, "CAFLEET_MEMBER_SECRET": "not-the-secret"}

    result = run("message", "poll", "--fleet-id", pane.fid, env=env)

    assert result.exit_code == 1
    assert result.stderr == (
        "Error: the member secret of this pane (CAFLEET_MEMBER_SECRET) does not verify as agent"
        f" {pane.member}.\n"
    )


def test_a_secret_without_an_agent_id_is_refused(run, pane: Pane) -> None:
    result = run("message", "poll", "--fleet-id", pane.fid, env={"CAFLEET_MEMBER_SECRET": SECRET})

    assert result.exit_code == 1
    assert result.stderr == "Error: CAFLEET_MEMBER_SECRET is set but CAFLEET_AGENT_ID is not\n"


def test_outside_a_member_pane_agent_id_is_still_required_and_any_id_works(run, pane: Pane) -> None:
    missing = run("message", "poll", "--fleet-id", pane.fid)
    as_member = run(
        "--json", "message", "send", "--fleet-id", pane.fid, "--agent-id", str(pane.member),
        "--to", str(pane.director), "--text", "from the Director's shell",
        env={"CAFLEET_AGENT_ID": str(pane.other)},  # no secret: not a member's pane
    )  # fmt: skip

    assert missing.exit_code == 1
    assert missing.stderr.startswith("Error: --agent-id <int> is required for this subcommand")
    assert as_member.exit_code == 0, as_member.output
    assert json.loads(as_member.stdout)["sender_verified"] is False
    assert stored(run) == [(pane.member, pane.director, False)]


def test_monitor_config_member_id_names_the_target_not_the_caller(run, pane: Pane) -> None:
    result = run(
        "monitor", "config", "--fleet-id", pane.fid, "--member-id", str(pane.other), env=pane.env
    )

    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"agent {pane.other}: interval ")


def test_monitor_config_still_takes_upstreams_agent_id_spelling_quietly(run, pane: Pane) -> None:
    result = run(
        "monitor", "config", "--fleet-id", pane.fid, "--agent-id", str(pane.other), env=pane.env
    )

    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"agent {pane.other}: interval ")
    assert result.stderr == ""
