"""`cafleet member show` and `member list` through click on the fakes (spec §4.7, §5.5)."""

from __future__ import annotations

import json

import pytest

from cafleet.domain.agent import CardKind
from cafleet.domain.placement import CodingAgent

TS = "2026-01-01T08:00:00.000000+00:00"


@pytest.fixture
def made(run):
    return run.world.fleet("alpha")


def member_list(run, made, *extra: str):
    return run("member", "list", "--fleet-id", str(made.fleet.fleet_id), *extra)


def member_show(run, made, member_id: int, *extra: str):
    return run(
        "member", "show", "--fleet-id", str(made.fleet.fleet_id), "--member-id", str(member_id),
        *extra,
    )  # fmt: skip


# -- list -------------------------------------------------------------------------------------


def test_list_of_a_fleet_without_members(run, made) -> None:
    result = member_list(run, made)

    assert (result.exit_code, result.stdout, result.stderr) == (0, "0 members.\n", "")


def test_list_of_one_member_is_a_count_line_and_an_indented_table(run, made) -> None:
    worker = run.world.member(made, "worker", pane_id="%1")

    result = member_list(run, made)

    assert result.stdout == (
        "1 member:\n"
        "  agent_id  name    status  backend  session  window_id  pane_id  created_at\n"
        "  --------  ------  ------  -------  -------  ---------  -------  "
        "--------------------------------\n"
        f"  {worker:<8}  worker  active  claude   main     @0         %1       {TS}\n"
    )


def test_list_counts_several_members_in_id_order_and_shows_pending_panes(run, made) -> None:
    first = run.world.member(made, "builder", pane_id="%1", coding_agent=CodingAgent.OPENCODE)
    second = run.world.member(made, "watch", pane_id=None, card_kind=CardKind.MONITORING_MEMBER)

    lines = member_list(run, made).stdout.splitlines()

    assert lines[0] == "2 members:"
    assert lines[1] == (
        "  agent_id  name     status  backend   session  window_id  pane_id  created_at"
    )
    assert lines[3] == f"  {first:<8}  builder  active  opencode  main     @0         %1       {TS}"
    assert (
        lines[4] == f"  {second:<8}  watch    active  claude    main     @0         -        {TS}"
    )


def test_list_all_shows_every_active_agent_with_its_kind(run, made) -> None:
    worker = run.world.member(made, "worker", pane_id="%1", coding_agent=CodingAgent.CODEX)
    director, admin = made.director.agent_id, made.administrator.agent_id

    result = member_list(run, made, "--all")

    assert result.stdout == (
        "3 agents:\n"
        "  agent_id  name           status  kind           backend  session  window_id  pane_id"
        "  created_at\n"
        "  --------  -------------  ------  -------------  -------  -------  ---------  -------"
        "  --------------------------------\n"
        f"  {director:<8}  Director       active  director       claude   main     @0         %0"
        f"       {TS}\n"
        f"  {admin:<8}  Administrator  active  administrator  -        -        -          -"
        "        -\n"
        f"  {worker:<8}  worker         active  member         codex    main     @0         %1"
        f"       {TS}\n"
    )


def test_list_all_and_activity_are_mutually_exclusive(run, made) -> None:
    result = member_list(run, made, "--all", "--activity")

    assert result.exit_code == 2
    assert result.stderr == (
        "Usage: cafleet member list [OPTIONS]\n"
        "Try 'cafleet member list --help' for help.\n"
        "\n"
        "Error: --all and --activity are mutually exclusive.\n"
    )


def test_list_activity_shows_times_and_idle(run, made) -> None:
    fid, director = str(made.fleet.fleet_id), str(made.director.agent_id)
    worker = run.world.member(made, "worker", pane_id="%1")
    quiet = run.world.member(made, "quiet", pane_id="%2")
    w = str(worker)
    run("message", "send", "--fleet-id", fid, "--agent-id", director, "--to", w, "--text", "go")
    run.clock.advance(60)
    run("message", "send", "--fleet-id", fid, "--agent-id", w, "--to", director, "--text", "ok")
    run.clock.advance(60)
    task = next(m.task_id for m in run.world.all_messages() if m.to_agent_id == worker)
    run("message", "ack", "--fleet-id", fid, "--agent-id", w, "--task-id", str(task))
    run.clock.advance(185)

    result = member_list(run, made, "--activity")

    assert result.stdout == (
        "2 members:\n"
        "  agent_id  name    status  last_sent  last_recv  last_ack  idle\n"
        "  --------  ------  ------  ---------  ---------  --------  ----\n"
        f"  {worker:<8}  worker  active  08:01:00   08:00:00   08:02:00  4m\n"
        f"  {quiet:<8}  quiet   active  -          -          -         -\n"
    )


def test_list_json_default_all_and_activity(run, made) -> None:
    worker = run.world.member(made, "worker", pane_id="%1")
    placement = {
        "director_agent_id": made.director.agent_id,
        "backend": "tmux",
        "mux_session": "main",
        "mux_window_id": "@0",
        "mux_pane_id": "%1",
        "coding_agent": "claude",
        "created_at": TS,
    }
    base = {
        "agent_id": worker,
        "name": "worker",
        "description": "worker description",
        "status": "active",
        "registered_at": TS,
        "placement": placement,
    }
    fid = str(made.fleet.fleet_id)

    default = json.loads(run("--json", "member", "list", "--fleet-id", fid).stdout)
    everyone = json.loads(run("--json", "member", "list", "--fleet-id", fid, "--all").stdout)
    activity = json.loads(run("--json", "member", "list", "--fleet-id", fid, "--activity").stdout)

    assert default == [base]
    assert [a["kind"] for a in everyone] == ["director", "administrator", "member"]
    assert everyone[1]["placement"] is None
    assert everyone[2] == {**base, "kind": "member"}
    assert activity == [
        {**base, "last_sent": None, "last_recv": None, "last_ack": None, "idle": None}
    ]


def test_list_json_of_no_members_is_an_empty_list(run, made) -> None:
    assert run("--json", "member", "list", "--fleet-id", str(made.fleet.fleet_id)).stdout == "[]\n"


def test_list_rejects_a_local_json(run, made) -> None:
    result = member_list(run, made, "--json")

    assert result.exit_code == 2
    assert "Error: No such option '--json'" in result.stderr


def test_list_requires_a_fleet_id(run) -> None:
    result = run("member", "list")

    assert result.exit_code == 1
    assert result.stderr == (
        "Error: --fleet-id <int> is required for this subcommand."
        " Create a fleet with 'cafleet fleet create' and pass its id.\n"
    )


def test_list_of_a_deleted_fleet(run, made) -> None:
    run("fleet", "delete", "--fleet-id", str(made.fleet.fleet_id))

    result = member_list(run, made)

    assert result.exit_code == 1
    assert result.stderr == f"Error: fleet {made.fleet.fleet_id} not found.\n"


# -- show -------------------------------------------------------------------------------------


def test_show_compact_is_id_name_status(run, made) -> None:
    worker = run.world.member(made, "worker", pane_id="%1")

    result = member_show(run, made, worker)

    assert (result.exit_code, result.stdout) == (0, f"{worker} worker active\n")


def test_show_full_of_a_member(run, made) -> None:
    worker = run.world.member(made, "worker", pane_id="%1", skills=("review", "deploy"))

    result = member_show(run, made, worker, "--full")

    assert result.stdout == (
        f"  agent_id:    {worker}\n"
        "  name:        worker\n"
        "  description: worker description\n"
        "  status:      active\n"
        "  kind:        member\n"
        '  skills:      ["review","deploy"]\n'
        "  placement:\n"
        f"    director_agent_id: {made.director.agent_id}\n"
        "    backend:           claude\n"
        "    multiplexer:       tmux\n"
        "    session:           main\n"
        "    window_id:         @0\n"
        "    pane_id:           %1\n"
        f"    created_at:        {TS}\n"
    )


def test_show_full_of_the_director_and_the_administrator(run, made) -> None:
    director = member_show(run, made, made.director.agent_id, "--full").stdout.splitlines()
    admin = member_show(run, made, made.administrator.agent_id, "--full").stdout.splitlines()

    assert "  kind:        director" in director
    assert "    director_agent_id: -" in director
    assert "  skills:      -" in director
    assert "  kind:        administrator" in admin
    assert admin[-1] == "  placement:   none"


def test_show_full_of_a_pending_member_prints_a_dash_for_the_pane(run, made) -> None:
    pending = run.world.member(made, "pending", pane_id=None)

    lines = member_show(run, made, pending, "--full").stdout.splitlines()

    assert "    pane_id:           -" in lines


def test_show_full_truncates_the_description_to_sixty_codepoints(run, made) -> None:
    worker = run.world.member(made, "worker", description="é" * 61)

    lines = member_show(run, made, worker, "--full").stdout.splitlines()

    assert lines[2] == "  description: " + "é" * 60 + "…"


def test_show_json(run, made) -> None:
    worker = run.world.member(made, "worker", pane_id="%1", skills=("review",))

    result = run(
        "--json", "member", "show", "--fleet-id", str(made.fleet.fleet_id),
        "--member-id", str(worker),
    )  # fmt: skip

    assert json.loads(result.stdout) == {
        "agent_id": worker,
        "name": "worker",
        "description": "worker description",
        "status": "active",
        "registered_at": TS,
        "kind": "member",
        "skills": ["review"],
        "placement": {
            "director_agent_id": made.director.agent_id,
            "backend": "tmux",
            "mux_session": "main",
            "mux_window_id": "@0",
            "mux_pane_id": "%1",
            "coding_agent": "claude",
            "created_at": TS,
        },
    }


@pytest.mark.parametrize("case", ["unknown", "other-fleet", "deregistered"])
def test_show_of_an_agent_outside_reach_is_one_error(run, made, case: str) -> None:
    other = run.world.fleet("beta")
    worker = run.world.member(made, "worker", pane_id="%1")
    target = {"unknown": 404, "other-fleet": other.director.agent_id, "deregistered": worker}[case]
    if case == "deregistered":
        run.world.deregister(worker)

    result = member_show(run, made, target)

    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr == f"Error: Agent {target} not found\n"


# -- nudge ------------------------------------------------------------------------------------


def nudge(run, made, member_id: int, *extra: str, sender: int | None = None):
    return run(
        "member", "nudge", "--fleet-id", str(made.fleet.fleet_id),
        "--agent-id", str(made.director.agent_id if sender is None else sender),
        "--member-id", str(member_id), *extra,
    )  # fmt: skip


def test_nudge_with_a_dispatched_preview(run, made) -> None:
    worker = run.world.member(made, "worker", pane_id="%1")

    result = nudge(run, made, worker, "--text", "wake up")

    [message] = run.world.all_messages()
    assert result.exit_code == 0
    assert result.stdout == (
        f"Nudged worker (%1) — task {message.task_id} queued, Esc-safeguarded preview dispatched.\n"
    )
    assert message.text == "wake up"


def test_nudge_of_a_pending_member(run, made) -> None:
    pending = run.world.member(made, "newbie", pane_id=None)

    result = nudge(run, made, pending, "--text", "hi")

    [message] = run.world.all_messages()
    assert result.stdout == f"Nudged newbie — no pane; task {message.task_id} queued.\n"


def test_nudge_names_the_reason_when_the_preview_was_not_delivered(run, made) -> None:
    director = made.director.agent_id

    result = nudge(run, made, director, "--text", "note to self", sender=director)

    [message] = run.world.all_messages()
    assert result.stdout == (
        f"Nudged Director (%0) — task {message.task_id} queued;"
        " inline preview not delivered (self).\n"
    )


def test_nudge_json(run, made) -> None:
    worker = run.world.member(made, "worker", pane_id="%1")

    result = run(
        "--json", "member", "nudge", "--fleet-id", str(made.fleet.fleet_id),
        "--agent-id", str(made.director.agent_id), "--member-id", str(worker), "--text", "x",
    )  # fmt: skip

    [message] = run.world.all_messages()
    assert json.loads(result.stdout) == {
        "member_agent_id": worker,
        "pane_id": "%1",
        "task_id": message.task_id,
        "notification_sent": True,
        "notification": {"state": "sent", "transport": "tmux", "reason": None},
    }


def test_nudge_of_the_administrator_is_a_placement_error(run, made) -> None:
    admin = made.administrator.agent_id

    result = nudge(run, made, admin, "--text", "x")

    assert result.exit_code == 1
    assert result.stderr == (
        f"Error: agent {admin} has no placement row;"
        " it was not spawned via `cafleet member create`.\n"
    )
    assert run.world.all_messages() == []


def test_nudge_by_an_inactive_sender(run, made) -> None:
    worker = run.world.member(made, "worker", pane_id="%1")

    result = nudge(run, made, worker, "--text", "x", sender=777)

    assert result.exit_code == 1
    assert result.stderr == "Error: Sender agent not found or not active in fleet: 777\n"


def test_nudge_checks_the_body_before_anything_else(run, made) -> None:
    result = nudge(run, made, 999, "--text", "  ")

    assert result.exit_code == 2
    assert result.stderr.endswith("Error: text may not be empty.\n")
