"""The delivery ladder: each message tries the agent's own channels, then keystrokes.

A profile lists the native channels of its agent (Claude Code's waiting hook, `codex queue`,
OpenCode's HTTP server), then the multiplexer's (herdr's prompt). The first that takes the
message settles the delivery, and so does herdr's refusal for a dialog (nothing may type into
it); each one that cannot (no hook waiting, the server silent) is an attempt in the ledger
with its reason, and the guarded keystroke path is the last rung. A message is announced once:
a rung either took it or provably did not (the hook's mailbox hands a message over or gives it
back, never both). A message whose recipient has not yet taken in the announcement of an
earlier unread one is not announced at all (`joined:<task>`): the poll that follows lists both.
That holds only while the agent's own record of what it took in can be read: without one
(hooks switched off, a session not known yet, a server that does not answer) every message
is announced.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Protocol

from cafleet.application.members.pads import known_session, known_thread
from cafleet.application.ports.agents import CodexThreads, LaunchPad, LaunchPads
from cafleet.application.ports.delivery import NativeChannel, Notifier
from cafleet.application.ports.system import Clock
from cafleet.domain.agents.profile import SPAWN_FILE, SpawnFacts
from cafleet.domain.agents.registry import AgentProfiles
from cafleet.domain.delivery import Announcement, Channel, DeliveryState, PushOutcome, SkipReason
from cafleet.domain.errors import CafleetError

if TYPE_CHECKING:
    from cafleet.application.messaging.receipts import ReceiptReader

CLAIM_SECONDS = 2.0  # a waiting hook polls its mailbox every 0.1 s
CLAIM_POLL_SECONDS = 0.05


class LastRung(Protocol):
    """The keystroke path: it reaches every placed member, so it always gives an outcome."""

    def offer(self, announcement: Announcement, text: str) -> PushOutcome: ...


class ChannelLadder(Notifier):
    def __init__(
        self,
        profiles: AgentProfiles,
        channels: Mapping[Channel, NativeChannel],
        keys: LastRung,
        max_text_len: int,
        receipts: ReceiptReader | None = None,
    ) -> None:
        self._profiles = profiles
        self._channels = channels
        self._keys = keys
        self._max_text_len = max_text_len
        self._receipts = receipts

    def announce(self, announcement: Announcement) -> PushOutcome:
        joined = self._joined(announcement)
        if joined is not None:
            target = announcement.target
            return PushOutcome.skipped(
                SkipReason.joined(joined), target.backend.value, target.pane_id
            )
        text = announcement.preview(self._max_text_len)
        tried: list[PushOutcome] = []
        for name in self._profiles[announcement.target.coding_agent].ladder:
            rung = self._channels.get(name)
            outcome = None if rung is None else rung.offer(announcement, text)
            if outcome is None:  # not a channel for this member: no row
                continue
            if outcome.settles:  # taken, or a dialog waits: no later rung may type
                return outcome.after(tuple(tried))
            tried.append(outcome)
        return self._keys.offer(announcement, text).after(tuple(tried))

    def _joined(self, announcement: Announcement) -> int | None:
        """The earlier message whose announcement still stands for this one: announced,
        unread, and not yet taken in by the agent, as its own record says now. An agent
        whose record cannot be read now is told of every message: a receipt that cannot
        come would hold every later message back."""
        target = announcement.target
        receipts = self._receipts
        if not announcement.untaken or receipts is None:
            return None
        taken = receipts.taken(target.coding_agent, target.launch_pad)
        if taken is None:
            return None
        waiting = [task for task in announcement.untaken if task not in taken]
        return waiting[-1] if waiting else None


def _pad_of(pads: LaunchPads, announcement: Announcement) -> LaunchPad | None:
    location = announcement.target.launch_pad
    return None if location is None else pads.reopen(location)


def _outcome(
    announcement: Announcement, channel: Channel, state: DeliveryState, error: str | None = None
) -> PushOutcome:
    target = announcement.target
    return PushOutcome(state, target.backend.value, target.pane_id, error, channel)


class ClaudeHookChannel(NativeChannel):
    """Mail for Claude Code's asyncRewake Stop hook, which waits in the member's pad.

    The hook wakes an idle session at once and reaches a busy one after its running tool;
    it never interrupts. No hook waits while a turn that began without one runs (the first
    turn, or one started by typing), so such a message falls back to keystrokes. A member
    whose hooks never reported anything has them switched off: the channel is not one of
    its ways in at all.
    """

    def __init__(self, pads: LaunchPads, clock: Clock) -> None:
        self._pads = pads
        self._clock = clock

    def offer(self, announcement: Announcement, text: str) -> PushOutcome | None:
        channel = Channel.CLAUDE_HOOK
        pad = _pad_of(self._pads, announcement)
        if pad is None or not pad.events():  # the Director's pane, or no hook ever ran
            return None
        if not pad.mail_waiting():
            return _outcome(
                announcement, channel, DeliveryState.SKIPPED, SkipReason.NO_WAITING_HOOK
            )
        task_id = announcement.task_id
        try:
            pad.post_mail(task_id, text)
        except CafleetError as exc:
            return _outcome(announcement, channel, DeliveryState.FAILED, exc.message)
        waited = 0.0
        while (taken := pad.mail_taken_at(task_id)) is None and waited < CLAIM_SECONDS:
            self._clock.sleep(CLAIM_POLL_SECONDS)
            waited += CLAIM_POLL_SECONDS
        if taken is None and pad.withdraw_mail(task_id):
            return _outcome(announcement, channel, DeliveryState.SKIPPED, SkipReason.NOT_TAKEN)
        sent = _outcome(announcement, channel, DeliveryState.SENT)
        return replace(sent, confirmed_at=taken or pad.mail_taken_at(task_id) or self._clock.now())


class OpencodeHttpChannel(NativeChannel):
    """A prompt posted to the member's own OpenCode server, for the session its TUI shows.

    The server queues a prompt for a busy session and hands it over at the turn's next
    step, without interrupting it, and never touches what a person is typing in the
    composer. Only the member's own server is asked (another process's server would run
    the prompt where no TUI shows it). The session is the one the readiness check saw
    busy, or else the one found later on that server (`known_session`).
    """

    def __init__(self, pads: LaunchPads, profiles: AgentProfiles) -> None:
        self._pads = pads
        self._profiles = profiles

    def offer(self, announcement: Announcement, text: str) -> PushOutcome | None:
        channel = Channel.OPENCODE_HTTP
        http = self._profiles[announcement.target.coding_agent].http
        pad = _pad_of(self._pads, announcement)
        if pad is None or http is None:
            return None
        session = known_session(pad, http)
        if session is None:
            return _outcome(announcement, channel, DeliveryState.SKIPPED, SkipReason.NO_SESSION)
        path, body = http.prompt(session, text)
        status = pad.post(path, http.user, body)
        if status is None and announcement.task_id in http.listed(
            pad.get(http.messages_path.format(session=session), http.user)
        ):  # no answer in time, but the prompt landed: typing it too would announce it twice
            return _outcome(announcement, channel, DeliveryState.SENT)
        if status is None:
            return _outcome(announcement, channel, DeliveryState.SKIPPED, SkipReason.SERVER_SILENT)
        if not 200 <= status < 300:
            return _outcome(
                announcement, channel, DeliveryState.SKIPPED, SkipReason.refused(status)
            )
        return _outcome(announcement, channel, DeliveryState.SENT)


class CodexQueueChannel(NativeChannel):
    """A message queued for the member's Codex conversation with `codex queue`: run at once
    by an idle TUI, after the running turn by a busy one. The conversation is found once,
    in Codex's own record, by the working directory and spawn prompt the pad kept."""

    def __init__(self, pads: LaunchPads, threads: CodexThreads) -> None:
        self._pads = pads
        self._threads = threads

    def offer(self, announcement: Announcement, text: str) -> PushOutcome | None:
        channel = Channel.CODEX_QUEUE
        pad = _pad_of(self._pads, announcement)
        spawn = None if pad is None else SpawnFacts.parse(pad.read(SPAWN_FILE))
        if pad is None or spawn is None:
            return None
        thread_id = known_thread(pad, spawn, self._threads)
        if thread_id is None:
            return _outcome(announcement, channel, DeliveryState.SKIPPED, SkipReason.NO_SESSION)
        if not self._threads.queue(spawn.binary, spawn.home, thread_id, text):
            return _outcome(announcement, channel, DeliveryState.SKIPPED, SkipReason.QUEUE_REFUSED)
        return _outcome(announcement, channel, DeliveryState.SENT)


def channel_ladder(
    profiles: AgentProfiles,
    pads: LaunchPads,
    threads: CodexThreads,
    clock: Clock,
    keys: LastRung,
    max_text_len: int,
    herdr_prompt: NativeChannel | None = None,
) -> ChannelLadder:
    """The ladder with every native channel CAFleet has: the agent's own, then herdr's
    prompt (it reaches members on herdr), then keys."""
    from cafleet.application.messaging.receipts import ReceiptReader

    channels: dict[Channel, NativeChannel] = {
        Channel.CLAUDE_HOOK: ClaudeHookChannel(pads, clock),
        Channel.OPENCODE_HTTP: OpencodeHttpChannel(pads, profiles),
        Channel.CODEX_QUEUE: CodexQueueChannel(pads, threads),
    }
    if herdr_prompt is not None:
        channels[Channel.HERDR_PROMPT] = herdr_prompt
    receipts = ReceiptReader(pads, profiles, threads)
    return ChannelLadder(profiles, channels, keys, max_text_len, receipts)
