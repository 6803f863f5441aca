"""The opencode agent preset that `opencode --agent cafleet` loads.

opencode has no dontAsk-style command-line flag, so the permission floor for members lives in
an agent file in the user's global opencode config, `AgentHomes.opencode_preset`
(`$XDG_CONFIG_HOME/opencode/agents/cafleet.md`, else under `~/.config`). The file is the
user's to edit once it exists, so it is written only when absent and never replaced.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from cafleet.domain.errors import Invalid

_DENIED_BASH = (
    "bash -c*",
    "sh -c*",
    "zsh -c*",
    "python -c*",
    "python3 -c*",
    "perl -e*",
    "node -e*",
    "node --eval*",
    "ruby -e*",
    "eval*",
    "exec*",
    "rm -rf*",
    "sudo*",
    "git push*",
    "git reset --hard*",
    "chmod*",
    "chown*",
    "curl*",
    "wget*",
    "nc*",
    "ssh*",
    "scp*",
    "rsync*",
    "osascript*",
)
_DENIED_TOOLS = (
    "external_directory",
    "webfetch",
    "websearch",
    "repo_clone",
    "question",
    "plan_enter",
    "plan_exit",
)
_SECRET_FILES = ("**/.env", "**/.env.*")

_BODY = """\
# CAFleet member agent

The permission rules in the frontmatter give this agent a floor comparable to Claude Code's
dontAsk mode: ordinary work inside the workspace goes ahead without questions, and the risky
commands and tools listed there are refused outright. Take your task from the spawn prompt the
Director wrote and follow it.
"""


def _permissions() -> dict[str, object]:
    # opencode applies the last matching rule, so the catch-all "*" comes first.
    files = {"*": "allow", **dict.fromkeys(_SECRET_FILES, "deny")}
    return {
        "bash": {"*": "allow", **dict.fromkeys(_DENIED_BASH, "deny")},
        "read": files,
        "edit": dict(files),
        **dict.fromkeys(_DENIED_TOOLS, "deny"),
    }


def preset_text() -> str:
    frontmatter = {
        "description": (
            "CAFleet-spawned member with workspace-scoped permission floor;"
            " matches Claude Code dontAsk safety posture."
        ),
        "mode": "primary",
        "permission": _permissions(),
    }
    return f"---\n{json.dumps(frontmatter, indent=2)}\n---\n\n{_BODY}"


def ensure_opencode_preset(path: Path) -> Path:
    """Write the preset at `path` unless a file is already there; return `path`."""
    if os.path.lexists(path):
        _require_regular_file(path)
        return path
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        created = _create_exclusively(path, preset_text())
    except OSError as exc:
        raise Invalid(
            f"cannot materialize CAFleet opencode agent preset: {path}: {exc.strerror or exc}"
        ) from None
    if not created:  # another process wrote it first
        _require_regular_file(path)
    return path


def _require_regular_file(path: Path) -> None:
    if not path.is_file():  # follows symlinks, so a link to a regular file is fine
        raise Invalid(
            f"cannot materialize CAFleet opencode agent preset: {path} exists but is not"
            " a regular file; refusing to overwrite"
        )


def _create_exclusively(path: Path, text: str) -> bool:
    """Publish a complete file at `path` atomically; False when something is already there.

    The content goes to a temporary file first and is hard-linked into place, so an opencode
    starting concurrently never reads a half-written preset.
    """
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".cafleet-", suffix=".md")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        try:
            os.link(temporary, path)
        except FileExistsError:
            return False
        return True
    finally:
        os.unlink(temporary)
