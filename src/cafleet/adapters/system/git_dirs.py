"""The git directories of a working directory's repository: a member whose sandbox keeps them
read-only (Codex's workspace-write) cannot `git add` or `git commit` unless they are added."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping

GIT_TIMEOUT_SECONDS = 5.0


def git_directories(cwd: str, env: Mapping[str, str]) -> tuple[str, ...]:
    """The repository's git directory and the common one a linked worktree shares (absolute,
    one that lies inside another left out); () outside a repository or without git.

    Asked of git itself, with the caller's environment (GIT_DIR and the like), since that is
    what the member's git will use."""
    git = shutil.which("git", path=env.get("PATH"))
    if git is None:
        return ()
    try:
        done = subprocess.run(
            [git, "rev-parse", "--absolute-git-dir", "--git-common-dir"],
            cwd=cwd,
            env=dict(env),
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return ()
    if done.returncode != 0:
        return ()
    found = [os.path.realpath(os.path.join(cwd, line)) for line in done.stdout.splitlines() if line]
    kept = [path for path in found if not any(_inside(path, other) for other in found)]
    return tuple(dict.fromkeys(kept))


def _inside(path: str, other: str) -> bool:
    return path != other and path.startswith(other.rstrip(os.sep) + os.sep)
