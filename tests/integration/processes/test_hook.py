"""`python -m cafleet.entrypoints.processes.hook <event file> <event>`: append `<event> <unix
time>`, print nothing, never fail the agent's hook."""

from __future__ import annotations

import io
import json
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cafleet.adapters.runtime.mailbox import Mailbox
from cafleet.entrypoints.processes.hook import WAKE_EXIT, main, previews_in
from support.probes import probe_module

# no CAFLEET_*, multiplexer or agent-home variable of the outer shell leaks in
pytestmark = pytest.mark.usefixtures("outer_variables_removed")


@pytest.fixture(autouse=True)
def _hook_json_on_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO('{"session_id": "s", "prompt": "hi"}'))


def test_an_event_is_appended_with_its_time(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    events = tmp_path / "events"
    before = time.time()

    assert main([str(events), "session"]) == 0
    assert main([str(events), "prompt"]) == 0

    lines = events.read_text().splitlines()
    assert [line.split(" ")[0] for line in lines] == ["session", "prompt"]
    stamps = [float(line.split(" ")[1]) for line in lines]
    assert before - 1 <= stamps[0] <= stamps[1] <= time.time() + 1
    assert all(len(line.split(" ")[1].split(".")[1]) == 3 for line in lines)
    assert capsys.readouterr() == ("", "")


def test_the_event_file_is_private(tmp_path: Path) -> None:
    events = tmp_path / "events"

    main([str(events), "idle"])

    assert stat.S_IMODE(events.stat().st_mode) == 0o600


def test_a_bad_path_prints_nothing_and_exits_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing_dir = tmp_path / "discarded-pad" / "events"

    assert main([str(missing_dir), "prompt"]) == 0
    assert main([str(tmp_path), "prompt"]) == 0  # a directory, not a file

    assert not missing_dir.parent.exists()
    assert capsys.readouterr() == ("", "")


@pytest.mark.parametrize("args", [[], ["only-a-path"], ["a", "b", "c"]])
def test_wrong_arguments_do_nothing_and_exit_0(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    args: list[str],
) -> None:
    monkeypatch.chdir(tmp_path)

    assert main(args) == 0

    assert list(tmp_path.iterdir()) == []
    assert capsys.readouterr() == ("", "")


def test_an_unreadable_stdin_does_not_fail_the_hook(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    closed = io.StringIO()
    closed.close()
    monkeypatch.setattr(sys, "stdin", closed)

    assert main([str(tmp_path / "events"), "waiting"]) == 0

    assert (tmp_path / "events").read_text().startswith("waiting ")


# the old name stays for one release: members started before the move name it in their settings
@pytest.mark.parametrize("module", ["cafleet.entrypoints.processes.hook", "cafleet.hook"])
def test_as_a_hook_command_it_reads_stdin_and_prints_nothing(tmp_path: Path, module: str) -> None:
    events = tmp_path / "events"

    done = subprocess.run(
        [sys.executable, "-m", module, str(events), "prompt"],
        input='{"hook_event_name": "UserPromptSubmit"}',
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    bad = subprocess.run(
        [
            sys.executable,
            "-m",
            module,
            str(tmp_path / "gone" / "events"),
            "prompt",
        ],
        input="{}",
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )

    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert events.read_text().startswith("prompt ")
    assert (bad.returncode, bad.stdout, bad.stderr) == (0, "", "")


def test_the_hook_imports_nothing_beyond_the_standard_library() -> None:
    ran = probe_module("cafleet.entrypoints.processes.hook")

    packages = [
        "cafleet",
        "cafleet.adapters",
        "cafleet.adapters.runtime",
        "cafleet.adapters.system",
    ]
    packages += ["cafleet.domain", "cafleet.entrypoints", "cafleet.entrypoints.processes"]
    modules = ["cafleet.adapters.runtime.mailbox", "cafleet.adapters.runtime.private_files"]
    modules += ["cafleet.adapters.system.liveness", "cafleet.domain.preview"]
    loaded = ran.loaded(("cafleet", "click", "sqlalchemy", "alembic", "fastapi"))
    assert loaded == sorted(packages + modules)


# --------------------------------------------------------------------------- waiting for mail


def start_waiter(pad: Path) -> subprocess.Popen[str]:
    waiter = subprocess.Popen(
        [sys.executable, "-m", "cafleet.entrypoints.processes.hook", "wait", str(pad)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert waiter.stdin is not None
    waiter.stdin.write('{"hook_event_name": "Stop", "stop_hook_active": false}')
    waiter.stdin.close()
    waiter.stdin = None  # communicate() must not flush it again
    deadline = time.monotonic() + 10
    while not Mailbox(pad).has_waiter():
        assert time.monotonic() < deadline, "the waiter never enlisted"
        assert waiter.poll() is None, waiter.stderr.read() if waiter.stderr else ""
        time.sleep(0.05)
    return waiter


def test_the_waiter_hands_posted_mail_over_on_stderr_and_exits_2(tmp_path: Path) -> None:
    pad = tmp_path / "pad"
    pad.mkdir()
    waiter = start_waiter(pad)

    Mailbox(pad).post(12, "[cafleet msg 12 from 1 T]\nhello")
    Mailbox(pad).post(13, "[cafleet msg 13 from 4 T]\nbye")
    out, err = waiter.communicate(timeout=10)

    assert (waiter.returncode, out) == (WAKE_EXIT, "")
    assert err.startswith("2 new CAFleet messages (from agents 1, 4); one `cafleet message poll`")
    assert "[cafleet msg 12 from 1 T]\nhello" in err and "[cafleet msg 13 from 4 T]\nbye" in err
    assert Mailbox(pad).taken_at(13) is not None  # both in one wake
    assert Mailbox(pad).taken_at(12) is not None
    assert Mailbox(pad).withdraw(12) is False  # taken: the sender cannot take it back
    assert not Mailbox(pad).has_waiter()
    assert any(line.startswith("handed:12") for line in (pad / "events").read_text().splitlines())


def test_a_lone_message_wakes_the_agent_with_its_preview_alone(tmp_path: Path) -> None:
    pad = tmp_path / "pad"
    pad.mkdir()
    waiter = start_waiter(pad)

    Mailbox(pad).post(12, "[cafleet msg 12 from 1 T]\nhello")
    _, err = waiter.communicate(timeout=10)

    assert (waiter.returncode, err) == (WAKE_EXIT, "[cafleet msg 12 from 1 T]\nhello\n")


def test_only_one_waiter_waits(tmp_path: Path) -> None:
    pad = tmp_path / "pad"
    pad.mkdir()
    first = start_waiter(pad)
    try:
        second = subprocess.run(
            [sys.executable, "-m", "cafleet.entrypoints.processes.hook", "wait", str(pad)],
            input="{}", capture_output=True, text=True, timeout=10, check=False,
        )  # fmt: skip
        assert (second.returncode, second.stderr) == (0, "")
        assert first.poll() is None
    finally:
        first.kill()
        first.communicate()


def test_the_waiter_leaves_when_its_agent_has_exited(tmp_path: Path) -> None:
    pad = tmp_path / "pad"
    pad.mkdir()
    (pad / "status").write_text("running 1234\n")
    waiter = start_waiter(pad)

    (pad / "status").write_text("exited 0\n")
    waiter.communicate(timeout=10)
    Mailbox(pad).post(12, "nobody reads this")

    assert waiter.returncode == 0
    assert Mailbox(pad).withdraw(12) is True  # still there for another channel


def test_a_message_is_either_taken_or_withdrawn(tmp_path: Path) -> None:
    box = Mailbox(tmp_path)
    box.post(1, "one")
    box.post(2, "two")

    assert box.withdraw(2) is True
    assert box.take_all() == [(1, "one")]
    assert (box.withdraw(1), box.take_all()) == (False, [])


def test_mailbox_directories_are_made_0700(tmp_path: Path) -> None:
    box = Mailbox(tmp_path)
    box.post(1, "one")
    box.enlist(4321)
    box.take_all()

    for name in ("mail", "waiters", "taken"):
        assert stat.S_IMODE((tmp_path / name).lstat().st_mode) == 0o700


def test_a_symlink_planted_as_a_mail_file_is_not_followed(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_text("not a message")
    box = Mailbox(tmp_path / "pad")
    (tmp_path / "pad").mkdir(mode=0o700)
    box.post(1, "one")
    (tmp_path / "pad" / "mail" / "2.msg").symlink_to(secret)

    assert box.take_all() == [(1, "one")]  # the link is moved aside, never read
    assert not (tmp_path / "pad" / "mail" / "2.msg").exists()
    assert secret.read_text() == "not a message"


def test_a_symlink_planted_as_a_waiter_is_not_followed(tmp_path: Path) -> None:
    target = tmp_path / "victim-file"
    box = Mailbox(tmp_path / "pad")
    (tmp_path / "pad" / "waiters").mkdir(mode=0o700, parents=True)
    (tmp_path / "pad" / "waiters" / "4321").symlink_to(target)

    with pytest.raises(OSError, match="a symbolic link"):
        box.enlist(4321)

    assert not target.exists()


def test_a_mailbox_directory_that_is_a_link_or_open_to_others_is_refused(
    tmp_path: Path,
) -> None:
    (tmp_path / "theirs").mkdir(mode=0o700)
    (tmp_path / "pad").mkdir(mode=0o700)
    (tmp_path / "pad" / "mail").symlink_to(tmp_path / "theirs")
    (tmp_path / "pad" / "waiters").mkdir(mode=0o777)
    (tmp_path / "pad" / "waiters").chmod(0o777)
    box = Mailbox(tmp_path / "pad")

    with pytest.raises(OSError, match="a symbolic link, not a directory"):
        box.post(1, "one")
    with pytest.raises(OSError, match=r"open to group or others \(mode 0777\)"):
        box.enlist(4321)
    assert box.take_all() == []
    assert list((tmp_path / "theirs").iterdir()) == []


def test_an_event_file_that_is_a_symlink_is_not_followed(tmp_path: Path) -> None:
    target = tmp_path / "victim-file"
    (tmp_path / "events").symlink_to(target)

    assert main([str(tmp_path / "events"), "prompt"]) == 0

    assert not target.exists()


def test_a_notification_keeps_its_type(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    events = tmp_path / "events"
    monkeypatch.setattr(sys, "stdin", io.StringIO('{"notification_type": "permission_prompt"}'))
    main([str(events), "waiting"])
    monkeypatch.setattr(sys, "stdin", io.StringIO('{"notification_type": "a b;rm"}'))
    main([str(events), "waiting"])

    assert [line.split(" ")[0] for line in events.read_text().splitlines()] == [
        "waiting:permission_prompt",
        "waiting",  # an odd type is not written into the file
    ]


# --------------------------------------------------------------------------- receipts


def test_the_previews_in_a_prompt_are_found_by_their_headers() -> None:
    prompt = (
        "[cafleet msg 12 from 1 2026-01-01T08:00:00.000000+00:00]\nhello\n\n"
        "[cafleet msg 13 from 4 2026-01-01T08:00:01.000000+00:00]\nbye"
    )

    assert previews_in(json.dumps({"prompt": prompt})) == ["12", "13"]
    assert previews_in(json.dumps({"prompt": "no mail here"})) == []
    assert previews_in("not json") == []


def test_a_prompt_with_previews_starts_a_detached_receipt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[tuple[list[str], dict[str, object]]] = []
    monkeypatch.setattr(subprocess, "Popen", lambda argv, **kw: started.append((argv, kw)))
    monkeypatch.setenv("CAFLEET_AGENT_ID", "7")
    monkeypatch.setattr(
        sys, "stdin", io.StringIO(json.dumps({"prompt": "[cafleet msg 12 from 1 T]"}))
    )

    main([str(tmp_path / "events"), "prompt"])
    monkeypatch.setattr(
        sys, "stdin", io.StringIO(json.dumps({"prompt": "[cafleet msg 12 from 1 T]"}))
    )
    main([str(tmp_path / "events"), "idle"])  # only a taken prompt is a receipt

    [(argv, options)] = started
    assert argv[1:4] == ["-m", "cafleet.entrypoints.processes.receipt", "7"] and argv[-1] == "12"
    assert options["start_new_session"] is True
    # the event file names the previews the prompt carried, for a reader on the spot
    events = [line.split()[0] for line in (tmp_path / "events").read_text().splitlines()]
    assert events == ["prompt:12", "idle"]
