"""Every number option has a range (cafleet.domain.bounds): outside it, or not finite, a
command is a usage error with one `Error:` line and exit 2, never an internal error; and a
message body over CAFLEET_MAX_BODY_BYTES is refused in one line before it is stored."""

from __future__ import annotations

import pytest

from cafleet.domain.bounds import MAX_SQLITE_INTEGER

TOO_LONG = "9" * 5000
OUT_OF_RANGE = ["0", "-1", str(MAX_SQLITE_INTEGER + 1), TOO_LONG]

# one command per id option; {} is where the id under test goes, 1 stands for any other id
ID_OPTIONS = {
    "--fleet-id": "message poll --fleet-id {} --agent-id 1",
    "--agent-id": "message poll --fleet-id 1 --agent-id {}",
    "--to": "message send --fleet-id 1 --agent-id 1 --to {} --text x",
    "--task-id": "message show --fleet-id 1 --agent-id 1 --task-id {}",
    "--member-id": "member delete --fleet-id 1 --member-id {}",
    "member show --member-id": "member show --fleet-id 1 --member-id {}",
    "member nudge --agent-id": "member nudge --fleet-id 1 --agent-id {} --member-id 1 --text x",
    "monitor config --agent-id": "monitor config --fleet-id 1 --agent-id {}",
    "fleet show --fleet-id": "fleet show --fleet-id {}",
}


def error_line(result) -> str:
    [line] = [ln for ln in result.stderr.splitlines() if ln.startswith("Error:")]
    return line


@pytest.mark.parametrize("value", OUT_OF_RANGE)
@pytest.mark.parametrize("option", ID_OPTIONS)
def test_ids_outside_1_to_2_63_minus_1_are_usage_errors(run, option: str, value: str) -> None:
    result = run(*ID_OPTIONS[option].format(value).split())

    assert result.exit_code == 2, result.stderr
    name = option.rsplit(maxsplit=1)[-1]
    assert error_line(result).startswith(f"Error: Invalid value for '{name}': ")
    assert error_line(result).endswith(" is not an integer between 1 and 9223372036854775807.")
    assert "internal error" not in result.stderr
    assert len(error_line(result)) < 200  # a 5000-digit value is shown shortened


@pytest.mark.parametrize("option", ["--fleet-id", "--agent-id", "--to", "--task-id"])
def test_the_largest_sqlite_integer_is_an_id_that_is_refused_as_unknown(run, option: str) -> None:
    made = run.world.fleet("alpha")
    ids = {"--fleet-id": made.fleet.fleet_id, "--agent-id": made.director.agent_id}
    ids["--to"] = made.administrator.agent_id
    ids[option] = MAX_SQLITE_INTEGER
    args = ["message", "send", "--fleet-id", ids["--fleet-id"], "--agent-id", ids["--agent-id"]]
    args += ["--to", ids["--to"], "--text", "x"]
    if option == "--task-id":
        args = ["message", "ack", *args[2:6], "--task-id", MAX_SQLITE_INTEGER]

    result = run(*map(str, args))

    assert result.exit_code == 1
    [line] = result.stderr.splitlines()
    assert line.startswith("Error: ")
    assert str(MAX_SQLITE_INTEGER) in line
    assert "internal error" not in line


@pytest.mark.parametrize(
    ("command", "option", "value", "range_"),
    [
        ("monitor config --fleet-id 1 --agent-id 1", "--interval", "0", "1 and 86400"),
        ("monitor config --fleet-id 1 --agent-id 1", "--interval", "86401", "1 and 86400"),
        (
            "monitor config --fleet-id 1 --agent-id 1",
            "--interval",
            str(MAX_SQLITE_INTEGER),
            "1 and 86400",
        ),
        ("monitor start --fleet-id 1", "--tick", "0", "1 and 3600"),
        ("monitor start --fleet-id 1", "--tick", "3601", "1 and 3600"),
        ("message poll --fleet-id 1 --agent-id 1", "--limit", "-1", "1 and 9223372036854775807"),
        ("member capture --fleet-id 1 --member-id 1", "--lines", "100001", "1 and 100000"),
        ("member delete --fleet-id 1 --member-id 1", "--timeout", "nan", "0 and 3600"),
        ("member delete --fleet-id 1 --member-id 1", "--timeout", "inf", "0 and 3600"),
        ("fleet delete --fleet-id 1", "--timeout", "1e400", "0 and 3600"),
        ("fleet delete --fleet-id 1", "--timeout", "-0.5", "0 and 3600"),
        ("fleet delete --fleet-id 1", "--timeout", "3600.5", "0 and 3600"),
    ],
)
def test_intervals_timeouts_and_counts_have_ranges(
    run, command: str, option: str, value: str, range_: str
) -> None:
    result = run(*command.split(), option, value)

    assert result.exit_code == 2, result.stderr
    assert error_line(result).startswith(f"Error: Invalid value for '{option}'")
    assert f": {value!r} is not " in error_line(result)
    assert error_line(result).endswith(f" between {range_}.")


def test_the_largest_monitor_interval_is_accepted(run) -> None:
    made = run.world.fleet("alpha")
    worker = run.world.member(made, "worker", pane_id="%1")
    fid = str(made.fleet.fleet_id)

    result = run(
        "monitor", "config", "--fleet-id", fid, "--member-id", str(worker), "--interval", "86400"
    )

    assert result.exit_code == 0, result.stderr
    assert "interval 86400s" in result.stdout


@pytest.fixture
def pair(run) -> tuple[str, int, int]:
    made = run.world.fleet("alpha")
    return str(made.fleet.fleet_id), made.director.agent_id, made.administrator.agent_id


LIMIT = {"CAFLEET_MAX_BODY_BYTES": "8"}
OVER = "Error: message body is 9 bytes; the limit is 8 bytes (CAFLEET_MAX_BODY_BYTES)\n"


def test_a_body_at_the_limit_is_sent(run, pair) -> None:
    fid, director, admin = pair

    result = run(
        "message", "send", "--fleet-id", fid, "--agent-id", str(director), "--to", str(admin),
        "--text", "12345678", env=LIMIT,
    )  # fmt: skip

    assert result.exit_code == 0, result.stderr
    assert [m.text for m in run.world.all_messages()] == ["12345678"]


@pytest.mark.parametrize("body", ["123456789", "1234567é"])  # 9 bytes: 9 ASCII, or 7 + 2
def test_a_body_one_byte_over_the_limit_is_refused(run, pair, body: str) -> None:
    fid, director, admin = pair

    result = run(
        "message", "send", "--fleet-id", fid, "--agent-id", str(director), "--to", str(admin),
        "--text", body, env=LIMIT,
    )  # fmt: skip

    assert result.exit_code == 1
    assert result.stderr == OVER
    assert run.world.all_messages() == []


def test_a_text_file_over_the_limit_is_refused_for_a_broadcast(run, pair, tmp_path) -> None:
    fid, director, _ = pair
    body = tmp_path / "body.txt"
    body.write_bytes(b"x" * 9)

    result = run(
        "message", "broadcast", "--fleet-id", fid, "--agent-id", str(director),
        "--text-file", str(body), env=LIMIT,
    )  # fmt: skip

    assert result.exit_code == 1
    assert result.stderr == OVER
    assert run.world.all_messages() == []
