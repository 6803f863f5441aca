"""--text / --text-file rules, exercised through `message send` and `broadcast`."""

from __future__ import annotations

from pathlib import Path

import pytest

USAGE = "Usage: cafleet message send [OPTIONS]\nTry 'cafleet message send --help' for help.\n\n"


@pytest.fixture
def send(run):
    made = run.world.fleet("alpha")
    base = [
        "message",
        "send",
        "--fleet-id",
        str(made.fleet.fleet_id),
        "--agent-id",
        str(made.director.agent_id),
        "--to",
        str(made.administrator.agent_id),
    ]

    def invoke(*extra: str, input: str | bytes | None = None):
        return run(*base, *extra, input=input)

    return invoke


def stored_texts(run) -> list[str]:
    return [m.text for m in run.world.all_messages()]


# -- usage errors (exit 2), nothing written ---------------------------------------------------


def test_both_text_and_text_file_is_a_usage_error(run, send, tmp_path: Path) -> None:
    body = tmp_path / "body.txt"
    body.write_text("from file")

    result = send("--text", "inline", "--text-file", str(body))

    assert result.exit_code == 2
    assert result.stderr == USAGE + "Error: --text and --text-file are mutually exclusive.\n"
    assert stored_texts(run) == []


def test_neither_text_nor_text_file_is_a_usage_error(run, send) -> None:
    result = send()

    assert result.exit_code == 2
    assert result.stderr == USAGE + "Error: Provide exactly one of --text or --text-file.\n"
    assert stored_texts(run) == []


@pytest.mark.parametrize("blank", ["", "   ", " \n\t "])
def test_a_blank_text_is_a_usage_error(run, send, blank: str) -> None:
    result = send("--text", blank)

    assert result.exit_code == 2
    assert result.stderr == USAGE + "Error: text may not be empty.\n"
    assert stored_texts(run) == []


# -- file problems (exit 1) -------------------------------------------------------------------


def test_a_missing_file(run, send, tmp_path: Path) -> None:
    missing = tmp_path / "nope.txt"

    result = send("--text-file", str(missing))

    assert result.exit_code == 1
    assert result.stderr == (
        f"Error: --text-file {missing}: file does not exist or is not a regular file.\n"
    )
    assert stored_texts(run) == []


def test_a_directory_is_not_a_regular_file(send, tmp_path: Path) -> None:
    result = send("--text-file", str(tmp_path))

    assert result.exit_code == 1
    assert result.stderr == (
        f"Error: --text-file {tmp_path}: file does not exist or is not a regular file.\n"
    )


def test_a_file_that_is_not_utf8(run, send, tmp_path: Path) -> None:
    latin = tmp_path / "latin1.txt"
    latin.write_bytes("café".encode("latin-1"))

    result = send("--text-file", str(latin))

    assert result.exit_code == 1
    assert result.stderr == f"Error: --text-file {latin}: file is not valid UTF-8.\n"
    assert stored_texts(run) == []


@pytest.mark.parametrize("content", [b"", b"  \n\r\n\t"])
def test_an_empty_or_blank_file(run, send, tmp_path: Path, content: bytes) -> None:
    empty = tmp_path / "empty.txt"
    empty.write_bytes(content)

    result = send("--text-file", str(empty))

    assert result.exit_code == 1
    assert result.stderr == f"Error: --text-file {empty}: file is empty.\n"
    assert stored_texts(run) == []


def test_an_unreadable_file(run, send, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    locked = tmp_path / "locked.txt"
    locked.write_text("secret")

    def denied(self: Path) -> bytes:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "read_bytes", denied)

    result = send("--text-file", str(locked))

    assert result.exit_code == 1
    assert result.stderr == f"Error: --text-file {locked}: file is not readable.\n"
    assert stored_texts(run) == []


@pytest.mark.parametrize("stdin", ["", "  \n"])
def test_empty_stdin(run, send, stdin: str) -> None:
    result = send("--text-file", "-", input=stdin)

    assert result.exit_code == 1
    assert result.stderr == "Error: --text-file -: stdin is empty.\n"
    assert stored_texts(run) == []


# -- bodies are used verbatim -----------------------------------------------------------------


def test_a_file_body_keeps_crlf_and_the_trailing_newline(run, send, tmp_path: Path) -> None:
    body = tmp_path / "crlf.txt"
    body.write_bytes(b"line one\r\nline two\r\n")

    result = send("--text-file", str(body))

    assert result.exit_code == 0
    assert stored_texts(run) == ["line one\r\nline two\r\n"]


def test_a_relative_path_is_read_from_the_current_directory(
    run, send, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "rel.txt").write_text("relative body", encoding="utf-8")
    monkeypatch.chdir(tmp_path)

    result = send("--text-file", "rel.txt")

    assert result.exit_code == 0
    assert stored_texts(run) == ["relative body"]


def test_a_utf8_file_is_decoded(run, send, tmp_path: Path) -> None:
    body = tmp_path / "utf8.txt"
    body.write_bytes("héllo ✓ 日本\n".encode())

    send("--text-file", str(body))

    assert stored_texts(run) == ["héllo ✓ 日本\n"]


def test_dash_reads_all_of_stdin_verbatim(run, send) -> None:
    result = send("--text-file", "-", input=b"first\r\nsecond\n")

    assert result.exit_code == 0
    assert stored_texts(run) == ["first\r\nsecond\n"]


def test_inline_text_is_not_stripped(run, send) -> None:
    send("--text", "  padded body \n")

    assert stored_texts(run) == ["  padded body \n"]


def test_broadcast_follows_the_same_rules(run) -> None:
    made = run.world.fleet("alpha")
    run.world.member(made, "worker", pane_id="%1")
    base = [
        "message",
        "broadcast",
        "--fleet-id",
        str(made.fleet.fleet_id),
        "--agent-id",
        str(made.director.agent_id),
    ]

    both = run(*base, "--text", "a", "--text-file", "-")
    blank = run(*base, "--text", " ")
    piped = run(*base, "--text-file", "-", input="via stdin")

    assert both.exit_code == blank.exit_code == 2
    assert both.stderr.endswith("Error: --text and --text-file are mutually exclusive.\n")
    assert blank.stderr.endswith("Error: text may not be empty.\n")
    assert piped.exit_code == 0
    assert [m.text for m in run.world.all_messages() if not m.is_summary] == ["via stdin"]


def test_invalid_utf8_on_stdin_is_rejected(run, send) -> None:
    result = send("--text-file", "-", input="café".encode("latin-1"))

    assert result.exit_code == 1
    assert result.stderr == "Error: --text-file -: file is not valid UTF-8.\n"
    assert stored_texts(run) == []
