"""Finding executables on PATH and reading a script's first line."""

from __future__ import annotations

import shutil
from collections.abc import Mapping

from cafleet.application.ports.agents import Programs


class SystemPrograms(Programs):
    def __init__(self, env: Mapping[str, str]) -> None:
        self._path = env.get("PATH")

    def which(self, name: str) -> str | None:
        return shutil.which(name, path=self._path)

    def first_line(self, path: str) -> str | None:
        try:
            with open(path, "rb") as handle:
                return handle.readline(512).decode("utf-8", errors="replace").rstrip("\n")
        except OSError:
            return None
