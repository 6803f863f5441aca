"""`cafleet fleet ...` through click on the fakes."""

from __future__ import annotations

import json
import re

import pytest

from cafleet.adapters.fake.locator import FakePaneLocator
from cafleet.domain.fleet import AgentStatus
from cafleet.domain.placement import CodingAgent, Multiplexer

TS = "2026-01-01T08:00:00.000000+00:00"


def only_fleet(run):
    [fleet] = run.store.tables.fleets.values()
    return fleet


# -- create -----------------------------------------------------------------------------------


def test_create_prints_fleet_director_and_admin_ids(run) -> None:
    result = run("fleet", "create", "--name", "my-project")

    assert result.exit_code == 0
    match = re.fullmatch(r"(\d+) director=(\d+) admin=(\d+)\n", result.stdout)
    assert match is not None
    fleet_id, director, admin = map(int, match.groups())
    fleet = run.world.get_fleet(fleet_id)
    assert fleet.name == "my-project"
    assert fleet.director_agent_id == director
    assert run.world.get_agent(admin).name == "Administrator"
    assert run.world.get_placement(director).coding_agent is CodingAgent.CLAUDE


def test_create_full_prints_seven_labels_padded_to_eighteen(run) -> None:
    result = run("fleet", "create", "--name", "my-project", "--full")

    fleet = only_fleet(run)
    admin = next(a for a in run.store.tables.agents.values() if a.name == "Administrator")
    assert result.stdout == (
        f"fleet_id:         {fleet.fleet_id}\n"
        f"director:         {fleet.director_agent_id}\n"
        "name:             my-project\n"
        f"created_at:       {TS}\n"
        "director_name:    Director\n"
        "pane:             main:@0:%0\n"
        f"administrator:    {admin.agent_id}\n"
    )


def test_create_json_has_the_fleet_director_and_placement(run) -> None:
    result = run("--json", "fleet", "create", "--name", "my-project", "--coding-agent", "codex")

    fleet = only_fleet(run)
    admin = next(a for a in run.store.tables.agents.values() if a.name == "Administrator")
    director = fleet.director_agent_id
    assert result.stdout == (
        f'{{"fleet_id":{fleet.fleet_id},"name":"my-project","created_at":"{TS}",'
        f'"administrator_agent_id":{admin.agent_id},'
        f'"director":{{"agent_id":{director},"name":"Director",'
        '"description":"Root Director for this fleet",'
        f'"registered_at":"{TS}",'
        '"placement":{"director_agent_id":null,"backend":"tmux","mux_session":"main",'
        '"mux_window_id":"@0","mux_pane_id":"%0","coding_agent":"codex",'
        f'"created_at":"{TS}","ready_at":"{TS}","ready_rule":"director","host":null}}}}}}\n'
    )


def test_create_accepts_a_local_json_after_the_subcommand(run) -> None:
    local = run("fleet", "create", "--name", "a", "--json")
    global_ = run("--json", "fleet", "create", "--name", "a")

    local_body, global_body = json.loads(local.stdout), json.loads(global_.stdout)
    assert local.exit_code == global_.exit_code == 0
    assert (
        set(local_body)
        == set(global_body)
        == {
            "fleet_id",
            "name",
            "created_at",
            "administrator_agent_id",
            "director",
        }
    )


def test_create_records_the_declared_coding_agent(run) -> None:
    run("fleet", "create", "--name", "x", "--coding-agent", "opencode")

    assert run.world.get_placement(only_fleet(run).director_agent_id).coding_agent is (
        CodingAgent.OPENCODE
    )


def test_create_rejects_an_unknown_coding_agent(run) -> None:
    result = run("fleet", "create", "--name", "x", "--coding-agent", "vim")

    assert result.exit_code == 2
    assert "Invalid value for '--coding-agent'" in result.stderr
    assert run.store.tables.fleets == {}


def test_create_requires_a_name(run) -> None:
    result = run("fleet", "create")

    assert result.exit_code == 2
    assert "Missing option '--name'" in result.stderr


def test_create_outside_a_multiplexer_reports_the_cause_and_writes_nothing(run) -> None:
    cause = "TMUX_PANE is not set; not running inside a tmux pane"
    run.locator = FakePaneLocator(error=cause)

    result = run("fleet", "create", "--name", "x")

    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr == (
        f"Error: cafleet fleet create must be run inside a tmux or herdr session ({cause})\n"
    )
    assert run.store.tables.fleets == {}
    assert run.store.tables.agents == {}


# -- list -------------------------------------------------------------------------------------


def test_list_of_no_fleets(run) -> None:
    assert run("fleet", "list").stdout == "No fleets found.\n"
    assert run("fleet", "list", "--json").stdout == "[]\n"


def test_list_is_a_content_sized_table_newest_first(run) -> None:
    old = run.world.fleet("a")
    run.world.member(old, "w", pane_id="%1")
    run.clock.advance(60)
    new = run.world.fleet("a-much-longer-name")

    result = run("fleet", "list")

    assert result.exit_code == 0
    assert result.stdout == (
        "FLEET_ID  DIRECTOR  NAME                AGENTS  CREATED_AT\n"
        "--------  --------  ------------------  ------  --------------------------------\n"
        f"{new.fleet.fleet_id}         {new.director.agent_id}         a-much-longer-name"
        "  2       2026-01-01T08:01:00.000000+00:00\n"
        f"{old.fleet.fleet_id}         {old.director.agent_id}         a                 "
        f"  3       {TS}\n"
    )


def test_list_leaves_out_deleted_fleets_and_counts_active_agents(run) -> None:
    kept = run.world.fleet("kept")
    gone_member = run.world.member(kept, "gone", pane_id="%1")
    run.world.deregister(gone_member)
    deleted = run.world.fleet("deleted")
    run("fleet", "delete", "--fleet-id", str(deleted.fleet.fleet_id))

    result = run("--json", "fleet", "list")

    assert json.loads(result.stdout) == [
        {
            "fleet_id": kept.fleet.fleet_id,
            "director_agent_id": kept.director.agent_id,
            "name": "kept",
            "created_at": TS,
            "agent_count": 2,
            "deleted_at": None,
        }
    ]


def test_list_all_adds_deleted_fleets_with_their_deletion_time(run) -> None:
    kept = run.world.fleet("kept")
    deleted = run.world.fleet("deleted")
    run("fleet", "delete", "--fleet-id", str(deleted.fleet.fleet_id))

    listed = json.loads(run("--json", "fleet", "list", "--all").stdout)
    text = run("fleet", "list", "--all").stdout.splitlines()

    assert [(r["fleet_id"], r["deleted_at"]) for r in listed] == [
        (deleted.fleet.fleet_id, TS),
        (kept.fleet.fleet_id, None),
    ]
    assert text[0].split() == ["FLEET_ID", "DIRECTOR", "NAME", "AGENTS", "CREATED_AT", "DELETED_AT"]
    assert text[2].split()[2:] == ["deleted", "0", TS, TS]
    assert text[3].split()[2:] == ["kept", "2", TS, "-"]


# -- show -------------------------------------------------------------------------------------


def test_show_aligns_the_labels(run) -> None:
    made = run.world.fleet("my-project")

    result = run("fleet", "show", "--fleet-id", str(made.fleet.fleet_id))

    assert result.stdout == (
        f"fleet_id:   {made.fleet.fleet_id}\nname:       my-project\ncreated_at: {TS}\n"
    )


def test_show_of_a_deleted_fleet_adds_deleted_at(run) -> None:
    made = run.world.fleet("my-project")
    run.clock.advance(5)
    run("fleet", "delete", "--fleet-id", str(made.fleet.fleet_id))

    result = run("fleet", "show", "--fleet-id", str(made.fleet.fleet_id))

    assert result.exit_code == 0
    assert result.stdout.splitlines()[-1] == "deleted_at: 2026-01-01T08:00:05.000000+00:00"
    assert len(result.stdout.splitlines()) == 4


def test_show_json(run) -> None:
    made = run.world.fleet("my-project")

    result = run("fleet", "show", "--fleet-id", str(made.fleet.fleet_id), "--json")

    assert result.stdout == (
        f'{{"fleet_id":{made.fleet.fleet_id},"name":"my-project","created_at":"{TS}",'
        f'"deleted_at":null,"director_agent_id":{made.director.agent_id}}}\n'
    )


@pytest.mark.parametrize("command", ["show", "delete"])
def test_show_and_delete_of_an_unknown_fleet(run, command: str) -> None:
    result = run("fleet", command, "--fleet-id", "42")

    assert result.exit_code == 1
    assert result.stderr == "Error: fleet '42' not found.\n"


@pytest.mark.parametrize("command", ["show", "delete"])
def test_show_and_delete_require_a_fleet_id(run, command: str) -> None:
    result = run("fleet", command)

    assert result.exit_code == 1
    assert result.stderr == (
        "Error: --fleet-id <int> is required for this subcommand unless CAFLEET_FLEET_ID"
        " is set. Create a fleet with 'cafleet fleet create' and pass its id.\n"
    )


def test_a_non_integer_fleet_id_is_a_usage_error(run) -> None:
    result = run("fleet", "show", "--fleet-id", "one")

    assert result.exit_code == 2
    assert result.stderr == (
        "Usage: cafleet fleet show [OPTIONS]\n"
        "Try 'cafleet fleet show --help' for help.\n"
        "\n"
        "Error: Invalid value for '--fleet-id': 'one' is not an integer between 1 and"
        " 9223372036854775807.\n"
    )


# -- delete -----------------------------------------------------------------------------------


def test_delete_reports_the_deregistered_count_and_deregisters(run) -> None:
    made = run.world.fleet("alpha")
    run.world.agent(made.fleet.fleet_id, "loose")

    result = run("fleet", "delete", "--fleet-id", str(made.fleet.fleet_id))

    assert result.exit_code == 0
    assert result.stdout == f"Deleted fleet {made.fleet.fleet_id}. Deregistered 3 agents.\n"
    assert run.world.get_fleet(made.fleet.fleet_id).is_deleted
    assert run.world.get_agent(made.director.agent_id).status is AgentStatus.DEREGISTERED


def test_delete_twice_reports_zero(run) -> None:
    made = run.world.fleet("alpha")
    run("fleet", "delete", "--fleet-id", str(made.fleet.fleet_id))

    again = run("fleet", "delete", "--fleet-id", str(made.fleet.fleet_id), "--json")

    assert again.exit_code == 0
    assert again.stdout == f'{{"fleet_id":{made.fleet.fleet_id},"deregistered":0,"panes":[]}}\n'


def test_delete_reports_member_panes(run) -> None:
    made = run.world.fleet("alpha")
    server = run.pane_drivers(Multiplexer.TMUX, "tmux-test.sock")
    server.add_pane("claude", pane_id="%0")
    server.add_pane("bash", pane_id="%1")
    worker = run.world.member(made, "worker", pane_id="%1")
    gone = run.world.member(made, "gone", pane_id="%2")

    text = run("fleet", "delete", "--fleet-id", str(made.fleet.fleet_id))

    assert text.stdout == (
        f"Deleted fleet {made.fleet.fleet_id}. Deregistered 4 agents.\n"
        "  panes: 0 closed, 1 killed, 1 already gone\n"
    )
    assert "%0" in server.panes  # the Director's pane is never closed
    assert "%1" not in server.panes
    for agent_id in (worker, gone):
        assert run.world.get_agent(agent_id).status is AgentStatus.DEREGISTERED


def test_delete_json_lists_member_panes(run) -> None:
    made = run.world.fleet("alpha")
    worker = run.world.member(made, "worker", pane_id="%1")

    result = run("--json", "fleet", "delete", "--fleet-id", str(made.fleet.fleet_id))

    assert json.loads(result.stdout) == {
        "fleet_id": made.fleet.fleet_id,
        "deregistered": 3,
        "panes": [{"agent_id": worker, "pane_id": "%1", "status": "gone"}],
    }


def test_delete_keep_panes_leaves_them_running(run) -> None:
    made = run.world.fleet("alpha")
    server = run.pane_drivers(Multiplexer.TMUX, "tmux-test.sock")
    pane = server.add_pane("claude", pane_id="%1")
    run.world.member(made, "worker", pane_id="%1")

    result = run("fleet", "delete", "--fleet-id", str(made.fleet.fleet_id), "--keep-panes")

    assert result.stdout.splitlines()[-1] == "  panes: 1 left running (--keep-panes)"
    assert pane.typed == []
    assert "%1" in server.panes


def test_delete_warns_about_a_pane_it_could_not_close_and_still_deletes(run) -> None:
    made = run.world.fleet("alpha")
    server = run.pane_drivers(Multiplexer.TMUX, "tmux-test.sock")
    server.add_pane("claude", pane_id="%1")
    run.world.member(made, "worker", pane_id="%1")
    server.unreachable = "server exited"

    result = run("fleet", "delete", "--fleet-id", str(made.fleet.fleet_id))

    assert result.exit_code == 0
    assert result.stderr.startswith("Warning: could not close pane %1: ")
    assert "server exited" in result.stderr
    assert run.world.get_fleet(made.fleet.fleet_id).is_deleted
