"""Every port the services depend on, as typing.Protocol.

Repositories never commit: a UnitOfWork rolls back unless commit() is called.
A write UnitOfWork takes the database write lock when it opens, so timestamps
taken inside it order the same way as the ids it assigns.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Protocol, runtime_checkable

from cafleet.domain.agents.status import HookEvent, StatusReport
from cafleet.domain.delivery import Delivery, PushOutcome, Residue
from cafleet.domain.errors import CafleetError
from cafleet.domain.fleet import Agent, Fleet
from cafleet.domain.message import Message
from cafleet.domain.monitor import MonitorRuntime, MonitorSchedule
from cafleet.domain.panes import Key, PaneInfo, PromptAnswer
from cafleet.domain.placement import CodingAgent, Multiplexer, PaneLocation, Placement
from cafleet.domain.preview import preview
from cafleet.domain.relay import PaneReport, RelayBeat, RelayRequest
from cafleet.domain.search import SearchHit, SearchQuery
from cafleet.domain.skills import SkillHome, SkillInstall, SkillsCopied


class FleetRepository(Protocol):
    def add(self, fleet: Fleet) -> int: ...
    def get(self, fleet_id: int) -> Fleet | None: ...
    def save(self, fleet: Fleet) -> None: ...
    def list_live(self) -> list[Fleet]:
        """Fleets not deleted, newest first (ties: higher id first)."""
        ...

    def list_all(self) -> list[Fleet]:
        """Every fleet, deleted ones included, in the same order."""
        ...


class AgentRepository(Protocol):
    def add(self, agent: Agent) -> int: ...
    def get(self, agent_id: int) -> Agent | None: ...
    def save(self, agent: Agent) -> None: ...
    def in_fleet(self, fleet_id: int, *, active_only: bool = True) -> list[Agent]:
        """Agents of one fleet in id order."""
        ...

    def count_active(self, fleet_ids: Iterable[int]) -> dict[int, int]: ...


class PlacementRepository(Protocol):
    def add(self, placement: Placement) -> None: ...
    def get(self, agent_id: int) -> Placement | None: ...
    def save(self, placement: Placement) -> None: ...
    def remove(self, agent_id: int) -> None: ...
    def for_agents(self, agent_ids: Iterable[int]) -> dict[int, Placement]: ...


@dataclass(frozen=True)
class Activity:
    last_sent: datetime | None = None
    last_recv: datetime | None = None
    last_ack: datetime | None = None

    @property
    def last_contact(self) -> datetime | None:
        """The newest message sent or received: what idleness is measured from."""
        return max((t for t in (self.last_sent, self.last_recv) if t is not None), default=None)


@dataclass(frozen=True)
class ConversationMark:
    """Where a fleet's conversation stands, read cheaply so a watcher can tell it moved.

    A new message raises last_task_id; an ACK or cancel changes open_messages and
    last_state_change; a settled push raises settled_deliveries; an agent's receipt
    raises confirmed_deliveries.
    """

    last_task_id: int | None = None
    last_state_change: datetime | None = None
    open_messages: int = 0
    settled_deliveries: int = 0
    confirmed_deliveries: int = 0


class MessageRepository(Protocol):
    def add(self, message: Message) -> int:
        """Store a new message; a broadcast summary gets its own id as origin, and a message
        without a thread starts its own (its id as thread_id)."""
        ...

    def get(self, task_id: int) -> Message | None: ...
    def save(self, message: Message) -> None: ...
    def pending_for(self, agent_id: int, limit: int | None = None) -> list[Message]:
        """input_required messages owned by the agent, summaries excluded, newest first."""
        ...

    def activity(self, agent_ids: Sequence[int]) -> dict[int, Activity]: ...
    def pending_counts(self, agent_ids: Sequence[int]) -> dict[int, int]:
        """input_required messages owned per agent, summaries excluded."""
        ...

    def timeline(self, fleet_id: int, limit: int, before: int | None = None) -> list[Message]:
        """Messages sent by agents of the fleet, summaries excluded, newest first."""
        ...

    def owned_by(self, agent_id: int, limit: int, before: int | None = None) -> list[Message]:
        """The agent's inbox: messages it owns in any state, summaries excluded, newest first;
        `before` keeps only ids below it."""
        ...

    def sent_by(self, agent_id: int, limit: int, before: int | None = None) -> list[Message]:
        """Messages the agent sent, summaries excluded, newest first; `before` as above."""
        ...

    def broadcast_copies(self, summary: Message) -> list[Message]:
        """The unicast rows a broadcast summary stands for, one per recipient, in id order."""
        ...

    def thread(self, thread_id: int) -> list[Message]:
        """Every message of the thread (summaries and copies included), in id order."""
        ...

    def search(self, fleet_id: int, query: SearchQuery, offset: int, limit: int) -> list[SearchHit]:
        """The fleet's messages that match, best first (summaries left out; a broadcast's
        copies each match); rows `offset` to `offset + limit`. A raw query the store cannot
        read is Invalid."""
        ...

    def conversation_mark(self, fleet_id: int) -> ConversationMark:
        """Messages owned by agents of the fleet (summaries included) and their deliveries."""
        ...


class DeliveryRepository(Protocol):
    def add(self, delivery: Delivery) -> None: ...
    def get(self, task_id: int, recipient_agent_id: int) -> Delivery | None: ...
    def save(self, delivery: Delivery) -> None: ...
    def confirm(self, recipient_agent_id: int, task_ids: Sequence[int], at: datetime) -> int:
        """Mark the sent attempts of these messages to this recipient as taken in by the
        agent itself (first time only); how many rows changed."""
        ...

    def for_task(self, task_id: int) -> list[Delivery]: ...
    def for_tasks(self, task_ids: Sequence[int]) -> list[Delivery]:
        """The ledger rows of many messages at once (for listing them with their outcome),
        earlier attempts first."""
        ...

    def count_pending_since(self, before: datetime) -> int: ...

    def queued_for(self, recipient_agent_id: int) -> list[Delivery]:
        """The pending rows of this recipient (the pane's delivery queue), in task order."""
        ...

    def stranded(self, recipient_agent_ids: Iterable[int], before: datetime) -> list[int]:
        """Which of these recipients have a row pending since before `before` (a queue whose
        sender and drainer ended), in id order."""
        ...

    def announced_untaken(self, recipient_agent_id: int, since: datetime) -> list[int]:
        """The unread messages to this recipient announced (a sent attempt) since `since`
        that its agent has not yet been seen to take in (no `confirmed_at`), oldest first."""
        ...


class MonitorRepository(Protocol):
    def enroll(self, schedule: MonitorSchedule) -> None: ...
    def get(self, agent_id: int) -> MonitorSchedule | None: ...
    def for_agents(self, agent_ids: Iterable[int]) -> dict[int, MonitorSchedule]: ...
    def save(self, schedule: MonitorSchedule) -> None: ...
    def record_progress(self, schedules: Sequence[MonitorSchedule]) -> None:
        """Store only what the monitor owns (last ping, stall-check time, native state), in
        one batch; interval and enabled keep their current values, and rows removed
        meanwhile are skipped."""
        ...

    def unenroll(self, agent_id: int) -> None: ...
    def runtime(self, fleet_id: int) -> MonitorRuntime | None: ...
    def save_runtime(self, runtime: MonitorRuntime) -> None:
        """Insert or replace the fleet's runtime row."""
        ...

    def heartbeat(self, fleet_id: int, pid: int, host: str, at: datetime) -> bool:
        """Refresh last_tick_at if (pid, host) still owns the slot; False when displaced."""
        ...

    def remove_runtime(self, fleet_id: int) -> None: ...


class InstallRepository(Protocol):
    def list(self) -> list[SkillInstall]:
        """Every recorded install, by coding agent."""
        ...

    def record(self, install: SkillInstall) -> None:
        """Insert or replace the install of one coding agent."""
        ...


class RelayRepository(Protocol):
    """Each host's relay beat and the pane requests addressed to hosts (domain/relay.py)."""

    def beat(self, beat: RelayBeat) -> None:
        """Insert or replace the beat of the beat's host."""
        ...

    def beats(self) -> list[RelayBeat]:
        """Every host's last beat, by host."""
        ...

    def leave(self, host: str, pid: int) -> None:
        """Remove the host's beat if this process wrote it (a relay stopping)."""
        ...

    def ask(self, request: RelayRequest) -> int:
        """Store a pending request; its id."""
        ...

    def request(self, request_id: int) -> RelayRequest | None: ...

    def pending(self, host: str) -> list[RelayRequest]:
        """The host's pending requests, oldest first."""
        ...

    def settle(self, request: RelayRequest) -> None:
        """Store a request's state and answer."""
        ...

    def wake(self, host: str) -> None:
        """Tell the host's relay, once this unit of work commits, that work waits for it
        (PostgreSQL: NOTIFY; elsewhere nothing, the relay looks for work on its own)."""
        ...

    def report(self, host: str, reports: Sequence[PaneReport]) -> None:
        """The host's pane reports are these now (any other of the host's is dropped)."""
        ...

    def reports(self, agent_ids: Iterable[int]) -> dict[int, PaneReport]:
        """The last reports of these agents' panes, whoever wrote them."""
        ...


class WorkSignals(Protocol):
    """How a relay waits for work: until a unit of work tells its host of some
    (RelayRepository.wake) or the time is up."""

    def wait(self, seconds: float) -> bool:
        """True when told of work, False when `seconds` passed without a word."""
        ...

    def close(self) -> None: ...


class UnitOfWork(Protocol):
    fleets: FleetRepository
    agents: AgentRepository
    placements: PlacementRepository
    messages: MessageRepository
    deliveries: DeliveryRepository
    monitor: MonitorRepository
    installs: InstallRepository
    relays: RelayRepository

    def __enter__(self) -> UnitOfWork: ...
    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...
    def commit(self) -> None: ...


class UnitOfWorkFactory(Protocol):
    def __call__(self, *, write: bool = False) -> UnitOfWork: ...


class Clock(Protocol):
    def now(self) -> datetime: ...
    def sleep(self, seconds: float) -> None: ...


class PaneDriver(Protocol):
    """Mechanics of one multiplexer server; no message formatting, no policy.

    Pane ids are opaque strings. A missing pane raises PaneGone; any other failure
    raises an Unavailable error with a one-line message.
    """

    backend: Multiplexer

    def spawn(self, beside: str, argv: Sequence[str], env: Mapping[str, str], cwd: str) -> str:
        """Open a pane next to `beside` running argv directly (no shell); focus stays."""
        ...

    def type_text(self, pane_id: str, text: str) -> None:
        """Type one line literally, without pressing Enter."""
        ...

    def paste_text(self, pane_id: str, text: str) -> None:
        """Paste text as one bracketed paste (line breaks kept), without pressing Enter."""
        ...

    def send_keys(self, pane_id: str, *keys: Key) -> None: ...
    def prompt_agent(self, pane_id: str, text: str) -> PromptAnswer:
        """Have the multiplexer itself type `text` into the agent it detected in the pane
        and press Enter; returns once Enter is pressed. NO_PROMPT where the multiplexer has
        no such request; nothing is typed unless the answer is TAKEN."""
        ...

    def capture(self, pane_id: str, lines: int, *, ansi: bool = False) -> str:
        """The last `lines` lines of the pane, trailing blank rows trimmed."""
        ...

    def list_panes(self) -> dict[str, PaneInfo]:
        """Every pane of the server in one call."""
        ...

    def pane(self, pane_id: str) -> PaneInfo | None:
        """One pane, or None when it no longer exists; always with its `identity`."""
        ...

    def claim(self, pane_id: str) -> str:
        """Mark the pane as CAFleet's where the multiplexer allows it (kept if already
        marked) and return its identity as `pane()` reports it from now on: something no
        pane the server (or a later server on the same socket) opens afterwards can report."""
        ...

    def kill(self, pane_id: str) -> bool:
        """Close the pane; False when it was already gone."""
        ...

    def relayout(self, window_id: str) -> None:
        """Re-apply the fleet layout (Director left, members stacked right); best effort."""
        ...


class PaneDrivers(Protocol):
    """The driver for the server a placement recorded (backend, socket and host)."""

    def __call__(
        self, backend: Multiplexer, socket: str | None, host: str | None = None
    ) -> PaneDriver:
        """Raises PaneElsewhere for a host other than this one (None: this one)."""
        ...

    def reaches(self, host: str | None) -> bool:
        """Whether a pane recorded on `host` is on this machine (None: recorded before
        hosts were, so taken to be)."""
        ...


@dataclass(frozen=True)
class LauncherStatus:
    """What a member's launcher recorded: not started yet, running, or exited with a code."""

    pid: int | None = None
    exit_code: int | None = None

    @property
    def exited(self) -> bool:
        return self.exit_code is not None


@dataclass(frozen=True)
class HttpEndpoint:
    """A loopback port and password for an agent's own HTTP server."""

    port: int
    password: str


class LaunchPad(Protocol):
    """One member's private directory: its launch file, hook files, its mailbox, and what
    the launcher and the agent itself (hooks, its HTTP server) report."""

    @property
    def location(self) -> str:
        """Where the pad is; recorded in the placement so later commands can reopen it."""
        ...

    def launcher(self, argv: Sequence[str], env: Mapping[str, str], cwd: str) -> list[str]:
        """Write the launch file (mode 0600); the argv that starts the launcher on it."""
        ...

    def write(self, name: str, text: str) -> str:
        """A private file in the pad; its path."""
        ...

    def event_recorder(self) -> list[str]:
        """The argv a hook runs, plus an event name, to record that event."""
        ...

    def endpoint(self) -> HttpEndpoint:
        """Reserve a free loopback port and a password for the agent's server."""
        ...

    def get(self, path: str, user: str) -> str | None:
        """GET `path` from the reserved endpoint with basic auth; None when it does not
        answer (yet)."""
        ...

    def post(
        self, path: str, user: str, payload: Mapping[str, object], timeout: float | None = None
    ) -> int | None:
        """POST JSON to the reserved endpoint; the HTTP status, or None when it does not
        answer within `timeout` seconds (None: the pad's own wait for a prompt to land)."""
        ...

    def read(self, name: str) -> str | None:
        """A file of the pad (see `write`), or None when it is not there."""
        ...

    def mail_waiter(self) -> list[str]:
        """The argv of a hook that waits for this member's mail and hands it over."""
        ...

    def mail_waiting(self) -> bool:
        """Whether such a hook is waiting now."""
        ...

    def post_mail(self, task_id: int, text: str) -> None: ...
    def mail_taken_at(self, task_id: int) -> datetime | None:
        """When the waiting hook took the message, or None while it has not."""
        ...

    def withdraw_mail(self, task_id: int) -> bool:
        """Take an untaken message back; False when the hook had taken it first."""
        ...

    def status(self) -> LauncherStatus: ...
    def events(self) -> tuple[HookEvent, ...]:
        """What the agent's hooks recorded, oldest first."""
        ...

    def remember(self, name: str, text: str) -> None:
        """Write (or replace) a small private note in the pad; best effort."""
        ...

    def mark_ready(self) -> None:
        """From now on the launcher just ends with its agent."""
        ...

    def discard(self) -> None:
        """Remove the pad (a launcher holding a failed pane open then lets it close)."""
        ...


class LaunchPads(Protocol):
    @property
    def runtime(self) -> str:
        """The directory the pads live in, beside the send locks: a member whose tools run
        in a sandbox must be able to write there to message and spawn."""
        ...

    def prepare(self, fleet_id: int, agent_id: int) -> LaunchPad: ...
    def reopen(self, location: str) -> LaunchPad | None:
        """The pad of a running member, or None when it is gone."""
        ...


class QueueDrains(Protocol):
    """Delivers what is left queued for these recipients' panes away from the command that
    found it, so that command's caller does not wait for other senders' messages."""

    def start(self, recipients: Sequence[int]) -> None: ...


class PaneLocks(Protocol):
    """Exclusive per-pane locks so two processes never interleave keystrokes in one pane."""

    def hold(self, key: str, timeout: float) -> AbstractContextManager[None]:
        """Hold the lock for key; raises TimeoutError after timeout seconds."""
        ...


@dataclass(frozen=True)
class LoopMark:
    """What a loop's mark shows: whether a live process holds it, that process's pid as
    this one sees it (0: it runs in a pid namespace this one cannot see), and the claim its
    holder wrote into it ("" when none)."""

    held: bool
    pid: int = 0
    claim: str = ""


class LoopMarks(Protocol):
    """Marks a long-running loop holds for its whole life (the monitor's), which any process
    of this host can test whatever its pid namespace: a pid recorded by a loop in a tool
    sandbox names another process outside it, and a loop outside is not seen from one."""

    def hold(self, name: str) -> LoopMark | None:
        """Take the mark for the rest of this process's life (or until `drop`); what it
        showed before: `held` means another process has it and it was not taken. None: no
        marks here (no runtime directory)."""
        ...

    def write(self, name: str, claim: str) -> None:
        """Record the claim in a mark this process holds."""
        ...

    def drop(self, name: str) -> None: ...
    def read(self, name: str) -> LoopMark | None:
        """The mark as it is now; None when it cannot be told (none was ever made)."""
        ...


class ProcessIdentity(Protocol):
    """This process and host, and whether another process on this host still exists."""

    def pid(self) -> int: ...
    def host(self) -> str: ...
    def alive(self, pid: int) -> bool: ...


@runtime_checkable
class AgentStates(Protocol):
    """Optional driver capability: the agent state a multiplexer detects in each pane
    (idle, working, blocked, done, unknown). Only herdr has it."""

    def agent_states(self) -> dict[str, str]: ...


@runtime_checkable
class ScreenWaits(Protocol):
    """Optional driver capability: the multiplexer watches a pane's screen itself and
    answers once a line shows a text, so a caller waiting for one neither polls captures
    nor sleeps past it. Only herdr has it (`pane.wait_for_output`)."""

    def wait_for_text(self, pane_id: str, texts: Sequence[str], lines: int, timeout: float) -> bool:
        """True as soon as one of the pane's last `lines` lines shows one of `texts`,
        compared as `letters_and_digits` does; False when `timeout` seconds pass first.
        Raises PaneGone for a missing pane."""
        ...


@dataclass(frozen=True)
class Typing:
    """Text for one pane: pasted (bracketed, line breaks kept) or typed as literal keys."""

    pane_id: str
    text: str
    paste: bool


@runtime_checkable
class PaneBatches(Protocol):
    """Optional driver capability: the keystroke steps for many panes in a few multiplexer
    calls. Each step answers per pane: a pane that fails never stops the others. Without it,
    the same steps run pane by pane."""

    def panes_of(self, pane_ids: Sequence[str]) -> dict[str, PaneInfo | None]:
        """Each pane as `pane()` reports it (None: gone), from one listing of the server."""
        ...

    def captures(self, pane_ids: Sequence[str], lines: int) -> dict[str, str | CafleetError]:
        """Each pane's last `lines` lines as `capture()` gives them, or why not."""
        ...

    def write_all(self, typings: Sequence[Typing]) -> dict[str, CafleetError]:
        """Type or paste each text into its pane, no Enter; the panes that failed, and why."""
        ...

    def press_all(self, pane_ids: Sequence[str], key: Key) -> dict[str, CafleetError]:
        """Press `key` in each pane; the panes that failed, and why."""
        ...


@runtime_checkable
class LimitedCaptures(Protocol):
    """Optional driver capability: a multiplexer that reads at most `capture_limit` rows of
    a pane at once (herdr), and says when that left out older lines a capture asked for."""

    @property
    def capture_limit(self) -> int: ...

    def capture_cut(self, pane_id: str, lines: int, *, ansi: bool = False) -> tuple[str, bool]:
        """What `capture` gives, and whether older lines that were asked for (and that the
        pane has) were left out."""
        ...


@runtime_checkable
class PaneLabels(Protocol):
    """Optional driver capability: a pane's title where the multiplexer shows it (tmux's pane
    border, herdr's sidebar and border). Cosmetic: callers never fail over a refusal."""

    def label(self, pane_id: str, label: str) -> None:
        """Title the pane; a later call replaces the title."""
        ...

    def label_all(self, titles: Mapping[str, str]) -> dict[str, CafleetError]:
        """Title each pane (pane id -> title), in as few calls as the multiplexer allows;
        the panes that failed, and why."""
        ...


@runtime_checkable
class PanePresentation(Protocol):
    """Optional driver capability: asking the person beside the panes to look. Only herdr
    has it; it is cosmetic, so callers never fail over a refusal."""

    def notify(self, title: str, body: str) -> None:
        """Ask the person to look (a notification with herdr's `request` sound)."""
        ...


@dataclass(frozen=True)
class FeedReading:
    """What a multiplexer's event feed knows of one server: its panes (their `title` None: a
    feed pushes states, not titles), the agent state of each watched pane and when that
    state was last seen to change."""

    panes: Mapping[str, PaneInfo]
    states: Mapping[str, str]
    since: Mapping[str, datetime]


class AgentStateFeed(Protocol):
    """Agent states pushed by a multiplexer server (herdr's event subscription), kept by a
    background reader: reading it never waits for the server."""

    def reading(self, watched: Collection[str]) -> FeedReading | None:
        """The latest reading covering the `watched` panes (which also become the panes
        followed from now on); None while the feed is not subscribed, or does not follow
        every watched pane yet: poll the server instead."""
        ...

    def close(self) -> None: ...


class AgentStateFeeds(Protocol):
    """The feed of the server a placement recorded; None for a multiplexer without one."""

    def __call__(self, backend: Multiplexer, socket: str | None) -> AgentStateFeed | None: ...
    def close(self) -> None:
        """Stop every feed opened so far."""
        ...


class Programs(Protocol):
    """Where executables live, for launching agents by absolute path."""

    def which(self, name: str) -> str | None: ...
    def first_line(self, path: str) -> str | None:
        """The first line of a file (to read a script's #! interpreter), None if unreadable."""
        ...


class AgentStarts(Protocol):
    """How the agent this process runs under (as one of its tools) was started."""

    def environment(self, markers: Collection[str]) -> Mapping[str, str] | None:
        """The start environment of the nearest ancestor process whose own start holds none
        of `markers` (the agent that sets them for its tools); None when the ancestors
        cannot be read (a sandbox with its own process namespace)."""
        ...


class SkillInstaller(Protocol):
    """Copies the bundled skills into coding-agent homes."""

    def detected_homes(self) -> list[SkillHome]:
        """Coding agents whose home directory exists, in detection order."""
        ...

    def skills_dir(self, home: SkillHome) -> Path: ...
    def install(self, home: SkillHome) -> SkillsCopied:
        """Write each bundled skill's files into the home's skills directory, removing only
        files an earlier install wrote; files of the user's are kept and listed."""
        ...


class PaneLocator(Protocol):
    """Finds the pane the calling process runs in (the would-be Director's pane)."""

    def current_pane(self) -> PaneLocation: ...


@dataclass(frozen=True)
class PushTarget:
    """Everything needed to reach a recipient's pane, read inside the send transaction."""

    agent_id: int
    backend: Multiplexer
    socket: str | None
    pane_id: str
    coding_agent: CodingAgent
    agent_commands: tuple[str, ...] = ()
    ready: bool = True  # False while the member's agent is still starting
    launch_pad: str | None = None  # the member's private directory, for native channels
    identity: str | None = None  # the pane's recorded identity (Placement.identity)
    host: str | None = None  # the machine of the pane (Placement.host)

    @staticmethod
    def of(placement: Placement) -> PushTarget:
        if placement.pane_id is None:
            raise ValueError("a pending placement has no pane to push to")
        return PushTarget(
            agent_id=placement.agent_id,
            backend=placement.backend,
            socket=placement.socket,
            pane_id=placement.pane_id,
            coding_agent=placement.coding_agent,
            agent_commands=placement.agent_commands,
            ready=not placement.is_starting,
            launch_pad=placement.launch_pad,
            identity=placement.identity,
            host=placement.host,
        )


@dataclass(frozen=True)
class Announcement:
    """A committed message to announce in its recipient's pane."""

    task_id: int
    from_agent_id: int
    created_at: datetime
    text: str
    target: PushTarget
    # earlier unread messages to the recipient announced lately and not yet taken in
    untaken: tuple[int, ...] = ()
    in_reply_to: int | None = None  # the message this one answers

    def preview(self, max_text_len: int) -> str:
        """What the recipient's agent is shown, on any channel."""
        return preview(
            self.task_id,
            self.from_agent_id,
            self.created_at,
            self.text,
            max_text_len,
            self.in_reply_to,
        )


@dataclass(frozen=True)
class AgentThread:
    """One Codex conversation: its id and the transcript file Codex writes for it."""

    thread_id: str
    transcript: str


class CodexThreads(Protocol):
    """Codex's own record of its conversations, and its way to queue a message for one."""

    def find(self, home: str, cwd: str, prompt: str, since: datetime) -> AgentThread | None:
        """The one conversation under `home` started in `cwd` since `since` with `prompt` as
        its first message; None when there is none, or more than one."""
        ...

    def queue(self, binary: str, home: str, thread_id: str, text: str) -> bool:
        """Queue `text` for the conversation (run at once when idle, after the turn when
        busy); whether Codex took it."""
        ...

    def status(self, transcript: str) -> StatusReport | None:
        """In a turn or idle, as the transcript's last turn event says; None if unreadable."""
        ...

    def taken(self, transcript: str) -> dict[int, datetime]:
        """The CAFleet messages whose previews the conversation took in as user turns, with
        when (recent ones: the transcript's tail); empty if unreadable."""
        ...


class NativeChannel(Protocol):
    """One way into an agent other than keystrokes (its hook, its own server)."""

    def offer(self, announcement: Announcement, text: str) -> PushOutcome | None:
        """Hand `text` to the agent; SENT settles the delivery, anything else lets the
        next channel try, and None says the channel does not reach this member at all (no
        attempt is recorded). Never raises for trouble with the agent."""
        ...


class Notifier(Protocol):
    def announce(self, announcement: Announcement) -> PushOutcome:
        """Tell the recipient about a stored message; never raises for pane trouble."""
        ...


class Resumption(Protocol):
    """The pane of a held delivery (domain/holds), looked at again."""

    def obstacle(self, announcement: Announcement) -> PushOutcome | None:
        """What stands in the way of typing into the recipient's pane now (a dialog, no
        answer, another program), as the outcome an attempt would give; None when the pane
        is clear. Types nothing."""
        ...

    def complete(self, announcement: Announcement, residue: Residue) -> PushOutcome | None:
        """Enter for the announcement's preview, typed earlier by an attempt that got as far
        as `residue` says, where the composer still shows it; None when it does not."""
        ...
