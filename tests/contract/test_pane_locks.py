"""The PaneLocks contract, for the in-process ThreadLocks and the fcntl-based FileLocks:
exclusive per key, TimeoutError after the timeout, independent keys. FileLocks must also
exclude another process."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cafleet.adapters.fake.pane_driver import ThreadLocks
from cafleet.adapters.runtime.locks import FileLocks, runtime_directory
from cafleet.application.ports.panes import PaneLocks
from cafleet.domain.errors import Unavailable

SHORT = 0.2
BOUND = 5.0


@pytest.fixture(params=["thread", "file"])
def locks(request: pytest.FixtureRequest, tmp_path: Path) -> PaneLocks:
    return ThreadLocks() if request.param == "thread" else FileLocks(tmp_path)


def attempt(locks: PaneLocks, key: str, timeout: float) -> BaseException | None:
    """Take and release the lock in this thread; what it raised, or None."""
    try:
        with locks.hold(key, timeout):
            return None
    except TimeoutError as exc:
        return exc


def try_in_thread(locks: PaneLocks, key: str, timeout: float) -> BaseException | None:
    """Take and release the lock in another thread; what it raised, or None."""
    outcome: list[BaseException | None] = []

    def attempt() -> None:
        try:
            with locks.hold(key, timeout):
                pass
        except BaseException as exc:
            outcome.append(exc)
        else:
            outcome.append(None)

    worker = threading.Thread(target=attempt)
    worker.start()
    worker.join(timeout + BOUND)
    assert outcome, "the other thread never finished"
    return outcome[0]


def test_a_free_key_is_taken_at_once(locks: PaneLocks) -> None:
    started = time.monotonic()

    with locks.hold("pane-a", SHORT):
        pass

    assert time.monotonic() - started < SHORT


def test_a_held_key_times_out_for_another_thread(locks: PaneLocks) -> None:
    with locks.hold("pane-a", SHORT):
        started = time.monotonic()
        failure = try_in_thread(locks, "pane-a", SHORT)
        waited = time.monotonic() - started

    assert isinstance(failure, TimeoutError)
    assert SHORT * 0.9 <= waited < SHORT + BOUND


def test_a_held_key_is_not_reentrant(locks: PaneLocks) -> None:
    with locks.hold("pane-a", SHORT):
        assert isinstance(attempt(locks, "pane-a", SHORT), TimeoutError)


def test_a_released_key_can_be_taken_again(locks: PaneLocks) -> None:
    with locks.hold("pane-a", SHORT):
        pass

    assert try_in_thread(locks, "pane-a", SHORT) is None


def test_the_key_is_released_when_the_block_raises(locks: PaneLocks) -> None:
    with pytest.raises(RuntimeError), locks.hold("pane-a", SHORT):
        raise RuntimeError("boom")

    assert try_in_thread(locks, "pane-a", SHORT) is None


def test_different_keys_do_not_block_each_other(locks: PaneLocks) -> None:
    with locks.hold("pane-a", SHORT):
        assert try_in_thread(locks, "pane-b", SHORT) is None


def test_a_waiter_gets_the_key_once_the_holder_lets_go(locks: PaneLocks) -> None:
    holding, release, acquired = threading.Event(), threading.Event(), threading.Event()

    def holder() -> None:
        with locks.hold("pane-a", SHORT):
            holding.set()
            release.wait(BOUND)

    def waiter() -> None:
        with locks.hold("pane-a", BOUND):
            acquired.set()

    threads = [threading.Thread(target=holder), threading.Thread(target=waiter)]
    threads[0].start()
    assert holding.wait(BOUND)
    threads[1].start()
    assert not acquired.wait(SHORT)

    release.set()

    assert acquired.wait(BOUND)
    for thread in threads:
        thread.join(BOUND)


# --------------------------------------------------------------------------- FileLocks only

HOLDER = """\
import sys
from pathlib import Path
from cafleet.adapters.runtime.locks import FileLocks
with FileLocks(Path(sys.argv[1])).hold(sys.argv[2], 5):
    print("held", flush=True)
    sys.stdin.readline()
"""


@pytest.fixture
def other_process_holding(tmp_path: Path) -> Iterator[subprocess.Popen[str]]:
    """Another process that holds the FileLocks key 'pane-a' until its stdin closes."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(tmp_path), "pane-a"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "held"
        yield holder
    finally:
        if holder.poll() is None:
            holder.kill()
        holder.wait(BOUND)


def test_file_locks_exclude_another_process(
    tmp_path: Path, other_process_holding: subprocess.Popen[str]
) -> None:
    with pytest.raises(TimeoutError), FileLocks(tmp_path).hold("pane-a", SHORT):
        pass


def test_file_locks_are_free_once_the_other_process_lets_go(
    tmp_path: Path, other_process_holding: subprocess.Popen[str]
) -> None:
    assert other_process_holding.stdin is not None
    other_process_holding.stdin.close()

    with FileLocks(tmp_path).hold("pane-a", BOUND):
        pass


def test_file_locks_of_another_process_do_not_block_other_keys(
    tmp_path: Path, other_process_holding: subprocess.Popen[str]
) -> None:
    with FileLocks(tmp_path).hold("pane-b", SHORT):
        pass


def test_a_file_lock_held_by_a_killed_process_is_released(
    tmp_path: Path, other_process_holding: subprocess.Popen[str]
) -> None:
    other_process_holding.kill()
    other_process_holding.wait(BOUND)

    with FileLocks(tmp_path).hold("pane-a", BOUND):
        pass


def test_lock_files_are_private_to_the_user(tmp_path: Path) -> None:
    with FileLocks(tmp_path).hold("pane-a", SHORT):
        pass

    [lock_file] = tmp_path.iterdir()
    assert stat.S_IMODE(lock_file.stat().st_mode) == 0o600


def test_runtime_directory_is_a_private_cafleet_folder_under_xdg_runtime_dir(
    tmp_path: Path,
) -> None:
    directory = runtime_directory({"XDG_RUNTIME_DIR": str(tmp_path)})

    assert directory == tmp_path / "cafleet"
    assert directory.is_dir()
    assert stat.S_IMODE(os.stat(directory).st_mode) == 0o700


# --------------------------------------------------------------------------- a private directory


def test_first_use_in_the_temp_dir_creates_a_0700_cafleet_uid_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))

    directory = runtime_directory({})

    assert directory == tmp_path / f"cafleet-{os.getuid()}"
    assert stat.S_IMODE(os.lstat(directory).st_mode) == 0o700


def refusal(env: dict[str, str]) -> str:
    with pytest.raises(Unavailable) as raised:
        runtime_directory(env)
    assert "\n" not in raised.value.message
    return raised.value.message


@pytest.mark.parametrize("mode", [0o777, 0o755, 0o710], ids=oct)
def test_an_existing_runtime_directory_open_to_others_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: int
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    planted = tmp_path / f"cafleet-{os.getuid()}"
    planted.mkdir()
    planted.chmod(mode)

    assert refusal({}) == (
        f"refusing the runtime directory {planted}: open to group or others (mode {mode:04o})"
    )


def test_a_symlink_in_place_of_the_runtime_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "theirs").mkdir(mode=0o700)
    (tmp_path / "cafleet").symlink_to(tmp_path / "theirs")

    assert refusal({"XDG_RUNTIME_DIR": str(tmp_path)}) == (
        f"refusing the runtime directory {tmp_path / 'cafleet'}: a symbolic link, not a directory"
    )


def test_a_runtime_directory_of_another_user_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "cafleet").mkdir(mode=0o700)
    me = os.getuid()
    monkeypatch.setattr(os, "getuid", lambda: me + 1)  # as if another user had made both

    assert refusal({"XDG_RUNTIME_DIR": str(tmp_path)}) == (
        f"refusing the runtime directory {tmp_path}: owned by uid {me}, not by this user"
        f" (uid {me + 1})"
    )


def test_xdg_runtime_dir_itself_must_be_private(tmp_path: Path) -> None:
    base = tmp_path / "xdg"
    base.mkdir()
    base.chmod(0o755)

    assert refusal({"XDG_RUNTIME_DIR": str(base)}) == (
        f"refusing the runtime directory {base}: open to group or others (mode 0755)"
    )
    assert not (base / "cafleet").exists()


def test_a_runtime_path_that_is_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "cafleet").write_text("in the way")

    assert refusal({"XDG_RUNTIME_DIR": str(tmp_path)}) == (
        f"refusing the runtime directory {tmp_path / 'cafleet'}: not a directory"
    )


def test_a_symlink_planted_as_a_lock_file_is_not_followed(tmp_path: Path) -> None:
    target = tmp_path / "victim-file"
    directory = tmp_path / "run"
    directory.mkdir(mode=0o700)
    (directory / "pane-k.lock").symlink_to(target)

    with pytest.raises(Unavailable) as raised, FileLocks(directory).hold("k", SHORT):
        pass

    assert raised.value.message == (
        f"cannot use the send lock {directory / 'pane-k.lock'}: a symbolic link, not a regular file"
    )
    assert not target.exists()


def test_a_lock_file_others_may_write_is_refused(tmp_path: Path) -> None:
    (tmp_path / "pane-k.lock").touch()
    (tmp_path / "pane-k.lock").chmod(0o666)

    with (
        pytest.raises(Unavailable, match="open to group or others"),
        FileLocks(tmp_path).hold("k", SHORT),
    ):
        pass
