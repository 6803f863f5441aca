"""The one way anything is typed into a pane.

Hold the pane's send lock, check that the pane runs the expected coding agent and
shows no dialog, type or paste the text, wait the agent's submit delay, check
again, press Enter, and where the profile knows the composer, see that the text
left it (else press Enter again, a bounded number of times). No Esc is ever sent
first: every supported agent queues text that arrives mid-turn, while Esc would
interrupt its work or answer a dialog. A failed step stops that pane's sequence, so
no Enter follows a failed text step or check. The outcome is reported, never raised.

Many panes go through the steps together (a broadcast, see `gathering`): every lock
is taken, every pane checked, every text written, then ONE sleep of the longest
submit delay, one more check of all and every Enter; on a driver with `PaneBatches`
each step is one or a few multiplexer calls for all panes of its server.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, ExitStack
from dataclasses import dataclass, field, replace

from cafleet.application.panes.gathering import Gatherings
from cafleet.application.panes.keystroke_checks import (
    DIALOG_SCREEN_LINES,
    accepted_commands,
    agent_problem,
    await_shell_turn,
    screen_matters,
    screen_problem,
)
from cafleet.application.panes.steps import steps_of
from cafleet.application.ports.panes import PaneBatches, PaneDriver, PaneDrivers, PaneLocks, Typing
from cafleet.application.ports.system import Clock
from cafleet.domain.agents.profile import AgentProfile
from cafleet.domain.agents.registry import AgentProfiles
from cafleet.domain.delivery import BEFORE_ENTER, Channel, PushOutcome, Residue, SkipReason
from cafleet.domain.digests import sha256_hex
from cafleet.domain.errors import CafleetError
from cafleet.domain.panes import Key, PaneGone, PaneInfo, ServerGone
from cafleet.domain.placement import PushTarget
from cafleet.domain.preview import one_line

SEND_LOCK_TIMEOUT_SECONDS = 30
SUBMIT_RETRIES = 2  # Enters pressed again for a text the composer still shows
SUBMIT_CHECK_SECONDS = 0.1  # the agent's moment to take an Enter before its composer is read


@dataclass(frozen=True)
class Keystrokes:
    text: str
    bracketed: bool = False  # a paste keeps line breaks from submitting early
    shell: bool = False  # a `!` command, which some agents drop during a turn

    @staticmethod
    def preview(text: str) -> Keystrokes:
        return Keystrokes(text, bracketed=True)

    @staticmethod
    def poll_trigger(fleet_id: int, agent_id: int) -> Keystrokes:
        return Keystrokes(f"cafleet message poll --fleet-id {fleet_id} --agent-id {agent_id}")

    @staticmethod
    def shell_command(command: str) -> Keystrokes:
        return Keystrokes(f"! {command}", shell=True)

    @staticmethod
    def exit_command() -> Keystrokes:
        return Keystrokes("/exit")

    @staticmethod
    def wake(text: str) -> Keystrokes:
        return Keystrokes(text)


def lock_key(target: PushTarget) -> str:
    raw = f"{target.backend.value}\0{target.socket or ''}\0{target.pane_id}"
    return sha256_hex(raw.encode())[:32]


Request = tuple[PushTarget, Keystrokes]


@dataclass(eq=False)  # each job is its own key
class _Job:
    """One pane's way through the steps; `outcome` is set once its sequence stopped, with
    what the steps taken so far may have left in the composer."""

    target: PushTarget
    keys: Keystrokes
    written: str = ""
    outcome: PushOutcome | None = None
    residue: Residue = Residue.NOTHING

    @property
    def pane(self) -> str:
        return self.target.pane_id

    def skip(self, reason: str) -> None:
        self.stop(PushOutcome.skipped(reason, self.target.backend.value, self.pane))

    def fail(self, error: CafleetError) -> None:
        if isinstance(error, PaneGone | ServerGone):  # settled: nothing is left to wait for
            self.skip(SkipReason.PANE_GONE)
        else:
            self.stop(PushOutcome.failed(error.message, self.target.backend.value, self.pane))

    def stop(self, outcome: PushOutcome) -> None:
        self.outcome = replace(outcome, channel=Channel.KEYS, residue=self.residue)


@dataclass
class _Server:
    """The jobs whose panes live on one multiplexer server, and its steps."""

    driver: PaneDriver
    steps: PaneBatches
    jobs: list[_Job] = field(default_factory=list)

    def live(self) -> list[_Job]:
        return [job for job in self.jobs if job.outcome is None]

    def fail_all(self, error: CafleetError) -> None:
        for job in self.live():
            job.fail(error)


class KeystrokeSender:
    def __init__(
        self,
        drivers: PaneDrivers,
        locks: PaneLocks,
        clock: Clock,
        profiles: AgentProfiles,
        gatherings: Gatherings | None = None,
    ) -> None:
        self._drivers = drivers
        self._locks = locks
        self._clock = clock
        self._profiles = profiles
        self._gatherings = gatherings or Gatherings()

    def profile(self, target: PushTarget) -> AgentProfile:
        return self._profiles[target.coding_agent]

    def agent_problem(self, target: PushTarget, info: PaneInfo | None) -> str | None:
        """Tests A and B (see keystroke_checks.agent_problem)."""
        return agent_problem(self.profile(target), target, info)

    def accepted_commands(self, target: PushTarget) -> tuple[str, ...]:
        """Test B's list; empty (only test A applies) for a custom agent without one."""
        return accepted_commands(self.profile(target), target)

    def holding(self, target: PushTarget) -> AbstractContextManager[None]:
        """The pane's send lock, for a key pressed outside the typing sequence."""
        return self._locks.hold(lock_key(target), SEND_LOCK_TIMEOUT_SECONDS)

    def deliver(self, target: PushTarget, keys: Keystrokes) -> PushOutcome:
        """Type into one pane; inside a gathering (a broadcast's threads), together with the
        other panes of the gathering. A shell command waits for its own pane's turn alone."""
        gathering = self._gatherings.current()
        if gathering is not None and not keys.shell:
            outcome: PushOutcome = gathering.submit((target, keys), self.deliver_many)
            return outcome
        return self.deliver_many([(target, keys)])[0]

    def deliver_many(self, requests: Sequence[Request]) -> list[PushOutcome]:
        """Each request's outcome, in order; the panes share the steps and one submit delay.
        A pane named twice is typed into again after the first round (its lock is held)."""
        seen: set[str] = set()
        first: list[int] = []
        again: list[int] = []
        for index, (target, _) in enumerate(requests):
            (again if lock_key(target) in seen else first).append(index)
            seen.add(lock_key(target))
        outcomes = dict(zip(first, self._round([requests[i] for i in first]), strict=True))
        if again:
            later = self.deliver_many([requests[i] for i in again])
            outcomes.update(zip(again, later, strict=True))
        return [outcomes[index] for index in range(len(requests))]

    def obstacle(self, target: PushTarget) -> PushOutcome | None:
        """What the check before typing finds in the pane now (another program, a dialog,
        no answer), as the outcome it would give; None when text may be typed. Types
        nothing and takes no lock."""
        job = _Job(target, Keystrokes(""))
        if not target.ready:
            job.skip(SkipReason.AGENT_STARTING)
        for server in self._servers([job] if job.outcome is None else []):
            self._guarded(server, server.live(), self._check_before_typing)
        return job.outcome

    def complete(
        self, target: PushTarget, keys: Keystrokes, residue: Residue
    ) -> PushOutcome | None:
        """Enter for a text typed earlier whose Enter never came (`residue` says how far
        that attempt got): under the pane's lock, checked as before typing, pressed where the
        composer still shows the text, and seen to leave it as after any Enter. None when the
        composer does not show it; an agent whose composer cannot be read is taken to."""
        job = _Job(target, keys, self._written(target, keys), residue=residue)
        servers = self._servers([job])
        with ExitStack() as held:
            self._lock_all(held, [job])
            for server in servers:
                self._guarded(server, server.live(), self._check_before_typing)
                if server.live() and not self._shows_text(server, job):
                    return None
                for live in server.live():
                    live.residue = Residue.TEXT
                self._guarded(server, server.live(), self._press_enter)
            self._verify_submit(servers)
        return job.outcome or PushOutcome.sent(target.backend.value, job.pane)

    def _shows_text(self, server: _Server, job: _Job) -> bool:
        """Whether the job's composer still shows its text (taken to where it cannot be
        read); a screen that cannot be read fails the job."""
        if not self.profile(job.target).checks_submit:
            return True
        screen = server.steps.captures([job.pane], DIALOG_SCREEN_LINES).get(job.pane)
        if isinstance(screen, CafleetError):
            job.fail(screen)
            return True  # not known to be gone: the job's outcome says why
        return self.profile(job.target).composer_holds(screen or "", job.written)

    def _round(self, requests: Sequence[Request]) -> list[PushOutcome]:
        jobs = [_Job(target, keys) for target, keys in requests]
        for job in jobs:
            if not job.target.ready:  # a TUI still starting loses text or glues it to its prompt
                job.skip(SkipReason.AGENT_STARTING)
        servers = self._servers([job for job in jobs if job.outcome is None])
        for server in servers:
            for job in server.live():
                if job.keys.shell:
                    self._guarded(
                        server, [job], lambda s, js: self._await_shell_turn(s.driver, js[0])
                    )
        with ExitStack() as held:
            self._lock_all(held, [job for s in servers for job in s.live()])
            for server in servers:
                self._guarded(server, server.live(), self._check_before_typing)
                self._guarded(server, server.live(), self._write)
            written = [job for server in servers for job in server.live()]
            if written:
                self._clock.sleep(
                    max(self.profile(j.target).pause_before_enter(j.keys.shell) for j in written)
                )
            for server in servers:
                self._guarded(server, server.live(), self._check_before_enter)
                self._guarded(server, server.live(), self._press_enter)
            self._verify_submit(servers)
        return [job.outcome or PushOutcome.sent(job.target.backend.value, job.pane) for job in jobs]

    def _servers(self, jobs: Sequence[_Job]) -> list[_Server]:
        servers: dict[tuple[str, str | None, str | None], _Server] = {}
        for job in jobs:
            where = (job.target.backend.value, job.target.socket, job.target.host)
            if where not in servers:
                try:
                    driver = self._drivers(job.target.backend, job.target.socket, job.target.host)
                except CafleetError as exc:
                    job.fail(exc)
                    continue
                servers[where] = _Server(driver, steps_of(driver))
            servers[where].jobs.append(job)
        return list(servers.values())

    def _guarded(self, server: _Server, jobs: list[_Job], step: _Step) -> None:
        """Run one step for these jobs; an error the whole step met stops each of them."""
        if not jobs:
            return
        try:
            step(server, jobs)
        except CafleetError as exc:
            for job in jobs:
                if job.outcome is None:
                    job.fail(exc)

    def _lock_all(self, held: ExitStack, jobs: Sequence[_Job]) -> None:
        """Take each pane's send lock, in one order for every process (no deadlock)."""
        for job in sorted(jobs, key=lambda j: lock_key(j.target)):
            try:
                held.enter_context(
                    self._locks.hold(lock_key(job.target), SEND_LOCK_TIMEOUT_SECONDS)
                )
            except TimeoutError:
                error = f"send lock timeout after {SEND_LOCK_TIMEOUT_SECONDS}s"
                job.stop(PushOutcome.failed(error, job.target.backend.value, job.pane))

    def _check_before_typing(self, server: _Server, jobs: list[_Job]) -> None:
        for job, problem in self._problems(server, jobs).items():
            job.skip(problem)

    def _check_before_enter(self, server: _Server, jobs: list[_Job]) -> None:
        """No Enter where the agent left or a dialog opened; a turn that began while a shell
        command was typed is waited out (the composer keeps the text), then checked again."""
        for job, found in self._problems(server, jobs).items():
            problem: str | None = found
            if found == SkipReason.AGENT_BUSY:
                self._await_shell_turn(server.driver, job)
                problem = self._problems(server, [job]).get(job)
            if problem is not None:
                job.skip(problem + BEFORE_ENTER)

    def _write(self, server: _Server, jobs: list[_Job]) -> None:
        for job in jobs:
            job.written = self._written(job.target, job.keys)
            job.residue = Residue.MAYBE_TEXT  # a step that does not answer may still have run
        typings = [Typing(job.pane, job.written, job.keys.bracketed) for job in jobs]
        failures = server.steps.write_all(typings)
        for job in jobs:
            if job.pane in failures:
                job.fail(failures[job.pane])
            else:
                job.residue = Residue.TEXT

    def _press_enter(self, server: _Server, jobs: list[_Job]) -> None:
        for job in jobs:
            job.residue = Residue.MAYBE_SUBMITTED
        failures = server.steps.press_all([job.pane for job in jobs], Key.ENTER)
        for job in jobs:
            if job.pane in failures:
                job.fail(failures[job.pane])

    def _verify_submit(self, servers: Sequence[_Server]) -> None:
        """Where the profile knows the composer: a text it still shows a moment after Enter
        (the agent dropped the Enter) gets Enter again, checked as before, up to
        SUBMIT_RETRIES times. A text still shown after that is left to the agent (the outcome
        stays sent). No pause is taken where every composer emptied at once."""
        watched = [
            (s, [j for j in s.live() if self.profile(j.target).checks_submit]) for s in servers
        ]
        for _ in range(SUBMIT_RETRIES):
            watched = [(s, self._still_in_composer(s, jobs)) for s, jobs in watched]
            if any(jobs for _, jobs in watched):
                self._clock.sleep(SUBMIT_CHECK_SECONDS)
                watched = [(s, self._still_in_composer(s, jobs)) for s, jobs in watched]
            if not any(jobs for _, jobs in watched):
                return
            for server, jobs in watched:
                for job in jobs:
                    job.residue = Residue.TEXT  # the composer shows it: Enter did not take
                self._guarded(server, jobs, self._check_before_enter)
                self._guarded(server, [j for j in jobs if j.outcome is None], self._press_enter)
            watched = [(s, [j for j in jobs if j.outcome is None]) for s, jobs in watched]

    def _still_in_composer(self, server: _Server, jobs: list[_Job]) -> list[_Job]:
        if not jobs:
            return []
        try:
            screens = server.steps.captures([job.pane for job in jobs], DIALOG_SCREEN_LINES)
        except CafleetError:  # Enter was pressed: a screen that cannot be read is left be
            return []
        return [
            job
            for job in jobs
            if isinstance(screen := screens.get(job.pane), str)
            and self.profile(job.target).composer_holds(screen, job.written)
        ]

    def _written(self, target: PushTarget, keys: Keystrokes) -> str:
        """What goes into the pane for these keystrokes."""
        return self._pasted(target, keys.text) if keys.bracketed else keys.text

    def _pasted(self, target: PushTarget, text: str) -> str:
        """The text itself where the agent enabled bracketed paste; otherwise its line
        breaks would submit each line, so it goes as one line."""
        return text if self.profile(target).bracketed_paste else one_line(text)

    def _await_shell_turn(self, driver: PaneDriver, job: _Job) -> None:
        await_shell_turn(driver, job.pane, self.profile(job.target), self._clock)

    def _problems(self, server: _Server, jobs: list[_Job]) -> dict[_Job, str]:
        """Why nothing may be typed now, per job that must not: the pane is not the one
        recorded (pane-gone), does not run the agent, shows a dialog, or (for a shell
        command) runs a turn that would drop it. Jobs whose screen cannot be read fail.

        Words of the text itself (in the composer once pasted) never count as a dialog.
        """
        problems: dict[_Job, str] = {}
        infos = server.steps.panes_of([job.pane for job in jobs])
        for job in jobs:
            problem = self.agent_problem(job.target, infos.get(job.pane))
            if problem is not None:
                problems[job] = problem
        screened = [
            j
            for j in jobs
            if j not in problems and screen_matters(self.profile(j.target), j.keys.shell)
        ]
        if not screened:
            return problems
        screens = server.steps.captures([job.pane for job in screened], DIALOG_SCREEN_LINES)
        for job in screened:
            screen = screens.get(job.pane)
            if isinstance(screen, CafleetError):
                job.fail(screen)
                continue
            problem = screen_problem(
                self.profile(job.target), screen or "", job.keys.text, job.keys.shell
            )
            if problem is not None:
                problems[job] = problem
        return problems


_Step = Callable[[_Server, list[_Job]], None]
