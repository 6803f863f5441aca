"""What a coding agent needs in its own settings to run `cafleet` as the Director, and whether
the user's settings give it (docs/agents.md, "The Director as a coding agent").

- Claude Code runs a Bash command only with a rule that allows it (in every mode but
  bypassPermissions; its default auto mode otherwise asks its server): `Bash(cafleet:*)` in
  `permissions.allow` of the user's or the project's settings.
- Codex runs its tools in a sandbox (workspace-write by default) that blocks Unix sockets
  (the multiplexer's) and writes outside the workspace and the temporary directory: its
  config.toml must set `[sandbox_workspace_write] network_access = true` and list the
  database's directory (and the runtime directory, when outside the temporary directory) in
  `writable_roots`, unless the sandbox is off (`sandbox_mode = "danger-full-access"`).
- OpenCode runs shell commands without asking unless the user's configuration asks first.

CAFleet never writes these settings; `cafleet setup` says what to add and `cafleet doctor`
checks it. Pure: the adapter reads the files.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from cafleet.domain.agents.claude import ALLOW_CAFLEET
from cafleet.domain.placement import CodingAgent

# rules that allow `cafleet ...` among Claude Code's: the command's own, or every Bash call
_CLAUDE_ALLOWS = re.compile(r"Bash(\((cafleet(:\*| \*|\*))\)|\(\*\))?")
NO_SANDBOX = "danger-full-access"


@dataclass(frozen=True)
class DirectorGrant:
    coding_agent: CodingAgent
    granted: bool
    line: str  # where it was found, or what to add and where


def claude_grant(settings: Sequence[tuple[str, object]]) -> DirectorGrant:
    """`settings`: (where, parsed JSON or None) of each settings file Claude Code reads, the
    user's first; the first that allows `cafleet` grants it."""
    for where, data in settings:
        if any(_CLAUDE_ALLOWS.fullmatch(rule) for rule in _allow_rules(data)):
            return DirectorGrant(CodingAgent.CLAUDE, True, f"allow rule for cafleet in {where}")
    user = settings[0][0] if settings else "settings.json"
    return DirectorGrant(
        CodingAgent.CLAUDE, False, f'add "{ALLOW_CAFLEET}" to permissions.allow in {user}'
    )


def _allow_rules(data: object) -> list[str]:
    permissions = data.get("permissions") if isinstance(data, dict) else None
    allow = permissions.get("allow") if isinstance(permissions, dict) else None
    return [rule for rule in allow if isinstance(rule, str)] if isinstance(allow, list) else []


def codex_grant(
    where: str, config: Mapping[str, object] | None, writable: Sequence[str]
) -> DirectorGrant:
    """`config`: the user's config.toml, parsed (None: absent or unreadable); `writable`:
    the directories its sandbox must let `cafleet` write."""
    config = config or {}
    if config.get("sandbox_mode") == NO_SANDBOX:
        return DirectorGrant(CodingAgent.CODEX, True, f"no sandbox ({where})")
    table = config.get("sandbox_workspace_write")
    options = table if isinstance(table, Mapping) else {}
    roots = options.get("writable_roots")
    listed = [r.rstrip("/") for r in roots if isinstance(r, str)] if isinstance(roots, list) else []
    missing = [d.rstrip("/") for d in writable if d.rstrip("/") not in listed]
    wanted = [] if options.get("network_access") is True else ["network_access = true"]
    if missing:
        wanted.append(f"writable_roots = [{', '.join(map(_quoted, [*listed, *missing]))}]")
    if not wanted:
        return DirectorGrant(CodingAgent.CODEX, True, f"sandbox grants for cafleet in {where}")
    return DirectorGrant(
        CodingAgent.CODEX,
        False,
        f"set {' and '.join(wanted)} under [sandbox_workspace_write] in {where}",
    )


def _quoted(path: str) -> str:
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'
