"""The git directories a sandboxed member must write to commit, asked of the real git."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from cafleet.adapters.system.git_dirs import git_directories

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
ENV = {"PATH": os.environ.get("PATH", ""), "HOME": "/nonexistent", "GIT_CONFIG_NOSYSTEM": "1"}


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, env=ENV, check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    main = tmp_path / "main"
    main.mkdir()
    git(main, "init", "-q")
    git(main, "-c", "user.name=M", "-c", "user.email=m@x", "commit", "-q",
        "--allow-empty", "-m", "start")  # fmt: skip
    return main.resolve()  # git names directories by their real path


def test_a_repository_has_its_git_directory_from_anywhere_inside(repo: Path) -> None:
    (repo / "src/pkg").mkdir(parents=True)

    assert git_directories(str(repo), ENV) == (str(repo / ".git"),)
    assert git_directories(str(repo / "src/pkg"), ENV) == (str(repo / ".git"),)


def test_a_linked_worktree_needs_the_common_directory_which_holds_its_own(repo: Path) -> None:
    worktree = repo.parent / "wt"
    git(repo, "worktree", "add", "-q", str(worktree), "-b", "side")

    # the worktree's git directory (main/.git/worktrees/wt) lies inside the common one
    assert git_directories(str(worktree), ENV) == (str(repo / ".git"),)


def test_outside_a_repository_or_without_git_there_is_none(repo: Path, tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()

    assert (
        git_directories(str(tmp_path / "plain"), {**ENV, "GIT_CEILING_DIRECTORIES": str(tmp_path)})
        == ()
    )
    assert git_directories(str(repo), {**ENV, "PATH": str(tmp_path / "plain")}) == ()
    assert git_directories(str(tmp_path / "gone"), ENV) == ()
