"""What runs in a herdr pane, from `pane.process_info` (and `pane.get` for its identity)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from cafleet.adapters.herdr.client import dicts


def foreground(process_info: Mapping[str, Any]) -> tuple[bool, str]:
    """(dead, foreground command) from a `pane.process_info` result.

    Shape assumed (herdr's API schema; unchecked): `{"process_info": {"pane_id", "shell_pid"?,
    "foreground_process_group_id"?, "foreground_processes": [{"pid", "name", "argv0"?,
    "argv"?, "cmdline"?}]}}`. The command is the base name of argv[0] of the foreground
    group's leader (what tmux's #{pane_current_command} shows), falling back to the first
    listed process and to its `name`. Missing or unreadable data gives "" (cannot tell).
    Dead: the server reports the pane but neither a process nor a shell pid.
    """
    info = _process_info(process_info)
    processes = list(dicts(info.get("foreground_processes") or info.get("processes")))
    leader = _leader(info)
    dead = bool(info.get("pane_id")) and not info.get("shell_pid") and not processes
    if leader is None:
        return dead, ""
    return False, _command_name(leader)


def foreground_argv(process_info: Mapping[str, Any]) -> tuple[str, ...] | None:
    """The foreground group leader's `argv` from a `pane.process_info` result; None when
    the server did not give it as a list of strings."""
    leader = _leader(_process_info(process_info))
    argv = leader.get("argv") if leader is not None else None
    if isinstance(argv, list) and argv and all(isinstance(word, str) for word in argv):
        return tuple(argv)
    return None


def _process_info(result: Mapping[str, Any]) -> Mapping[str, Any]:
    info = result.get("process_info")
    return info if isinstance(info, dict) else result


def _leader(info: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The foreground group's leader, else the first listed foreground process."""
    processes = list(dicts(info.get("foreground_processes") or info.get("processes")))
    leader_pid = info.get("foreground_process_group_id")
    leader = next((p for p in processes if p.get("pid") == leader_pid), None)
    return leader or (processes[0] if processes else None)


def identity(pane: Mapping[str, Any], process_info: Mapping[str, Any]) -> str:
    """A herdr pane's identity from `pane.get` (terminal_id) and `pane.process_info`
    (shell_pid, the pid of the process the pane started); "" parts when not reported."""
    info = _process_info(process_info)
    terminal, pid = pane.get("terminal_id"), info.get("shell_pid")
    return f"{terminal if isinstance(terminal, str) else ''}.{pid if isinstance(pid, int) else ''}"


def _command_name(process: Mapping[str, Any]) -> str:
    argv = process.get("argv")
    cmdline = process.get("cmdline")
    for candidate in (
        process.get("argv0"),
        argv[0] if isinstance(argv, list) and argv else None,
        process.get("name"),
        cmdline.split()[0] if isinstance(cmdline, str) and cmdline.split() else None,
    ):
        if isinstance(candidate, str) and candidate:
            return os.path.basename(candidate)
    return ""
