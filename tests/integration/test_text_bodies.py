"""`--text` / `--text-file PATH` / `--text-file -` on message send and broadcast."""

from __future__ import annotations

import json
import os

import pytest

pytestmark = pytest.mark.both_stores  # and on PostgreSQL (conftest.py)


@pytest.fixture
def send(cli, fleet):
    """`message send` from the Administrator to the Director with the given body options."""

    def run(*body_args, **kw):
        return cli(
            "--json", "message", "send", "--fleet-id", str(fleet.fleet_id),
            "--agent-id", str(fleet.admin), "--to", str(fleet.director), "--full", *body_args,
            **kw,
        )  # fmt: skip

    return run


def stored_texts(db):
    return [r["text"] for r in db.rows("SELECT text FROM tasks ORDER BY task_id")]


def sent_text(result):
    assert result.code == 0, result
    return json.loads(result.stdout)["task"]["text"]


def test_text_file_absolute_path(send, tmp_path, migrated):
    body = tmp_path / "body.txt"
    body.write_text("from a file\n", encoding="utf-8")
    assert sent_text(send("--text-file", str(body))) == "from a file\n"
    assert stored_texts(migrated) == ["from a file\n"]


def test_text_file_relative_to_the_current_directory(send, tmp_path, migrated):
    work = tmp_path / "work"
    work.mkdir()
    (work / "note.md").write_text("relative", encoding="utf-8")
    assert sent_text(send("--text-file", "note.md", cwd=work)) == "relative"


def test_text_file_keeps_bytes_verbatim(send, tmp_path, migrated):
    raw = "line one\r\nline two\r\n\tindented — ünïcödé ✓\n\n"
    body = tmp_path / "crlf.txt"
    body.write_bytes(raw.encode("utf-8"))
    assert sent_text(send("--text-file", str(body))) == raw
    assert stored_texts(migrated) == [raw]


def test_text_file_from_stdin(send, migrated):
    raw = "piped\nbody with ünïcödé\n"
    assert sent_text(send("--text-file", "-", input=raw.encode("utf-8"))) == raw
    assert stored_texts(migrated) == [raw]


def test_text_is_used_verbatim(send, migrated):
    raw = "  padded and\nmulti-line  \n"
    assert sent_text(send("--text", raw)) == raw


def test_broadcast_reads_text_file_from_stdin(cli, fleet, migrated):
    out = cli.ok(
        "message", "broadcast", "--fleet-id", str(fleet.fleet_id), "--agent-id", str(fleet.admin),
        "--text-file", "-", input="broadcast body\n",
    )  # fmt: skip
    assert out.startswith("broadcast id=")
    assert migrated.scalar("SELECT text FROM tasks WHERE type = 'unicast'") == "broadcast body\n"


def test_broadcast_reads_text_file_path(cli, fleet, migrated, tmp_path):
    body = tmp_path / "b.txt"
    body.write_text("from file", encoding="utf-8")
    cli.ok(
        "message", "broadcast", "--fleet-id", str(fleet.fleet_id), "--agent-id", str(fleet.admin),
        "--text-file", str(body),
    )  # fmt: skip
    assert migrated.scalar("SELECT text FROM tasks WHERE type = 'unicast'") == "from file"


# --------------------------------------------------------------------------- refusals


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--text", "a", "--text-file", "-"), "--text and --text-file are mutually exclusive."),
        ((), "Provide exactly one of --text or --text-file."),
        (("--text", ""), "text may not be empty."),
        (("--text", " \n\t "), "text may not be empty."),
    ],
    ids=["both", "neither", "empty", "whitespace"],
)
def test_body_usage_errors(send, migrated, args, message):
    result = send(*args)
    assert result.code == 2
    assert result.stdout == ""
    assert result.stderr.startswith("Usage: cafleet message send [OPTIONS]\n")
    assert result.stderr.rstrip("\n").endswith(f"Error: {message}")
    assert migrated.count("tasks") == 0


@pytest.mark.parametrize("content", [b"", b"  \n\t\r\n"], ids=["empty", "whitespace"])
def test_empty_stdin(send, migrated, content):
    result = send("--text-file", "-", input=content)
    assert (result.code, result.stdout) == (1, "")
    assert result.stderr == "Error: --text-file -: stdin is empty.\n"
    assert migrated.count("tasks") == 0


def test_missing_text_file(send, tmp_path, migrated):
    path = tmp_path / "missing.txt"
    result = send("--text-file", str(path))
    assert result.code == 1
    assert result.stderr == (
        f"Error: --text-file {path}: file does not exist or is not a regular file.\n"
    )
    assert migrated.count("tasks") == 0


def test_directory_as_text_file(send, tmp_path, migrated):
    result = send("--text-file", str(tmp_path))
    assert result.code == 1
    assert result.stderr == (
        f"Error: --text-file {tmp_path}: file does not exist or is not a regular file.\n"
    )


def test_invalid_utf8_text_file(send, tmp_path, migrated):
    path = tmp_path / "latin1.txt"
    path.write_bytes("caf\xe9".encode("latin-1"))
    result = send("--text-file", str(path))
    assert result.code == 1
    assert result.stderr == f"Error: --text-file {path}: file is not valid UTF-8.\n"
    assert migrated.count("tasks") == 0


@pytest.mark.parametrize("content", [b"", b"\n \t\r\n"], ids=["empty", "whitespace"])
def test_empty_text_file(send, tmp_path, migrated, content):
    path = tmp_path / "empty.txt"
    path.write_bytes(content)
    result = send("--text-file", str(path))
    assert result.code == 1
    assert result.stderr == f"Error: --text-file {path}: file is empty.\n"
    assert migrated.count("tasks") == 0


@pytest.mark.skipif(os.geteuid() == 0, reason="file permissions do not apply to root")
def test_unreadable_text_file(send, tmp_path, migrated):
    path = tmp_path / "secret.txt"
    path.write_text("hidden", encoding="utf-8")
    path.chmod(0)
    try:
        result = send("--text-file", str(path))
    finally:
        path.chmod(0o600)
    assert result.code == 1
    assert result.stderr == f"Error: --text-file {path}: file is not readable.\n"


def test_relative_missing_path_is_reported_as_given(send, tmp_path, migrated):
    result = send("--text-file", "nope.txt", cwd=tmp_path)
    assert result.stderr == (
        "Error: --text-file nope.txt: file does not exist or is not a regular file.\n"
    )
