"""Onboarding: installing the bundled skills, the skills gate, and the doctor's report."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from cafleet.application.ports import Clock, SkillInstaller, UnitOfWorkFactory
from cafleet.domain.errors import Invalid
from cafleet.domain.skills import SKILL_NAMES, SkillHome, SkillInstall

NO_HOMES = (
    "no coding-agent homes detected (looked for {looked}); install a coding agent first,"
    " or pass --agent"
)


def shown(directory: Path, user_home: Path | None) -> str:
    """`directory`, written as `~/...` when it lies under the user's home."""
    if user_home is not None and directory.is_relative_to(user_home):
        return "~/" + str(directory.relative_to(user_home))
    return str(directory)


@dataclass(frozen=True)
class InstalledSkills:
    home: SkillHome
    version: str
    directory: Path
    kept: tuple[str, ...] = ()  # files there that CAFleet did not write

    def line(self, user_home: Path) -> str:
        where = shown(self.directory, user_home)
        return f"{self.home.value}: installed {', '.join(SKILL_NAMES)} (v{self.version}) -> {where}"

    def kept_line(self) -> str | None:
        if not self.kept:
            return None
        noun = "file" if len(self.kept) == 1 else "files"
        return (
            f"{self.home.value}: kept {len(self.kept)} {noun} CAFleet did not write: "
            + ", ".join(self.kept)
        )


class SkillsService:
    def __init__(
        self,
        uow: UnitOfWorkFactory,
        clock: Clock,
        installer: SkillInstaller,
        version: str,
        user_home: Path | None = None,
    ) -> None:
        self._uow = uow
        self._clock = clock
        self._installer = installer
        self._version = version
        self._user_home = user_home  # only for showing paths as ~/...

    def install(
        self,
        requested: Iterable[SkillHome] = (),
        on_installed: Callable[[InstalledSkills], None] = lambda _: None,
    ) -> list[InstalledSkills]:
        with self._uow() as uow:
            uow.installs.list()  # pre-flight: the table must exist
        targets = list(dict.fromkeys(requested)) or self._installer.detected_homes()
        if not targets:
            # each agent's home is the parent of its skills directory
            looked = (
                shown(self._installer.skills_dir(h).parent, self._user_home) for h in SkillHome
            )
            raise Invalid(NO_HOMES.format(looked=", ".join(looked)))
        done = []
        for home in targets:
            copied = self._installer.install(home)
            with self._uow(write=True) as uow:
                uow.installs.record(SkillInstall(home.value, self._version, self._clock.now()))
                uow.commit()
            installed = InstalledSkills(home, self._version, copied.directory, copied.kept)
            on_installed(installed)
            done.append(installed)
        return done

    def installs(self) -> list[SkillInstall]:
        with self._uow() as uow:
            return uow.installs.list()

    def pending_deliveries(self, older_than: timedelta = timedelta(seconds=60)) -> int:
        """Deliveries still pending long after their message was stored (a crashed push)."""
        with self._uow() as uow:
            return uow.deliveries.count_pending_since(self._clock.now() - older_than)
