"""Member start-up directories in the private runtime directory (the LaunchPads port).

Each spawn gets `<runtime>/members/<fleet>-<agent>-<random>/`, mode 0700, holding the launch
file the launcher reads and deletes, the agent's hook settings, the hooks' event file and the
launcher's status. Nothing in it is ever on a command line but its path.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import secrets
import shutil
import socket
import sys
import urllib.error
import urllib.request
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path

from cafleet.application.ports import HttpEndpoint, LauncherStatus, LaunchPad, LaunchPads
from cafleet.domain.errors import Unavailable

LAUNCH_MODULE = "cafleet.launch"
HOOK_MODULE = "cafleet.hook"
HTTP_TIMEOUT_SECONDS = 1.0


class DirectoryLaunchPad(LaunchPad):
    def __init__(self, directory: Path, python: str) -> None:
        self.directory = directory
        self._python = python
        self._endpoint: HttpEndpoint | None = None

    def launcher(self, argv: Sequence[str], env: Mapping[str, str], cwd: str) -> list[str]:
        data = {
            "argv": list(argv),
            "env": dict(env),
            "cwd": cwd,
            "inherit": False,
            "state": str(self.directory),
        }
        path = self._create("launch.json", json.dumps(data))
        return [self._python, "-m", LAUNCH_MODULE, path]

    def write(self, name: str, text: str) -> str:
        return self._create(name, text)

    def event_recorder(self) -> list[str]:
        return [self._python, "-m", HOOK_MODULE, str(self.directory / "events")]

    def endpoint(self) -> HttpEndpoint:
        with socket.socket() as probe:  # the kernel picks a free port; the agent binds it next
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        self._endpoint = HttpEndpoint(port, secrets.token_urlsafe(24))
        self._create("endpoint.json", json.dumps(self._endpoint.__dict__))
        return self._endpoint

    def get(self, path: str, user: str) -> str | None:
        if self._endpoint is None:
            return None
        token = base64.b64encode(f"{user}:{self._endpoint.password}".encode()).decode()
        request = urllib.request.Request(
            f"http://127.0.0.1:{self._endpoint.port}{path}",
            headers={"Authorization": f"Basic {token}"},
        )
        try:
            with urllib.request.urlopen(request, timeout=HTTP_TIMEOUT_SECONDS) as answer:
                body: bytes = answer.read()
        except (OSError, urllib.error.URLError, ValueError):
            return None
        return body.decode("utf-8", "replace")

    def status(self) -> LauncherStatus:
        try:
            word, _, number = (self.directory / "status").read_text().strip().partition(" ")
            value = int(number)
        except (OSError, ValueError):
            return LauncherStatus()
        return LauncherStatus(exit_code=value) if word == "exited" else LauncherStatus(pid=value)

    def events(self) -> tuple[str, ...]:
        try:
            lines = (self.directory / "events").read_text().splitlines()
        except OSError:
            return ()
        return tuple(line.split(" ", 1)[0] for line in lines if line)

    def mark_ready(self) -> None:
        with contextlib.suppress(OSError):
            (self.directory / "ready").touch(mode=0o600)

    def discard(self) -> None:
        shutil.rmtree(self.directory, ignore_errors=True)

    def _create(self, name: str, text: str) -> str:
        path = self.directory / name
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
        except OSError as exc:
            raise Unavailable(f"cannot write {path}: {exc.strerror or exc}") from None
        return str(path)


class RuntimeLaunchPads(LaunchPads):
    def __init__(self, runtime: Path, python: str | None = None) -> None:
        self._root = runtime / "members"
        self._python = python or sys.executable

    def prepare(self, fleet_id: int, agent_id: int) -> DirectoryLaunchPad:
        directory = self._root / f"{fleet_id}-{agent_id}-{uuid.uuid4().hex[:12]}"
        try:
            self._root.mkdir(mode=0o700, exist_ok=True)
            directory.mkdir(mode=0o700)
        except OSError as exc:
            raise Unavailable(f"cannot create {directory}: {exc.strerror or exc}") from None
        return DirectoryLaunchPad(directory, self._python)
