"""Root command conventions: --version, --help, global --json, settings and error lines.

The error mapping is described in docs/internals/cli.md.
"""

from __future__ import annotations

import pytest

from cafleet import __version__
from cafleet.application.fleets import FleetService

BROKEN_SETTINGS = {
    "CAFLEET_MAX_TEXT_LEN": "abc",
    "CAFLEET_BROKER_PORT": "70000",
    "CAFLEET_SUBMIT_DELAY_CODEX": "x",
    "CAFLEET_DATABASE_URL": "mysql://nowhere/db",
}


def test_version_prints_the_version(run) -> None:
    result = run("--version")

    assert (result.exit_code, result.stdout) == (0, f"cafleet {__version__}\n")


def test_version_ignores_json(run) -> None:
    assert run("--json", "--version").stdout == f"cafleet {__version__}\n"


@pytest.mark.parametrize(
    "args",
    [
        ["--version"],
        ["--help"],
        ["fleet", "--help"],
        ["fleet", "create", "--help"],
        ["message", "send", "--help"],
        ["member", "list", "--help"],
    ],
)
def test_version_and_help_succeed_with_every_setting_invalid(run, args: list[str]) -> None:
    result = run(*args, env=BROKEN_SETTINGS)

    assert result.exit_code == 0
    assert result.stderr == ""


def test_help_starts_with_the_product_line_and_lists_the_commands(run) -> None:
    result = run("--help")

    assert result.stdout.startswith("Usage: cafleet [OPTIONS] COMMAND [ARGS]...\n")
    assert "CAFleet — CLI for the message broker and agent registry." in result.stdout
    commands = result.stdout.split("Commands:\n", 1)[1]
    for name in ("fleet", "member", "message", "setup"):
        assert f"\n  {name} " in f"\n{commands}"


@pytest.mark.parametrize(
    ("env", "line"),
    [
        (
            {"CAFLEET_MAX_TEXT_LEN": "abc"},
            "Error: invalid value for CAFLEET_MAX_TEXT_LEN: 'abc'"
            " (expected an integer between 1 and 1000000)\n",
        ),
        (
            {"CAFLEET_BROKER_PORT": "70000"},
            "Error: invalid value for CAFLEET_BROKER_PORT: '70000'"
            " (expected an integer between 1 and 65535)\n",
        ),
        (
            {"CAFLEET_SUBMIT_DELAY_CODEX": "x"},
            "Error: invalid value for CAFLEET_SUBMIT_DELAY_CODEX: 'x'"
            " (expected a number of seconds between 0 and 10)\n",
        ),
        (
            {"CAFLEET_DATABASE_URL": "mysql://nowhere/db"},
            "Error: unsupported database URL 'mysql://nowhere/db';"
            " only sqlite:/// and postgresql+psycopg:// URLs are supported\n",
        ),
    ],
)
@pytest.mark.parametrize(
    "args",
    [
        ["fleet", "list"],
        ["fleet", "create", "--name", "x"],
        ["member", "list", "--fleet-id", "1"],
        ["message", "poll", "--fleet-id", "1", "--agent-id", "1"],
    ],
)
def test_an_invalid_setting_is_one_error_line_and_exit_1(
    run, env: dict[str, str], line: str, args: list[str]
) -> None:
    result = run(*args, env=env)

    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr == line
    assert run.store.tables.fleets == {}


def test_settings_are_validated_before_the_text_file_is_read(run, tmp_path) -> None:
    missing = tmp_path / "missing.txt"

    result = run(
        "message", "send", "--fleet-id", "1", "--agent-id", "1", "--to", "2",
        "--text-file", str(missing),
        env={"CAFLEET_MAX_TEXT_LEN": "0"},
    )  # fmt: skip

    assert result.stderr == (
        "Error: invalid value for CAFLEET_MAX_TEXT_LEN: '0'"
        " (expected an integer between 1 and 1000000)\n"
    )


def test_global_json_goes_before_the_subcommand(run) -> None:
    run.world.fleet("alpha")

    before = run("--json", "fleet", "list")
    after = run("fleet", "--json", "list")

    assert before.exit_code == 0
    assert before.stdout.startswith('[{"fleet_id":')
    assert after.exit_code == 2
    assert "No such option '--json'" in after.stderr


def test_a_group_without_a_subcommand_prints_its_help_and_exits_2(run) -> None:
    result = run("fleet")

    assert result.exit_code == 2
    assert "Usage: cafleet fleet [OPTIONS] COMMAND [ARGS]..." in result.stdout + result.stderr


def test_an_unknown_command_is_a_usage_error(run) -> None:
    result = run("fleets")

    assert result.exit_code == 2
    assert result.stderr.startswith("Usage: cafleet [OPTIONS] COMMAND [ARGS]...\n")
    assert "Error: No such command 'fleets'." in result.stderr


def boom(*args: object, **kwargs: object) -> None:
    raise RuntimeError("disk on fire\nsecond line with details")


def test_an_unexpected_exception_is_one_line_without_traceback(
    run, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(FleetService, "list", boom)

    result = run("fleet", "list")

    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr == "Error: internal error: RuntimeError: disk on fire\n"


def test_debug_adds_the_traceback_after_the_line(run, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(FleetService, "list", boom)

    result = run("fleet", "list", env={"CAFLEET_DEBUG": "1"})

    assert result.exit_code == 1
    first, rest = result.stderr.split("\n", 1)
    assert first == "Error: internal error: RuntimeError: disk on fire"
    assert rest.startswith("Traceback (most recent call last):")


def test_monitor_start_help_says_how_to_run_it_in_the_background_and_stop_it(run) -> None:
    result = run("monitor", "start", "--help")

    assert result.exit_code == 0
    assert "  nohup cafleet monitor start --fleet-id 1 > monitor.log 2>&1 &\n" in result.stdout
    assert "there is no stop command" in " ".join(result.stdout.split())
    assert "  kill 4242\n" in result.stdout
