"""The README's "Use" section runs as written on a machine without any coding agent.

Every ```bash block of that section is run, in order, by the shell of a pane of a private tmux
server, as a user would type it: a fresh HOME, XDG directories and database, and a PATH that
holds this installation's scripts (`cafleet`, `cafleet-demo-agent`) and the system's, with no
claude, codex or opencode. Each block must exit 0; the poll must show the demo agent's answer
and the ack must succeed. This is also the fresh-HOME test: `cafleet setup` with no agent
home, then fleet create, member create with the demo agent, send, poll, ack and fleet delete.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import sys
import time
from pathlib import Path

import pytest

from support.tmux import TmuxServer

pytestmark = [pytest.mark.tmux, pytest.mark.slow]

README = Path(__file__).resolve().parents[3] / "README.md"
REAL_AGENTS = ("claude", "codex", "opencode")
BLOCK_TIMEOUT = 180.0  # seconds; a block spawns at most one member and waits for one answer


def use_section_blocks(readme: str) -> list[str]:
    """The ```bash / ```sh blocks between `## Use` and the next `## ` heading, in order."""
    section = readme.split("\n## Use\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^```(?:bash|sh)\n(.*?)^```$", section, flags=re.M | re.S)


def scripts_dir() -> Path:
    """Where this interpreter's console scripts are (the virtualenv's bin)."""
    return Path(sys.executable).parent


def agent_free_path() -> str:
    path = os.pathsep.join([str(scripts_dir()), "/usr/bin", "/bin"])
    present = [a for a in REAL_AGENTS if shutil.which(a, path=path)]
    if present:
        pytest.skip(f"a coding agent is on the system PATH: {', '.join(present)}")
    return path


class PaneShell:
    """Types `sh run.sh <block>` into the pane and waits for the block's exit code file."""

    def __init__(self, server: TmuxServer, work: Path, env: dict[str, str]) -> None:
        self.server = server
        self.work = work
        # the block runs with exactly this environment plus the pane's own tmux variables
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in sorted(env.items()))
        (work / "run.sh").write_text(
            f'n=$1\ncd {shlex.quote(str(work))}\nenv -i {exports} TMUX="$TMUX"'
            ' TMUX_PANE="$TMUX_PANE" bash -e -o pipefail "block-$n.sh" > "block-$n.out" 2>&1\n'
            'echo $? > "block-$n.rc"\n'
        )

    def run(self, number: int, block: str) -> tuple[int, str]:
        (self.work / f"block-{number}.sh").write_text(block)
        rc_file = self.work / f"block-{number}.rc"
        command = f"sh {shlex.quote(str(self.work / 'run.sh'))} {number}"
        self.server.run("send-keys", "-t", self.server.pane_id, "-l", command)
        self.server.run("send-keys", "-t", self.server.pane_id, "Enter")
        deadline = time.monotonic() + BLOCK_TIMEOUT
        while not (rc_file.exists() and rc_file.read_text().strip()):
            if time.monotonic() > deadline:
                pytest.fail(f"README block {number} did not finish:\n{block}")
            time.sleep(0.2)
        output = (self.work / f"block-{number}.out").read_text(errors="replace")
        return int(rc_file.read_text()), output


def test_the_use_section_has_the_whole_walk_through() -> None:
    commands = "\n".join(use_section_blocks(README.read_text()))

    for step in ("setup", "fleet create", "member create", "message send", "message poll",
                 "message ack", "message show", "fleet delete"):  # fmt: skip
        assert f"cafleet {step}" in commands, step
    assert "cafleet-demo-agent" in commands
    assert not re.search(r"--coding-agent (claude|codex|opencode)", commands)


def test_the_use_section_runs_as_written_without_a_coding_agent(
    tmux: TmuxServer, tmp_path: Path
) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    for directory in (home, work, tmp_path / "run"):
        directory.mkdir(mode=0o700)
    env = {
        "HOME": str(home),
        "PATH": agent_free_path(),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_RUNTIME_DIR": str(tmp_path / "run"),
        "TERM": "xterm-256color",
        "LANG": "C.UTF-8",
    }
    if os.environ.get("PYTHONPATH"):  # a checkout run from its source tree
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    shell = PaneShell(tmux, work, env)
    blocks = use_section_blocks(README.read_text())
    outputs = []

    for number, block in enumerate(blocks, 1):
        code, output = shell.run(number, block)
        assert code == 0, f"README block {number} exited {code}:\n{block}\n---\n{output}"
        outputs.append(output)

    everything = "\n".join(outputs)
    assert "agents: installed cafleet" in everything  # no agent home: the shared folder
    assert (home / ".agents" / "skills" / "cafleet" / "SKILL.md").is_file()
    assert (home / ".local" / "share" / "cafleet" / "cafleet_v2.db").is_file()
    assert re.search(r"\[2 \| from:3 \| [^\]]+\]\npong 1\n", everything), everything
    assert "Message acknowledged." in everything
    assert "Deleted fleet 1." in everything
