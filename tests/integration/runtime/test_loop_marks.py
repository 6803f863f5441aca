"""Loop marks and waiting hooks told by a lock another process holds, not by its pid: real
files, real processes (a child holds, this process tests)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from cafleet.adapters.runtime.loop_marks import FileLoopMarks
from cafleet.adapters.runtime.mailbox import Mailbox
from cafleet.application.ports.system import LoopMark
from cafleet.domain.errors import Unavailable

# no CAFLEET_*, multiplexer or agent-home variable of the outer shell leaks in
pytestmark = pytest.mark.usefixtures("outer_variables_removed")

NOBODY = 2**22 + 11  # above the largest pid Linux hands out: no process has it here

HOLDER = """
import sys
from pathlib import Path
from cafleet.adapters.runtime.loop_marks import FileLoopMarks
from cafleet.adapters.runtime.mailbox import Mailbox

kind, where, name = sys.argv[1:]
if kind == "mark":
    marks = FileLoopMarks(lambda: Path(where), "store")
    print(marks.hold(name), flush=True)
    marks.write(name, "claim of the child")
    print(marks.read(name), flush=True)  # reading its own mark must not drop it
else:
    Mailbox(Path(where)).enlist(int(name))
print("holding", flush=True)
sys.stdin.read()
"""


@dataclass
class Held:
    """A child process holding a mark or waiting for mail, and what it printed first."""

    process: subprocess.Popen[str]
    said: list[str]

    @property
    def pid(self) -> int:
        return self.process.pid

    def end(self) -> None:
        self.process.kill()
        self.process.wait()


Holder = Callable[[str, Path, str], Held]


@pytest.fixture
def holder() -> Iterator[Holder]:
    started: list[Held] = []

    def start(kind: str, where: Path, name: str) -> Held:
        child = subprocess.Popen(
            [sys.executable, "-c", HOLDER, kind, str(where), name],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert child.stdout is not None
        said = []
        while (line := child.stdout.readline()) and line.strip() != "holding":
            said.append(line.strip())
        started.append(Held(child, said))
        return started[-1]

    yield start
    for held in started:
        held.end()


def marks_in(directory: Path) -> FileLoopMarks:
    directory.mkdir(mode=0o700, exist_ok=True)
    return FileLoopMarks(lambda: directory, "store")


def test_a_mark_another_process_holds_is_held_under_its_pid_until_it_ends(
    tmp_path: Path, holder: Holder
) -> None:
    marks = marks_in(tmp_path / "run")
    child = holder("mark", tmp_path / "run", "monitor-1")

    assert child.said[0] == str(LoopMark(held=False, claim=""))  # it took it
    assert child.said[1].startswith("LoopMark(held=True")  # and still holds it after a read
    assert marks.read("monitor-1") == LoopMark(True, child.pid, "claim of the child")
    assert marks.hold("monitor-1") == LoopMark(True, child.pid, "claim of the child")

    child.end()

    assert marks.read("monitor-1") == LoopMark(False, 0, "claim of the child")
    assert marks.hold("monitor-1") == LoopMark(False, 0, "claim of the child")  # taken now


def test_marks_of_another_store_or_loop_are_other_marks(tmp_path: Path, holder: Holder) -> None:
    (tmp_path / "run").mkdir(mode=0o700)
    holder("mark", tmp_path / "run", "monitor-1")

    other_store = FileLoopMarks(lambda: tmp_path / "run", "another store")
    assert other_store.read("monitor-1") is None  # never made
    assert marks_in(tmp_path / "run").read("monitor-2") is None


def test_without_a_runtime_directory_nothing_can_be_told(tmp_path: Path) -> None:
    def refused() -> Path:
        raise Unavailable("refusing the runtime directory")

    marks = FileLoopMarks(refused, "store")

    assert marks.hold("monitor-1") is None
    assert marks.read("monitor-1") is None


def test_a_waiting_hook_is_told_by_its_lock_not_by_its_pid(tmp_path: Path, holder: Holder) -> None:
    """A waiter whose pid this process does not see (a sender in a sandbox) still waits; a
    leftover waiter file whose process is gone does not."""
    pad = tmp_path / "pad"
    pad.mkdir(mode=0o700)
    child = holder("waiter", pad, str(NOBODY))

    assert Mailbox(pad).has_waiter()

    child.end()

    assert not Mailbox(pad).has_waiter()
