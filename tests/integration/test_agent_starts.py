"""ProcAgentStarts on the real /proc: the start environment of the nearest ancestor that
lacks the markers, and nothing where the walk meets an ancestor it cannot read."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path

from cafleet.adapters.agents.starts import ProcAgentStarts

PROBE = (
    "import json, sys; from cafleet.adapters.agents.starts import ProcAgentStarts;"
    " print(json.dumps(ProcAgentStarts().environment(sys.argv[1:])))"
)


def test_the_agent_is_the_first_ancestor_without_the_markers() -> None:
    """A stand-in agent (a shell started without the marker) exports it for its tool (a
    second shell) which runs the probe: the answer is what the first shell was given."""
    marker = f"CAFLEET_TEST_MARKER_{uuid.uuid4().hex}"
    tool = f"export {marker}=1 PAGER=cat; sh -c '{sys.executable} -c \"$PROBE\" {marker}; exit $?'"
    agent_env = {"PATH": "/usr/bin:/bin", "PAGER": "less", "PROBE": PROBE,
                 "PYTHONPATH": ":".join(sys.path)}  # fmt: skip

    done = subprocess.run(
        ["/bin/sh", "-c", f"{tool}; exit $?"],
        env=agent_env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )

    assert json.loads(done.stdout) == agent_env


def test_a_walk_that_reaches_no_process_without_the_markers_knows_nothing(tmp_path: Path) -> None:
    """As inside a sandbox with its own pid namespace: the first process has the markers
    too, and its parent (0) is outside."""
    for pid, ppid, env in ((7, 2, b"M=1\0"), (2, 0, b"M=1\0PAGER=cat\0")):
        (tmp_path / str(pid)).mkdir()
        (tmp_path / str(pid) / "stat").write_text(f"{pid} (a (b) c) S {ppid} 1 1 0 -1\n")
        (tmp_path / str(pid) / "environ").write_bytes(env)

    assert ProcAgentStarts(tmp_path, pid=7).environment(["M"]) is None
    assert ProcAgentStarts(tmp_path, pid=7).environment(["OTHER"]) == {"M": "1", "PAGER": "cat"}


def test_an_unreadable_ancestor_knows_nothing(tmp_path: Path) -> None:
    (tmp_path / "7").mkdir()
    (tmp_path / "7" / "stat").write_text("7 (sh) S 3 1 1 0 -1\n")  # 3 has no entry

    assert ProcAgentStarts(tmp_path, pid=7).environment(["M"]) is None
