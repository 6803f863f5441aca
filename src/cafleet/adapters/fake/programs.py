"""Programs on a pretend PATH: name -> absolute path, path -> first line."""

from __future__ import annotations

from collections.abc import Mapping

from cafleet.application.ports.agents import Programs


class FakePrograms(Programs):
    def __init__(
        self, paths: Mapping[str, str] | None = None, first_lines: Mapping[str, str] | None = None
    ) -> None:
        self.paths = dict(paths or {})
        self.first_lines = dict(first_lines or {})
        self.looked_up: list[str] = []

    def which(self, name: str) -> str | None:
        self.looked_up.append(name)
        return self.paths.get(name)

    def first_line(self, path: str) -> str | None:
        return self.first_lines.get(path)
