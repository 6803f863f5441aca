"""The PaneLocks contract, for the in-process ThreadLocks and the fcntl-based FileLocks:
exclusive per key, TimeoutError after the timeout, independent keys. FileLocks must also
exclude another process."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cafleet.adapters.fake.pane_driver import ThreadLocks
from cafleet.adapters.pane_locks import FileLocks, runtime_directory
from cafleet.application.ports import PaneLocks

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
from cafleet.adapters.pane_locks import FileLocks
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
