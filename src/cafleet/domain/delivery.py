"""The push ledger: how each message was announced to its recipient, one row per attempt."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum

from cafleet.domain.placement import PushTarget
from cafleet.domain.preview import preview


class DeliveryState(StrEnum):
    PENDING = "pending"
    SENT = "sent"
    SKIPPED = "skipped"
    FAILED = "failed"


class Channel(StrEnum):
    """How an announcement reached (or tried to reach) the recipient's agent."""

    CLAUDE_HOOK = "claude-hook"  # handed over by the member's waiting Stop hook
    OPENCODE_HTTP = "opencode-http"  # posted to the member's own OpenCode server
    CODEX_QUEUE = "codex-queue"  # queued for the member's Codex thread with `codex queue`
    HERDR_PROMPT = "herdr-prompt"  # herdr's `agent.prompt`: herdr types it and presses Enter
    KEYS = "keys"  # typed into the pane over tmux or herdr


class Residue(StrEnum):
    """What a keystroke attempt may have left in the recipient's composer."""

    NOTHING = "nothing"  # nothing was typed
    MAYBE_TEXT = "maybe-text"  # the text step did not answer: the preview may be there
    TEXT = "text"  # the preview was typed, its Enter withheld or not pressed
    MAYBE_SUBMITTED = "maybe-submitted"  # Enter did not answer: the preview may be submitted
    UNKNOWN = "unknown"  # the delivering process ended before it said


class SkipReason:
    """The fixed vocabulary of skip reasons (stored in the ledger's error column)."""

    SELF = "self"
    NO_PLACEMENT = "no-placement"
    PENDING_PANE = "pending-pane"
    PANE_GONE = "pane-gone"
    AGENT_NOT_DETECTED = "agent-not-detected"

    AGENT_STARTING = "agent-starting"
    AGENT_BUSY = "agent-busy"
    NO_WAITING_HOOK = "no-waiting-hook"
    NOT_TAKEN = "not-taken"
    NO_SESSION = "no-session"
    SERVER_SILENT = "server-silent"
    QUEUE_REFUSED = "queue-refused"
    AGENT_BLOCKED = "agent-blocked"  # settles the delivery: nothing may type into a dialog
    NO_DETECTED_AGENT = "no-detected-agent"
    NO_PROMPT_METHOD = "no-prompt-method"
    READ = "read"  # acknowledged while its announcement waited for the pane
    CANCELED = "canceled"  # cancelled while its announcement waited for the pane
    LEFT_COMPOSER = "left-composer"  # a preview typed earlier left the composer without Enter

    @staticmethod
    def refused(status: int) -> str:
        return f"refused:{status}"

    @staticmethod
    def not_agent(command: str) -> str:
        return f"not-agent:{command}"

    @staticmethod
    def dialog(sign: str) -> str:
        return f"dialog:{sign}"

    @staticmethod
    def joined(task_id: int) -> str:
        """Not announced again: the agent has not yet taken in the announcement of an earlier
        unread message, and the poll that follows it lists this one too."""
        return f"joined:{task_id}"


# how long an announcement the agent has not taken in yet stands for later messages; past it
# (a preview typed but never submitted) the next message is announced again
JOIN_WINDOW_SECONDS = 60


BEFORE_ENTER = " (before Enter)"

# a pending row another process delivers: the pane's queue holder takes every queued row in order
QUEUED = "queued"
# a row whose delivery began (attempted_at set) in a process that ended before it recorded the
# outcome: the preview may have been typed, even without its Enter, so it is not typed again
INTERRUPTED = "interrupted: the delivering process ended before it recorded the outcome"

_SKIP_WORDS = {
    SkipReason.SELF: "the recipient is the sender",
    SkipReason.NO_PLACEMENT: "the recipient has no pane",
    SkipReason.PENDING_PANE: "the recipient's pane is not recorded yet",
    SkipReason.PANE_GONE: "the pane is gone",
    SkipReason.AGENT_NOT_DETECTED: "cannot tell what runs in the pane",
    SkipReason.AGENT_STARTING: "the agent did not finish starting",
    SkipReason.AGENT_BUSY: "the agent stayed in a turn, during which it drops a shell command",
    SkipReason.NO_WAITING_HOOK: "no hook was waiting for mail (the agent was in a turn)",
    SkipReason.NOT_TAKEN: "the waiting hook did not take the message in time",
    SkipReason.NO_SESSION: "the agent's session is not known yet",
    SkipReason.SERVER_SILENT: "the agent's server did not answer",
    SkipReason.QUEUE_REFUSED: "`codex queue` did not take it",
    SkipReason.AGENT_BLOCKED: "the agent waits at an approval or question dialog",
    SkipReason.NO_DETECTED_AGENT: "the multiplexer detected no agent in the pane",
    SkipReason.NO_PROMPT_METHOD: "the multiplexer's server has no prompt request",
    SkipReason.READ: "the recipient read it while its announcement waited for the pane",
    SkipReason.CANCELED: "it was cancelled while its announcement waited for the pane",
    SkipReason.LEFT_COMPOSER: "the preview typed earlier left the composer without its Enter",
}


def describe_skip(reason: str | None) -> str:
    """A skip reason from the ledger in words, e.g. `not-agent:bash` -> `pane runs bash`."""
    reason = reason or ""
    late = reason.endswith(BEFORE_ENTER)
    base = reason.removesuffix(BEFORE_ENTER)
    if base.startswith("not-agent:"):
        words = f"pane runs {base.removeprefix('not-agent:')}"
    elif base.startswith("dialog:"):
        words = f"a dialog is on screen ({base.removeprefix('dialog:')})"
    elif base.startswith("joined:"):
        words = (
            f"announced with message {base.removeprefix('joined:')}, which the agent has not"
            " taken in yet; its poll lists this one too"
        )
    elif base.startswith("refused:"):
        words = f"the agent's server refused it (HTTP {base.removeprefix('refused:')})"
    else:
        words = _SKIP_WORDS.get(base, base or "unknown reason")
    return f"{words}; the text was typed but Enter withheld" if late else words


@dataclass(frozen=True)
class PushOutcome:
    """What a Notifier reports for one attempt, and the attempts it fell back from."""

    state: DeliveryState
    transport: str | None = None
    pane_id: str | None = None
    error: str | None = None
    channel: str | None = None
    confirmed_at: datetime | None = None  # the agent itself said it took the message in
    fallen_from: tuple[PushOutcome, ...] = ()  # earlier attempts on other channels
    residue: Residue = Residue.NOTHING  # what the attempt may have left in the composer

    @staticmethod
    def sent(transport: str, pane_id: str, channel: str = Channel.KEYS) -> PushOutcome:
        return PushOutcome(DeliveryState.SENT, transport, pane_id, channel=channel)

    @staticmethod
    def skipped(
        reason: str,
        transport: str | None = None,
        pane_id: str | None = None,
        channel: str | None = None,
    ) -> PushOutcome:
        return PushOutcome(DeliveryState.SKIPPED, transport, pane_id, reason, channel)

    @staticmethod
    def failed(
        error: str,
        transport: str | None = None,
        pane_id: str | None = None,
        channel: str | None = None,
    ) -> PushOutcome:
        return PushOutcome(DeliveryState.FAILED, transport, pane_id, error, channel)

    @property
    def settles(self) -> bool:
        """Whether no later rung may try: the message was handed over, or the agent waits
        at a dialog, into which nothing may be typed."""
        return self.state is DeliveryState.SENT or self.error == SkipReason.AGENT_BLOCKED

    def after(self, earlier: tuple[PushOutcome, ...]) -> PushOutcome:
        """This outcome as the last of a ladder whose earlier rungs gave `earlier`."""
        return replace(self, fallen_from=earlier + self.fallen_from)

    @property
    def attempts(self) -> tuple[PushOutcome, ...]:
        """Every attempt in order, this one last."""
        return (*self.fallen_from, replace(self, fallen_from=()))


@dataclass(frozen=True)
class Delivery:
    task_id: int
    recipient_agent_id: int
    state: DeliveryState
    created_at: datetime
    transport: str | None = None
    pane_id: str | None = None
    attempted_at: datetime | None = None
    error: str | None = None
    attempt: int = 1
    channel: str | None = None
    confirmed_at: datetime | None = None

    def settled(self, outcome: PushOutcome, at: datetime) -> Delivery:
        """This row with one attempt's outcome (the ladder's others are `attempts_of`)."""
        return replace(
            self,
            state=outcome.state,
            transport=outcome.transport,
            pane_id=outcome.pane_id,
            error=outcome.error,
            channel=outcome.channel,
            confirmed_at=outcome.confirmed_at,
            attempted_at=at,
        )

    def started(self, at: datetime) -> Delivery:
        """This pending row as its delivery begins (the mark an interrupted one leaves)."""
        return replace(self, attempted_at=at)

    @property
    def announcing(self) -> bool:
        """Pending, yet a delivery of it began: being announced, as another process sees it
        (unless the process that began it ended: see `interrupted`)."""
        return self.state is DeliveryState.PENDING and self.attempted_at is not None

    @property
    def interrupted(self) -> bool:
        """Begun and still pending, as the pane's queue holder finds it: only the holder
        delivers, so the process that began it ended."""
        return self.announcing

    def attempts_of(self, outcome: PushOutcome, at: datetime) -> list[Delivery]:
        """One row per attempt of the ladder, numbered from this row's attempt on."""
        return [
            replace(self.settled(step, at), attempt=self.attempt + n)
            for n, step in enumerate(outcome.attempts)
        ]


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
