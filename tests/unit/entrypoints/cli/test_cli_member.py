"""`cafleet member show` and `member list` through click on the fakes."""

from __future__ import annotations

import json

import pytest

from cafleet.domain.fleet import CardKind
from cafleet.domain.placement import CodingAgent, Multiplexer

TS = "2026-01-01T08:00:00.000000+00:00"
SOCKET = "tmux-test.sock"  # the fake tmux server the harness's fleets live on


@pytest.fixture
def made(run):
    return run.world.fleet("alpha")


def placed(run, made, name: str = "worker", *, pane_id: str | None = "%1", **changes) -> int:
    """A registered member whose pane is open on the fleet's fake tmux server."""
    agent_id = run.world.member(made, name, pane_id=pane_id, **changes)
    if pane_id is not None:
        run.pane_drivers(Multiplexer.TMUX, SOCKET).add_pane("claude", pane_id=pane_id)
    return agent_id


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
    worker = placed(run, made, "worker", pane_id="%1")

    result = member_list(run, made)

    assert result.stdout == (
        "1 member:\n"
        "  agent_id  name    status  agent    coding_agent  session  window_id  pane_id"
        "  created_at\n"
        "  --------  ------  ------  -------  ------------  -------  ---------  -------  "
        "--------------------------------\n"
        f"  {worker:<8}  worker  active  unknown  claude        main     @0         %1       {TS}\n"
    )


def test_list_counts_several_members_in_id_order_and_shows_pending_panes(run, made) -> None:
    first = placed(run, made, "builder", pane_id="%1", coding_agent=CodingAgent.OPENCODE)
    second = placed(run, made, "watch", pane_id=None, card_kind=CardKind.MONITORING_MEMBER)

    lines = member_list(run, made).stdout.splitlines()

    assert lines[0] == "2 members:"
    assert lines[1] == (
        "  agent_id  name     status  agent    coding_agent  session  window_id  pane_id"
        "  created_at"
    )
    assert lines[3] == (
        f"  {first:<8}  builder  active  unknown  opencode      main     @0         %1       {TS}"
    )
    assert lines[4] == (
        f"  {second:<8}  watch    active  -        claude        main     @0         -        {TS}"
    )


def test_list_all_shows_every_active_agent_with_its_kind(run, made) -> None:
    worker = placed(run, made, "worker", pane_id="%1", coding_agent=CodingAgent.CODEX)
    director, admin = made.director.agent_id, made.administrator.agent_id

    result = member_list(run, made, "--all")

    assert result.stdout == (
        "3 agents:\n"
        "  agent_id  name           status  kind           agent    coding_agent  session"
        "  window_id  pane_id  created_at\n"
        "  --------  -------------  ------  -------------  -------  ------------  -------"
        "  ---------  -------  --------------------------------\n"
        f"  {director:<8}  Director       active  director       -        claude        main   "
        f"  @0         %0       {TS}\n"
        f"  {admin:<8}  Administrator  active  administrator  -        -             -      "
        "  -          -        -\n"
        f"  {worker:<8}  worker         active  member         unknown  codex         main   "
        f"  @0         %1       {TS}\n"
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
    worker = placed(run, made, "worker", pane_id="%1")
    quiet = placed(run, made, "quiet", pane_id="%2")
    w = str(worker)
    run("message", "send", "--fleet-id", fid, "--agent-id", director, "--to", w, "--text", "go")
    run.clock.advance(60)
    run("message", "send", "--fleet-id", fid, "--agent-id", w, "--to", director, "--text", "ok")
    run.clock.advance(60)
    task = next(m.task_id for m in run.world.all_messages() if m.to_agent_id == worker)
    run("message", "ack", "--fleet-id", fid, "--agent-id", w, "--task-id", str(task))
    run.clock.advance(185)

    result = member_list(run, made, "--activity")
    as_json = json.loads(run("--json", "member", "list", "--fleet-id", fid, "--activity").stdout)

    assert [a["idle"] for a in as_json] == [245, None]  # whole seconds since 08:01:00, as upstream
    assert result.stdout == (
        "2 members:\n"
        "  agent_id  name    status  agent    last_sent  last_recv  last_ack  idle\n"
        "  --------  ------  ------  -------  ---------  ---------  --------  ----\n"
        f"  {worker:<8}  worker  active  unknown  08:01:00   08:00:00   08:02:00  4m\n"
        f"  {quiet:<8}  quiet   active  unknown  -          -          -         -\n"
    )


def test_list_json_default_all_and_activity(run, made) -> None:
    worker = placed(run, made, "worker", pane_id="%1")
    placement = {
        "director_agent_id": made.director.agent_id,
        "backend": "tmux",
        "mux_session": "main",
        "mux_window_id": "@0",
        "mux_pane_id": "%1",
        "coding_agent": "claude",
        "created_at": TS,
        "ready_at": TS,
        "ready_rule": "hook",
        "host": None,
    }
    base = {
        "agent_id": worker,
        "name": "worker",
        "description": "worker description",
        "status": "active",
        "registered_at": TS,
        "placement": placement,
        "pane_state": "running",
        "agent_status": "unknown",  # no launch pad: nothing says
        "agent_status_since": None,
        "agent_status_note": None,
    }
    fid = str(made.fleet.fleet_id)

    default = json.loads(run("--json", "member", "list", "--fleet-id", fid).stdout)
    everyone = json.loads(run("--json", "member", "list", "--fleet-id", fid, "--all").stdout)
    activity = json.loads(run("--json", "member", "list", "--fleet-id", fid, "--activity").stdout)

    assert default == [base]
    assert [a["kind"] for a in everyone] == ["director", "administrator", "member"]
    assert everyone[1]["placement"] is None
    assert [a["pane_state"] for a in everyone] == [None, None, "running"]  # members only
    assert [a["agent_status"] for a in everyone] == [None, None, "unknown"]
    assert everyone[2] == {**base, "kind": "member"}
    assert activity == [
        {**base, "last_sent": None, "last_recv": None, "last_ack": None, "idle": None}
    ]


def test_list_json_of_no_members_is_an_empty_list(run, made) -> None:
    assert run("--json", "member", "list", "--fleet-id", str(made.fleet.fleet_id)).stdout == "[]\n"


def test_list_takes_json_after_the_subcommand(run, made) -> None:
    result = member_list(run, made, "--json")

    assert result.exit_code == 0, result.output
    assert (
        result.stdout
        == run("--json", "member", "list", "--fleet-id", str(made.fleet.fleet_id)).stdout
    )


def test_list_requires_a_fleet_id(run) -> None:
    result = run("member", "list")

    assert result.exit_code == 1
    assert result.stderr == (
        "Error: --fleet-id <int> is required for this subcommand unless CAFLEET_FLEET_ID"
        " is set. Create a fleet with 'cafleet fleet create' and pass its id.\n"
    )


def test_list_of_a_deleted_fleet_is_its_record_under_the_deletion_note(run, made) -> None:
    worker = placed(run, made, "worker", pane_id="%1")
    run("fleet", "delete", "--fleet-id", str(made.fleet.fleet_id), "--keep-panes")
    deleted_at = run.clock.now().isoformat(timespec="microseconds")

    text = member_list(run, made).stdout.splitlines()
    fid = str(made.fleet.fleet_id)
    listed = json.loads(run("--json", "member", "list", "--fleet-id", fid, "--all").stdout)

    assert text[0] == f"(fleet deleted {deleted_at}; its history is read-only)"
    assert text[1] == "1 member:"
    assert text[4].split()[:3] == [str(worker), "worker", "deregistered"]
    assert [(m["name"], m["status"], m["kind"]) for m in listed] == [
        ("Director", "deregistered", "director"),
        ("Administrator", "deregistered", "administrator"),
        ("worker", "deregistered", "member"),
    ]
    assert {m["fleet_deleted_at"] for m in listed} == {deleted_at}


def test_show_in_a_deleted_fleet_says_so(run, made) -> None:
    worker = placed(run, made, "worker", pane_id="%1")
    run("fleet", "delete", "--fleet-id", str(made.fleet.fleet_id), "--keep-panes")
    deleted_at = run.clock.now().isoformat(timespec="microseconds")

    text = member_show(run, made, worker).stdout
    fid = str(made.fleet.fleet_id)
    shown = json.loads(
        run("--json", "member", "show", "--fleet-id", fid, "--member-id", str(worker)).stdout
    )

    note = f"(fleet deleted {deleted_at}; its history is read-only)"
    assert text == f"{worker} worker deregistered {note}\n"
    assert (shown["status"], shown["placement"], shown["fleet_deleted_at"]) == (
        "deregistered",
        None,
        deleted_at,
    )


@pytest.mark.parametrize(
    "verb",
    [
        ("delete",),
        ("capture",),
        ("exec", "ls"),
        ("ping",),
        ("nudge", "--agent-id", "1", "--text", "hi"),
    ],
)
def test_pane_verbs_in_a_deleted_fleet_are_refused_as_read_only(run, made, verb) -> None:
    worker = placed(run, made, "worker", pane_id="%1")
    fid = str(made.fleet.fleet_id)
    run("fleet", "delete", "--fleet-id", fid, "--keep-panes")

    result = run("member", verb[0], "--fleet-id", fid, "--member-id", str(worker), *verb[1:])

    assert result.exit_code == 1
    assert result.stderr == f"Error: fleet {fid} is deleted; its history is read-only\n"


# -- show -------------------------------------------------------------------------------------


def test_show_compact_is_id_name_status(run, made) -> None:
    worker = placed(run, made, "worker", pane_id="%1")

    result = member_show(run, made, worker)

    assert (result.exit_code, result.stdout) == (0, f"{worker} worker active\n")


def test_show_full_of_a_member(run, made) -> None:
    worker = placed(run, made, "worker", pane_id="%1", skills=("review", "deploy"))

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
        "    coding_agent:      claude\n"
        "    backend:           tmux\n"
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
    pending = placed(run, made, "pending", pane_id=None)

    lines = member_show(run, made, pending, "--full").stdout.splitlines()

    assert "    pane_id:           -" in lines


def test_show_full_truncates_the_description_to_sixty_codepoints(run, made) -> None:
    worker = placed(run, made, "worker", description="é" * 61)

    lines = member_show(run, made, worker, "--full").stdout.splitlines()

    assert lines[2] == "  description: " + "é" * 60 + "…"


def test_show_json(run, made) -> None:
    worker = placed(run, made, "worker", pane_id="%1", skills=("review",))

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
            "ready_at": TS,
            "ready_rule": "hook",
            "host": None,
        },
        "pane_state": "running",
        "agent_status": "unknown",
        "agent_status_since": None,
        "agent_status_note": None,
    }


def test_show_json_of_a_starting_member_has_no_ready_time(run, made) -> None:
    worker = placed(run, made, "worker", pane_id="%1", starting=True)

    result = run(
        "--json", "member", "show", "--fleet-id", str(made.fleet.fleet_id),
        "--member-id", str(worker),
    )  # fmt: skip

    shown = json.loads(result.stdout)
    placement = shown["placement"]
    assert (placement["mux_pane_id"], placement["ready_at"], placement["ready_rule"]) == (
        "%1",
        None,
        None,
    )
    assert shown["pane_state"] == "starting"


# -- the pane as its multiplexer sees it -----------------------------------------------------


def test_list_shows_a_member_whose_pane_closed_and_one_still_starting(run, made) -> None:
    gone = run.world.member(made, "gone", pane_id="%5")  # no such pane on the server
    starting = placed(run, made, "starting", pane_id="%6", starting=True)
    running = placed(run, made, "running", pane_id="%7")
    pending = placed(run, made, "pending", pane_id=None)

    lines = member_list(run, made).stdout.splitlines()

    statuses = {int(line.split()[0]): line.split()[2] for line in lines[3:]}
    assert statuses == {
        gone: "pane-gone",
        starting: "starting",
        running: "active",
        pending: "active",  # no pane yet: nothing to ask the multiplexer
    }


def test_show_of_a_member_whose_pane_closed(run, made) -> None:
    gone = run.world.member(made, "gone", pane_id="%5")

    compact = member_show(run, made, gone)
    shown = json.loads(
        run("--json", "member", "show", "--fleet-id", str(made.fleet.fleet_id),
            "--member-id", str(gone)).stdout
    )  # fmt: skip

    assert compact.stdout == f"{gone} gone pane-gone\n"
    assert (shown["status"], shown["pane_state"]) == ("active", "gone")


def test_a_dead_pane_counts_as_gone(run, made) -> None:
    worker = placed(run, made, "worker", pane_id="%1")
    run.pane_drivers(Multiplexer.TMUX, SOCKET).panes["%1"].dead = True

    assert member_show(run, made, worker).stdout == f"{worker} worker pane-gone\n"


def test_an_unreachable_multiplexer_leaves_the_registry_status(run, made) -> None:
    worker = placed(run, made, "worker", pane_id="%1")
    run.pane_drivers(Multiplexer.TMUX, SOCKET).unreachable = "server exited"

    result = run(
        "--json", "member", "list", "--fleet-id", str(made.fleet.fleet_id),
    )  # fmt: skip

    assert member_show(run, made, worker).stdout == f"{worker} worker active\n"
    assert json.loads(result.stdout)[0]["pane_state"] is None


@pytest.mark.parametrize("case", ["unknown", "other-fleet", "deregistered"])
def test_show_of_an_agent_outside_reach_is_one_error(run, made, case: str) -> None:
    other = run.world.fleet("beta")
    worker = placed(run, made, "worker", pane_id="%1")
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
    worker = placed(run, made, "worker", pane_id="%1")

    result = nudge(run, made, worker, "--text", "wake up")

    [message] = run.world.all_messages()
    assert result.exit_code == 0
    assert (
        result.stdout == f"Nudged worker (%1) — task {message.task_id} queued, preview submitted.\n"
    )
    assert message.text == "wake up"


def test_nudge_of_a_pending_member(run, made) -> None:
    pending = placed(run, made, "newbie", pane_id=None)

    result = nudge(run, made, pending, "--text", "hi")

    [message] = run.world.all_messages()
    assert result.stdout == f"Nudged newbie — no pane; task {message.task_id} queued.\n"


def test_nudge_names_the_reason_when_the_preview_was_not_delivered(run, made) -> None:
    director = made.director.agent_id

    result = nudge(run, made, director, "--text", "note to self", sender=director)

    [message] = run.world.all_messages()
    assert result.stdout == (
        f"Nudged Director (%0) — task {message.task_id} queued;"
        " preview skipped: the recipient is the sender.\n"
    )


def test_nudge_json(run, made) -> None:
    worker = placed(run, made, "worker", pane_id="%1")

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
    worker = placed(run, made, "worker", pane_id="%1")

    result = nudge(run, made, worker, "--text", "x", sender=777)

    assert result.exit_code == 1
    assert result.stderr == "Error: Sender agent not found or not active in fleet: 777\n"


def test_nudge_checks_the_body_before_anything_else(run, made) -> None:
    result = nudge(run, made, 999, "--text", "  ")

    assert result.exit_code == 2
    assert result.stderr.endswith("Error: text may not be empty.\n")


def test_a_member_whose_hooks_are_off_says_so_in_its_status() -> None:
    from datetime import UTC, datetime

    from cafleet.application.members.registry import MemberView
    from cafleet.domain.agents.status import AgentStatus, StatusReport
    from cafleet.domain.fleet import Agent, AgentKind
    from cafleet.entrypoints.cli.member_registry import agent_word, member_json

    now = datetime(2026, 1, 1, 8, 0, tzinfo=UTC)
    told = StatusReport(AgentStatus.UNKNOWN, note="hooks off")
    view = MemberView(Agent(3, 1, "w", "d", now), AgentKind.MEMBER, None, agent_status=told)

    assert agent_word(view, now) == "unknown (hooks off)"
    assert member_json(view)["agent_status_note"] == "hooks off"
