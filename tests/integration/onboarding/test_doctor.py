"""`cafleet doctor`: every section printed, exit code by findings, text and JSON."""

from __future__ import annotations

import json
import os
import shlex
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from cafleet.domain.agents.claude import CLAUDE_FLOOR

NO_MUX = (
    "no supported multiplexer detected: neither HERDR_ENV nor TMUX is set; run cafleet inside"
    " a tmux or herdr session, or set CAFLEET_MULTIPLEXER"
)
FLOOR = shlex.quote(",".join(CLAUDE_FLOOR))
NO_INSTALLS = "  (no skills install recorded; run 'cafleet setup')"


def section(stdout, name):
    """The indented lines under `<name>:`."""
    lines = stdout.splitlines()
    start = lines.index(f"{name}:") + 1
    block = []
    for line in lines[start:]:
        if not line.startswith("  "):
            break
        block.append(line)
    return block


def skill_row(line):
    """`  claude:      0.1.0 (<iso>) ok` -> ("claude", "0.1.0", "<iso>", "ok")."""
    label, rest = line[:15], line[15:]
    version, stamp, state = rest.split(" ")
    return label.strip().rstrip(":"), version, stamp.strip("()"), state


# --------------------------------------------------------------------------- outside tmux


def test_doctor_outside_a_multiplexer_prints_every_section_and_exits_1(installed, cli_version):
    result = installed.run("doctor")

    assert result.code == 1, result
    assert result.stderr == ""
    assert [line for line in result.lines if not line.startswith("  ")] == [
        "multiplexer:",
        "database:",
        "skills:",
        "agents:",
        "as the Director (docs/agents.md):",
        "hosts:",
        "on PATH:",
        "next: run cafleet inside a tmux (or herdr) pane",
    ]
    assert section(result.stdout, "multiplexer") == [f"  error:         {NO_MUX}"]
    # no fleet yet: no host has panes or a relay
    assert section(result.stdout, "hosts") == [f"  this host:  {os.uname().nodename}"]
    assert section(result.stdout, "database") == [
        f"  url:           sqlite:///{installed.db_path}",
        "  revision:      0012 (head)",
        "  journal_mode:  wal",
        "  pending:       0 deliveries",
    ]
    cli_line, claude_line = section(result.stdout, "skills")
    assert cli_line == f"  cli_version: {cli_version}"
    agent, version, stamp, state = skill_row(claude_line)
    assert (agent, version, state) == ("claude", cli_version, "ok")
    assert datetime.fromisoformat(stamp).tzinfo is not None


def test_doctor_json_outside_a_multiplexer(installed, cli_version):
    result = installed.run("--json", "doctor")

    assert result.code == 1, result
    assert result.stderr == ""
    assert result.stdout.count("\n") == 1
    report = json.loads(result.stdout)
    assert result.stdout == json.dumps(report, separators=(",", ":"), ensure_ascii=False) + "\n"
    assert list(report) == [
        "ok", "multiplexer", "database", "skills", "agents", "director", "hosts", "on_path",
        "next",
    ]  # fmt: skip
    assert report["hosts"] == {"this_host": os.uname().nodename, "hosts": []}
    assert report["next"] == "run cafleet inside a tmux (or herdr) pane"
    assert report["ok"] is False
    assert report["multiplexer"] == {
        "backend": None,
        "session": None,
        "window_id": None,
        "pane_id": None,
        "presence_var": None,
        "presence_value": None,
        "error": NO_MUX,
    }
    assert report["database"] == {
        "url": f"sqlite:///{installed.db_path}",
        "revision": "0012",
        "head": "0012",
        "journal_mode": "wal",
        "pending_deliveries": 0,
    }
    assert report["skills"]["cli_version"] == cli_version
    (install,) = report["skills"]["installs"]
    assert list(install) == ["coding_agent", "cafleet_version", "installed_at", "current"]
    assert install["coding_agent"] == "claude"
    assert install["cafleet_version"] == cli_version
    assert install["current"] is True
    assert datetime.fromisoformat(install["installed_at"]).tzinfo is not None


def test_doctor_json_flag_after_the_subcommand_equals_the_one_before(installed):
    after = installed.run("doctor", "--json")
    before = installed.run("--json", "doctor")

    assert after.code == before.code
    assert json.loads(after.stdout).keys() == json.loads(before.stdout).keys()


def test_doctor_with_the_database_missing(sandbox, cli_version):
    result = sandbox.run("doctor")

    assert result.code == 1, result
    assert result.stderr == ""
    assert section(result.stdout, "database") == [
        f"  url:           sqlite:///{sandbox.db_path}",
        "  revision:      missing (run 'cafleet setup')",
        "  journal_mode:  -",
        "  pending:       -",
    ]
    assert section(result.stdout, "skills") == [f"  cli_version: {cli_version}", NO_INSTALLS]
    assert not sandbox.db_path.exists()


def test_doctor_json_with_the_database_missing_uses_nulls(sandbox):
    result = sandbox.run("--json", "doctor")

    assert result.code == 1, result
    report = json.loads(result.stdout)
    assert report["ok"] is False
    assert report["database"] == {
        "url": f"sqlite:///{sandbox.db_path}",
        "revision": None,
        "head": "0012",
        "journal_mode": None,
        "pending_deliveries": None,
    }
    assert report["skills"]["installs"] == []


@pytest.mark.parametrize("revision", ["0001", "0002", "0003", "0004"])
def test_doctor_with_a_database_behind_head(installed, revision):
    installed.sql("UPDATE alembic_version SET version_num = ?", revision)

    result = installed.run("doctor")

    assert result.code == 1, result
    assert f"  revision:      {revision} (behind head 0012)" in result.lines
    report = json.loads(installed.run("--json", "doctor").stdout)
    assert (report["ok"], report["database"]["revision"]) == (False, revision)
    assert report["database"]["head"] == "0012"


def test_doctor_with_no_installs_recorded(migrated, cli_version):
    result = migrated.run("doctor")

    assert result.code == 1, result
    assert "  revision:      0012 (head)" in result.lines
    assert section(result.stdout, "skills") == [f"  cli_version: {cli_version}", NO_INSTALLS]


def test_doctor_marks_a_stale_record(installed):
    installed.record_version("0.0.1")

    result = installed.run("doctor")

    assert result.code == 1, result
    _, claude_line = section(result.stdout, "skills")
    agent, version, _, state = skill_row(claude_line)
    assert (agent, version, state) == ("claude", "0.0.1", "STALE")


def test_doctor_json_marks_a_stale_record_not_current(installed):
    installed.record_version("0.0.1")

    report = json.loads(installed.run("--json", "doctor").stdout)

    (install,) = report["skills"]["installs"]
    assert (install["cafleet_version"], install["current"]) == ("0.0.1", False)


def test_doctor_lists_every_install_in_coding_agent_order(migrated):
    migrated.ok("setup", "skill", "--agent", "opencode", "--agent", "claude", "--agent", "codex")
    migrated.record_version("0.0.1", "codex")

    _, *rows = section(migrated.run("doctor").stdout, "skills")

    assert [(agent, state) for agent, _, _, state in map(skill_row, rows)] == [
        ("claude", "ok"),
        ("codex", "STALE"),
        ("opencode", "ok"),
    ]


def seed_deliveries(sandbox, *deliveries):
    """One fleet, one agent, one message per (state, age in seconds) delivery."""
    now = datetime.now(UTC)
    stamp = now.isoformat(timespec="microseconds")
    sandbox.sql("INSERT INTO fleets (fleet_id, name, created_at) VALUES (1, 'f', ?)", stamp)
    sandbox.sql(
        "INSERT INTO agents (agent_id, fleet_id, name, description, status, registered_at,"
        " agent_card_json) VALUES (1, 1, 'a', 'd', 'active', ?, '{}')",
        stamp,
    )
    for task_id, (state, age) in enumerate(deliveries, start=1):
        created = (now - timedelta(seconds=age)).isoformat(timespec="microseconds")
        sandbox.sql(
            "INSERT INTO tasks (task_id, context_id, from_agent_id, to_agent_id, type,"
            " created_at, status_state, status_timestamp, text)"
            " VALUES (?, 1, 1, 1, 'unicast', ?, 'input_required', ?, 'hi')",
            task_id,
            created,
            created,
        )
        sandbox.sql(
            "INSERT INTO deliveries (task_id, recipient_agent_id, state, created_at)"
            " VALUES (?, 1, ?, ?)",
            task_id,
            state,
            created,
        )


def test_doctor_counts_deliveries_pending_for_more_than_a_minute(installed):
    seed_deliveries(installed, ("pending", 600), ("pending", 120), ("pending", 5), ("sent", 600))

    result = installed.run("doctor")

    assert "  pending:       2 deliveries" in result.lines
    report = json.loads(installed.run("--json", "doctor").stdout)
    assert report["database"]["pending_deliveries"] == 2


def test_doctor_validates_settings_first(installed):
    line = installed.fails("doctor", env={"CAFLEET_BROKER_PORT": "70000"})

    assert line == (
        "Error: invalid value for CAFLEET_BROKER_PORT: '70000'"
        " (expected an integer between 1 and 65535)"
    )


# --------------------------------------------------------------------------- inside tmux


@pytest.mark.tmux
def test_doctor_inside_tmux_with_everything_current_exits_0(installed, tmux, cli_version):
    tmux_var = tmux.env["TMUX"]

    result = installed.run("doctor", env=tmux.env)

    assert result.code == 0, result
    assert result.stderr == ""
    assert section(result.stdout, "multiplexer") == [
        "  backend:       tmux",
        "  session:       main",
        f"  window_id:     {tmux.window_id}",
        f"  pane_id:       {tmux.pane_id}",
        f"  presence:      TMUX={tmux_var}",
    ]
    assert tmux.window_id.startswith("@")
    assert tmux.pane_id.startswith("%")
    assert "  revision:      0012 (head)" in result.lines
    _, claude_line = section(result.stdout, "skills")
    assert skill_row(claude_line)[3] == "ok"


@pytest.mark.tmux
def test_doctor_json_inside_tmux(installed, tmux):
    result = installed.run("--json", "doctor", env=tmux.env)

    assert result.code == 0, result
    report = json.loads(result.stdout)
    assert report["ok"] is True
    assert report["multiplexer"] == {
        "backend": "tmux",
        "session": "main",
        "window_id": tmux.window_id,
        "pane_id": tmux.pane_id,
        "presence_var": "TMUX",
        "presence_value": tmux.env["TMUX"],
        "error": None,
    }


@pytest.mark.tmux
def test_doctor_inside_tmux_with_a_stale_record_exits_1(installed, tmux):
    installed.record_version("0.0.1")

    result = installed.run("doctor", env=tmux.env)

    assert result.code == 1, result
    assert "  backend:       tmux" in result.lines
    assert section(result.stdout, "skills")[-1].endswith(" STALE")


@pytest.mark.tmux
def test_doctor_inside_tmux_without_installs_exits_1(migrated, tmux):
    result = migrated.run("doctor", env=tmux.env)

    assert result.code == 1, result
    assert section(result.stdout, "skills")[-1] == NO_INSTALLS


@pytest.mark.tmux
def test_doctor_inside_tmux_with_the_database_missing_exits_1(sandbox, tmux):
    result = sandbox.run("doctor", env=tmux.env)

    assert result.code == 1, result
    assert "  backend:       tmux" in result.lines
    assert "  revision:      missing (run 'cafleet setup')" in result.lines


@pytest.mark.tmux
def test_doctor_with_tmux_set_but_no_pane_reports_the_multiplexer_error(installed, tmux):
    result = installed.run("doctor", env={"TMUX": tmux.env["TMUX"]})

    assert result.code == 1, result
    assert section(result.stdout, "multiplexer") == [
        "  error:         TMUX_PANE is not set; not running inside a tmux pane"
    ]


# --------------------------------------------------------------------------- agents


def fake_agents(sandbox, *names):
    """A directory holding an executable stub per name; PATH for doctor is only this one."""
    directory = sandbox.home.parent / "bin"
    directory.mkdir()
    for name in names:
        stub = directory / name
        stub.write_text("#!/bin/sh\nexit 0\n")
        stub.chmod(0o755)
    return directory


def test_doctor_shows_what_runs_for_each_agent(installed):
    bin_dir = fake_agents(installed, "claude", "codex")
    claude, codex = str(bin_dir / "claude"), str(bin_dir / "codex")
    database_dir = str(installed.db_path.parent)
    runtime_dir = f"{installed.env['XDG_RUNTIME_DIR']}/cafleet"

    result = installed.run("doctor", env={"PATH": str(bin_dir)})

    assert result.code == 1, result  # only because no multiplexer runs here
    assert section(result.stdout, "agents") == [
        f"  claude: {claude}",
        f"    runs:     {claude} --permission-mode dontAsk --allowedTools {FLOOR}"
        " --name '<name>' --settings '<hook settings>' -- '<prompt>'",
        "    ready by: hook, screen, wait",
        "    delivers: claude-hook, then herdr-prompt (on herdr), then keys",
        "    in front: claude",
        "    submit:   0.05s after the text, then checked",
        f"  codex: {codex}",
        f"    runs:     {codex} --no-daemon --ask-for-approval never --sandbox workspace-write"
        " -c allow_login_shell=false -c sandbox_workspace_write.network_access=true"
        f" --add-dir {database_dir} --add-dir {runtime_dir} -- '<prompt>'",
        "    ready by: screen, wait",
        "    delivers: codex-queue, then herdr-prompt (on herdr), then keys",
        "    in front: codex, node",
        "    submit:   0.05s after the text, then checked",
        "  opencode: not found on PATH",
        "    runs:     opencode --agent cafleet --port '<free port>' --prompt '<prompt>'",
        "    ready by: http, wait",
        "    delivers: opencode-http, then herdr-prompt (on herdr), then keys",
        "    in front: opencode, node, bun",
        "    submit:   0.1s after the text, then checked",
    ]


def test_doctor_json_lists_each_agent_profile(installed):
    bin_dir = fake_agents(installed, "opencode")

    report = json.loads(installed.run("--json", "doctor", env={"PATH": str(bin_dir)}).stdout)

    agents = report["agents"]
    assert [a["coding_agent"] for a in agents] == ["claude", "codex", "opencode"]
    for agent in agents:
        assert list(agent) == [
            "coding_agent", "binary", "argv", "foreground_names", "ready_rules", "channels",
            "submit_delay", "submit_checked", "notes",
        ]  # fmt: skip
        assert isinstance(agent["notes"], str) and agent["notes"]
    assert [a["submit_checked"] for a in agents] == [True, True, True]
    claude, codex, opencode = agents
    assert claude["binary"] is None
    assert claude["argv"] == [
        "claude", "--permission-mode", "dontAsk", "--allowedTools", ",".join(CLAUDE_FLOOR),
        "--name", "<name>", "--settings", "<hook settings>", "--", "<prompt>",
    ]  # fmt: skip
    assert (claude["foreground_names"], claude["ready_rules"], claude["submit_delay"]) == (
        ["claude"],
        ["hook", "screen", "wait"],
        0.05,
    )
    assert codex["binary"] is None
    assert codex["argv"][-2:] == ["--", "<prompt>"]
    assert codex["argv"][codex["argv"].index("--add-dir") + 1] == str(installed.db_path.parent)
    assert (codex["foreground_names"], codex["ready_rules"], codex["submit_delay"]) == (
        ["codex", "node"],
        ["screen", "wait"],
        0.05,
    )
    assert opencode["binary"] == str(bin_dir / "opencode")
    assert opencode["argv"] == [
        str(bin_dir / "opencode"), "--agent", "cafleet", "--port", "<free port>",
        "--prompt", "<prompt>",
    ]  # fmt: skip
    assert (opencode["foreground_names"], opencode["ready_rules"], opencode["submit_delay"]) == (
        ["opencode", "node", "bun"],
        ["http", "wait"],
        0.1,
    )


def test_doctor_agents_follow_the_settings(installed):
    bin_dir = fake_agents(installed)
    settings = {
        "PATH": str(bin_dir),
        "CAFLEET_READY_RULES_CLAUDE": "screen,wait",
        "CAFLEET_CHANNELS_CLAUDE": "keys",
        "CAFLEET_AGENT_COMMANDS_CLAUDE": "claude,2.1.332",
        "CAFLEET_AGENT_ARGS_CODEX": "--search --profile 'my profile'",
        "CAFLEET_SUBMIT_DELAY_OPENCODE": "1.5",
    }

    report = json.loads(installed.run("--json", "doctor", env=settings).stdout)
    text = installed.run("doctor", env=settings).stdout

    claude, codex, opencode = report["agents"]
    assert claude["ready_rules"] == ["screen", "wait"]
    assert "--settings" not in claude["argv"]  # no hooks with the hook rule and channel off
    assert claude["channels"] == ["keys"]  # `keys` alone: herdr's prompt is off too
    assert codex["channels"] == ["codex-queue", "herdr-prompt", "keys"]
    assert opencode["channels"] == ["opencode-http", "herdr-prompt", "keys"]
    assert claude["foreground_names"] == ["claude", "2.1.332"]
    assert codex["argv"][-5:] == ["--search", "--profile", "my profile", "--", "<prompt>"]
    assert opencode["submit_delay"] == 1.5
    agents = section(text, "agents")
    assert agents[1] == (
        f"    runs:     claude --permission-mode dontAsk --allowedTools {FLOOR}"
        " --name '<name>' -- '<prompt>'"
    )
    assert agents[2:5] == [
        "    ready by: screen, wait",
        "    delivers: keys",
        "    in front: claude, 2.1.332",
    ]
    assert agents[-1] == "    submit:   1.5s after the text, then checked"


def test_doctor_shows_no_port_for_opencode_when_nothing_asks_its_server(installed):
    settings = {
        "PATH": str(fake_agents(installed)),
        "CAFLEET_READY_RULES_OPENCODE": "wait",
        "CAFLEET_CHANNELS_OPENCODE": "keys",
    }

    report = json.loads(installed.run("--json", "doctor", env=settings).stdout)

    opencode = report["agents"][2]
    assert opencode["ready_rules"] == ["wait"]
    assert opencode["argv"] == ["opencode", "--agent", "cafleet", "--prompt", "<prompt>"]


@pytest.mark.tmux
def test_doctor_agents_do_not_decide_the_exit_code(installed, tmux):
    bin_dir = fake_agents(installed)  # no agent binary found at all
    env = {**tmux.env, "PATH": f"{bin_dir}{os.pathsep}{Path(tmux.binary).parent}"}

    result = installed.run("--json", "doctor", env=env)

    assert result.code == 0, result
    report = json.loads(result.stdout)
    assert report["ok"] is True
    assert [a["binary"] for a in report["agents"]] == [None, None, None]


def test_doctor_says_what_each_agent_needs_to_run_cafleet_as_the_director(installed):
    settings = installed.agent_home("claude") / "settings.json"
    config = installed.home / ".codex" / "config.toml"

    before = section(installed.run("doctor").stdout, "as the Director (docs/agents.md)")
    settings.write_text('{"permissions": {"allow": ["Bash(cafleet:*)"]}}')
    after = json.loads(installed.run("--json", "doctor").stdout)["director"]

    roots = f'"{installed.db_path.parent}", "{installed.env["XDG_RUNTIME_DIR"]}/cafleet"'
    assert before == [
        f'  claude: missing: add "Bash(cafleet:*)" to permissions.allow in {settings}',
        f"  codex: missing: set network_access = true and writable_roots = [{roots}] under"
        f" [sandbox_workspace_write] in {config}",
    ]
    assert after[0] == {
        "coding_agent": "claude",
        "granted": True,
        "detail": f"allow rule for cafleet in {settings}",
    }
