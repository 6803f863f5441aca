"""Onboarding: installing the bundled skills, the skills gate, and the doctor's report."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from cafleet.application.ports.agents import SkillInstaller
from cafleet.application.ports.store import UnitOfWorkFactory
from cafleet.application.ports.system import Clock
from cafleet.domain.agents.custom import DEMO_AGENT, DEMO_AGENT_FLAGS
from cafleet.domain.skills import AGENT_HOMES, SKILL_NAMES, SkillHome, SkillInstall

NO_HOMES = (
    "{agent}: no coding-agent home found (looked for {looked}); Codex and OpenCode read this"
    " folder, Claude Code does not: run 'cafleet setup skill' again after installing an agent"
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
    fallback: str | None = None  # why the shared folder was chosen (no agent home was found)

    def line(self, user_home: Path) -> str:
        where = shown(self.directory, user_home)
        return f"{self.home.value}: installed {', '.join(SKILL_NAMES)} (v{self.version}) -> {where}"

    def notes(self) -> list[str]:
        """What else the user should know: the fallback, then the files kept."""
        kept = self.kept_line()
        return [line for line in (self.fallback, kept) if line is not None]

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
        fallback = None
        if not targets:  # nothing to pick yet: a later Codex or OpenCode finds them there
            targets, fallback = [SkillHome.SHARED], self._no_homes_line()
        done = []
        for home in targets:
            copied = self._installer.install(home)
            with self._uow(write=True) as uow:
                uow.installs.record(SkillInstall(home.value, self._version, self._clock.now()))
                uow.commit()
            installed = InstalledSkills(
                home, self._version, copied.directory, copied.kept, fallback
            )
            on_installed(installed)
            done.append(installed)
        return done

    def _no_homes_line(self) -> str:
        # each agent's home is the parent of its skills directory
        looked = (shown(self._installer.skills_dir(h).parent, self._user_home) for h in AGENT_HOMES)
        return NO_HOMES.format(agent=SkillHome.SHARED.value, looked=", ".join(looked))

    def installs(self) -> list[SkillInstall]:
        with self._uow() as uow:
            return uow.installs.list()

    def pending_deliveries(self, older_than: timedelta = timedelta(seconds=60)) -> int:
        """Deliveries still pending long after their message was stored (a crashed push)."""
        with self._uow() as uow:
            return uow.deliveries.count_pending_since(self._clock.now() - older_than)


@dataclass(frozen=True)
class Readiness:
    """What the doctor saw, reduced to what decides the user's next step."""

    multiplexer_ok: bool
    database_current: bool
    skills_current: bool  # at least one install, none stale
    skill_homes: frozenset[str]  # the coding agents (or "agents") with an install row
    on_path: dict[str, bool]  # claude, codex, opencode and the demo agent


def next_step(seen: Readiness) -> str:
    """One line: the first thing to do, or how to start."""
    if not seen.database_current or not seen.skills_current:
        return "run 'cafleet setup'"
    if not seen.multiplexer_ok:
        return "run cafleet inside a tmux (or herdr) pane"
    real = [a.value for a in AGENT_HOMES if seen.on_path.get(a.value)]
    # Codex and OpenCode also read the shared folder; Claude Code reads only its own
    unread = [
        a
        for a in real
        if a not in seen.skill_homes
        and not (a != SkillHome.CLAUDE.value and SkillHome.SHARED.value in seen.skill_homes)
    ]
    if unread:
        flags = " ".join(f"--agent {a}" for a in unread)
        return f"run 'cafleet setup skill {flags}' so {', '.join(unread)} finds the skills"
    if real:
        return "ready: cafleet fleet create --name my-project"
    if seen.on_path.get(DEMO_AGENT):
        return (
            "no coding agent on PATH (claude, codex, opencode); try the demo agent:"
            f" cafleet member create ... {DEMO_AGENT_FLAGS} (README, 'Use')"
        )
    return "no coding agent on PATH: install Claude Code, Codex or OpenCode"
