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
import sys
import uuid
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

from cafleet.adapters.runtime.launch_module import LAUNCH_MODULE
from cafleet.adapters.runtime.mailbox import Mailbox
from cafleet.adapters.runtime.private_files import (
    check_private_directory,
    create_private,
    private_directory,
    problem_of,
    read_private,
    touch_private,
)
from cafleet.application.ports.agents import HttpEndpoint, LauncherStatus, LaunchPad, LaunchPads
from cafleet.domain.agents.status import HookEvent
from cafleet.domain.errors import Unavailable

HOOK_MODULE = "cafleet.entrypoints.processes.hook"
HTTP_TIMEOUT_SECONDS = 1.0
POST_TIMEOUT_SECONDS = 5.0  # a prompt handed over must not be given up on while it lands
ENDPOINT = "endpoint.json"


class DirectoryLaunchPad(LaunchPad):
    def __init__(self, directory: Path, python: str) -> None:
        self.directory = directory
        self._python = python
        self._endpoint: HttpEndpoint | None = None
        self._mailbox = Mailbox(directory)

    @property
    def location(self) -> str:
        return str(self.directory)

    @staticmethod
    def reopened(directory: Path, python: str) -> DirectoryLaunchPad:
        pad = DirectoryLaunchPad(directory, python)
        with contextlib.suppress(OSError, ValueError, TypeError, KeyError):
            data = json.loads(read_private(directory / ENDPOINT))
            pad._endpoint = HttpEndpoint(int(data["port"]), str(data["password"]))
        return pad

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
        import secrets
        import socket

        with socket.socket() as probe:  # the kernel picks a free port; the agent binds it next
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        self._endpoint = HttpEndpoint(port, secrets.token_urlsafe(24))
        self._create(ENDPOINT, json.dumps(self._endpoint.__dict__))
        return self._endpoint

    def get(self, path: str, user: str) -> str | None:
        answer = self._request(path, user, None)
        return None if answer is None or answer[0] >= 300 else answer[1]

    def post(
        self, path: str, user: str, payload: Mapping[str, object], timeout: float | None = None
    ) -> int | None:
        wait = POST_TIMEOUT_SECONDS if timeout is None else timeout
        answer = self._request(path, user, json.dumps(payload).encode(), wait)
        return None if answer is None else answer[0]

    def _request(
        self, path: str, user: str, body: bytes | None, timeout: float = HTTP_TIMEOUT_SECONDS
    ) -> tuple[int, str] | None:
        if self._endpoint is None:
            return None
        # imported here: a command that talks to no agent's server must not load
        # http.client, ssl and email (3 MiB and 20 ms)
        import urllib.error
        import urllib.request

        token = base64.b64encode(f"{user}:{self._endpoint.password}".encode()).decode()
        headers = {"Authorization": f"Basic {token}"}
        if body is not None:
            headers["Content-Type"] = "application/json"
        request = urllib.request.Request(
            f"http://127.0.0.1:{self._endpoint.port}{path}", data=body, headers=headers
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout) as answer:
                status: int = answer.status
                text: bytes = answer.read()
        except urllib.error.HTTPError as refused:
            return refused.code, ""
        except (OSError, urllib.error.URLError, ValueError):
            return None
        return status, text.decode("utf-8", "replace")

    def read(self, name: str) -> str | None:
        try:
            return read_private(self.directory / name)
        except (OSError, UnicodeDecodeError):
            return None

    def mail_waiter(self) -> list[str]:
        return [self._python, "-m", HOOK_MODULE, "wait", str(self.directory)]

    def mail_waiting(self) -> bool:
        return self._mailbox.has_waiter()

    def post_mail(self, task_id: int, text: str) -> None:
        try:
            self._mailbox.post(task_id, text)
        except OSError as exc:
            raise Unavailable(f"cannot post to {self.directory}: {exc.strerror or exc}") from None

    def mail_taken_at(self, task_id: int) -> datetime | None:
        taken = self._mailbox.taken_at(task_id)
        return None if taken is None else datetime.fromtimestamp(taken, UTC)

    def withdraw_mail(self, task_id: int) -> bool:
        return self._mailbox.withdraw(task_id)

    def status(self) -> LauncherStatus:
        try:
            word, _, number = read_private(self.directory / "status").strip().partition(" ")
            value = int(number)
        except (OSError, ValueError):  # UnicodeDecodeError is a ValueError
            return LauncherStatus()
        return LauncherStatus(exit_code=value) if word == "exited" else LauncherStatus(pid=value)

    def events(self) -> tuple[HookEvent, ...]:
        try:
            lines = read_private(self.directory / "events").splitlines()
        except (OSError, UnicodeDecodeError):
            return ()
        found = []
        for line in lines:
            name, _, stamp = line.partition(" ")
            with contextlib.suppress(ValueError, OverflowError, OSError):
                found.append(HookEvent(name, datetime.fromtimestamp(float(stamp), UTC)))
        return tuple(found)

    def remember(self, name: str, text: str) -> None:
        draft = self.directory / f".{name}.{uuid.uuid4().hex}"
        with contextlib.suppress(OSError):
            create_private(draft, text)
            os.replace(draft, self.directory / name)  # replaces a link, never follows it

    def mark_ready(self) -> None:
        with contextlib.suppress(OSError):
            touch_private(self.directory / "ready")

    def discard(self) -> None:
        import shutil

        shutil.rmtree(self.directory, ignore_errors=True)

    def _create(self, name: str, text: str) -> str:
        path = self.directory / name
        try:
            create_private(path, text)
        except OSError as exc:
            raise Unavailable(f"cannot write {path}: {problem_of(exc)}") from None
        return str(path)


class RuntimeLaunchPads(LaunchPads):
    def __init__(self, runtime: Path, python: str | None = None) -> None:
        self._runtime = runtime
        self._root = runtime / "members"
        self._python = python or sys.executable

    @property
    def runtime(self) -> str:
        return str(self._runtime)

    def prepare(self, fleet_id: int, agent_id: int) -> DirectoryLaunchPad:
        directory = self._root / f"{fleet_id}-{agent_id}-{uuid.uuid4().hex[:12]}"
        try:
            private_directory(self._root)
        except OSError as exc:
            raise Unavailable(f"cannot use {self._root}: {problem_of(exc)}") from None
        try:
            directory.mkdir(mode=0o700)
        except OSError as exc:
            raise Unavailable(f"cannot create {directory}: {problem_of(exc)}") from None
        return DirectoryLaunchPad(directory, self._python)

    def reopen(self, location: str) -> DirectoryLaunchPad | None:
        directory = Path(location)
        # only a pad of ours: a placement row must not point CAFleet at any other directory
        if directory.parent != self._root:
            return None
        try:
            check_private_directory(directory)
        except OSError:
            return None
        return DirectoryLaunchPad.reopened(directory, self._python)
