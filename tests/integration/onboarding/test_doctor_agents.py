"""`cafleet doctor` shows each coding agent's resolved profile and whether its binary is on
PATH, with the user's overrides applied."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from pathlib import Path
from typing import Any

from cafleet.domain.agents.claude import CLAUDE_FLOOR


def fake_binary(directory: Path, name: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(0o755)
    return path


def agents_of(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {a["coding_agent"]: a for a in report["agents"]}


def test_doctor_json_lists_every_agent_with_its_binary_and_command_line(
    installed: Any, tmp_path: Path
) -> None:
    claude = fake_binary(tmp_path / "bin", "claude")
    path = f"{claude.parent}{os.pathsep}/usr/bin{os.pathsep}/bin"

    done = installed.run("--json", "doctor", env={"PATH": path})

    agents = agents_of(json.loads(done.stdout))
    assert sorted(agents) == ["claude", "codex", "opencode"]
    assert agents["claude"]["binary"] == str(claude)
    argv = agents["claude"]["argv"]
    assert argv[0] == str(claude)
    assert argv[argv.index("--allowedTools") + 1] == ",".join(CLAUDE_FLOOR)
    assert argv[-2:] == ["--", "<prompt>"]
    assert agents["claude"]["ready_rules"] == ["hook", "screen", "wait"]
    assert agents["codex"]["binary"] is None
    assert "--no-daemon" in agents["codex"]["argv"]
    assert agents["codex"]["argv"][agents["codex"]["argv"].index("--add-dir") + 1] == str(
        installed.db_path.parent
    )
    assert "<free port>" in agents["opencode"]["argv"]


def test_doctor_shows_that_codex_may_write_the_repositorys_git_directory(installed: Any) -> None:
    subprocess.run(["git", "init", "-q", str(installed.home)], check=True)
    path = f"/usr/bin{os.pathsep}/bin"

    without_git = agents_of(
        json.loads(installed.run("--json", "doctor", env={"PATH": "/nowhere"}).stdout)
    )
    inside = agents_of(json.loads(installed.run("--json", "doctor", env={"PATH": path}).stdout))

    git_dir = str((installed.home / ".git").resolve())
    assert inside["codex"]["argv"][-4:] == ["--add-dir", git_dir, "--", "<prompt>"]
    assert git_dir not in without_git["codex"]["argv"]  # no git on PATH: nothing to add
    assert git_dir not in inside["claude"]["argv"]


def test_doctor_applies_the_users_overrides(installed: Any) -> None:
    done = installed.run(
        "--json",
        "doctor",
        env={
            "CAFLEET_AGENT_ARGS_CODEX": "-c model_reasoning_effort=high",
            "CAFLEET_SUBMIT_DELAY_OPENCODE": "0.7",
            "CAFLEET_READY_RULES_CLAUDE": "screen",
            "CAFLEET_AGENT_COMMANDS_CLAUDE": "claude,2.1.332",
        },
    )
    hooked = agents_of(
        json.loads(
            installed.run("--json", "doctor", env={"CAFLEET_READY_RULES_CLAUDE": "screen"}).stdout
        )
    )["claude"]
    unhooked = agents_of(
        json.loads(
            installed.run(
                "--json",
                "doctor",
                env={"CAFLEET_READY_RULES_CLAUDE": "screen", "CAFLEET_CHANNELS_CLAUDE": "keys"},
            ).stdout
        )
    )["claude"]

    agents = agents_of(json.loads(done.stdout))
    codex = agents["codex"]["argv"]
    assert codex[codex.index("--", 1) - 2 : codex.index("--", 1)] == [
        "-c",
        "model_reasoning_effort=high",
    ]
    assert agents["opencode"]["submit_delay"] == 0.7
    assert agents["claude"]["ready_rules"] == ["screen"]
    assert "--settings" in hooked["argv"]  # the hook channel still needs its hooks
    assert hooked["channels"] == ["claude-hook", "herdr-prompt", "keys"]
    assert "--settings" not in unhooked["argv"]  # no hook to hand over
    assert unhooked["channels"] == ["keys"]
    assert agents["claude"]["foreground_names"] == ["claude", "2.1.332"]


def test_doctor_text_says_where_each_agent_is_or_that_it_is_missing(
    installed: Any, tmp_path: Path
) -> None:
    claude = fake_binary(tmp_path / "bin", "claude")
    path = f"{claude.parent}{os.pathsep}/usr/bin{os.pathsep}/bin"

    done = installed.run("doctor", env={"PATH": path})

    text = done.stdout
    assert f"  claude: {claude}" in text
    assert "  codex: not found on PATH" in text
    runs = next(line for line in text.splitlines() if line.strip().startswith("runs:"))
    assert shlex.split(runs.split(":", 1)[1])[0] == str(claude)
    assert "submit:   0.05s after the text, then checked" in text


def test_doctor_says_which_agent_binaries_are_on_path_and_what_to_do_next(
    installed: Any, tmp_path: Path
) -> None:
    demo = fake_binary(tmp_path / "bin", "cafleet-demo-agent")
    path = f"{demo.parent}{os.pathsep}/usr/bin{os.pathsep}/bin"

    as_json = json.loads(installed.run("--json", "doctor", env={"PATH": path}).stdout)
    text = installed.run("doctor", env={"PATH": path}).stdout

    assert as_json["on_path"] == {
        "claude": None,
        "codex": None,
        "opencode": None,
        "cafleet-demo-agent": str(demo),
    }
    assert "\non PATH:\n  claude:             not found\n" in text
    assert f"\n  cafleet-demo-agent: {demo}\n" in text
    assert text.endswith(f"\nnext: {as_json['next']}\n")
