"""Held deliveries on fake panes: a message that meets a dialog, a pane that answers late,
or a preview left in the composer waits at the head of its pane's queue and is announced
once the pane is clear, exactly once; nothing is typed into a dialog, nothing glued to a
preview left behind, and every ledger row names the channel that produced it."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from cafleet.adapters.fake.queue_drains import RecordingDrains
from cafleet.application.fleets import FleetCreated
from cafleet.application.messaging.queue import (
    HOLD_POLL_SECONDS,
    HOLD_WATCH_SECONDS,
    UNANSWERED_WATCH_SECONDS,
)
from cafleet.application.messaging.service import MessagingService
from cafleet.domain.delivery import (
    INTERRUPTED,
    QUEUED,
    Channel,
    Delivery,
    DeliveryState,
)
from cafleet.domain.errors import Unavailable
from cafleet.domain.message import unicast
from cafleet.domain.panes import Key
from cafleet.domain.placement import Multiplexer
from cafleet.domain.preview import preview
from support.pane_rig import SOCKET, FakePane, Member, PaneRig, ScriptedDriver

# Claude Code's permission dialog, drawn where its composer was; "Esc to cancel" ends it
DIALOG = [
    "Bash command",
    "  rm -rf build",
    "Do you want to proceed?",
    "❯ 1. Yes",
    "  2. No",
    "Esc to cancel",
]
LATE = "tmux set-buffer timed out after 5s"
KEYS, SENT, SKIPPED, FAILED = Channel.KEYS, DeliveryState.SENT, DeliveryState.SKIPPED, "failed"


def ledger(rig: PaneRig, task_id: int) -> list[tuple[str | None, str, str | None]]:
    return [(r.channel, r.state.value, r.error) for r in rig.deliveries(task_id)]


def previews(pane: FakePane) -> list[str]:
    """The bodies of the previews the agent received, one per submitted turn."""
    return [turn.split("\n", 1)[-1] for turn in pane.submitted()]


def answered_late(driver: ScriptedDriver, method: str) -> None:
    """The next `method` call is carried out by the server but answered after the timeout,
    as a tmux client under load does."""
    original = getattr(driver, method)

    def late(*args: object) -> None:
        setattr(driver, method, original)
        original(*args)
        raise Unavailable(LATE)

    setattr(driver, method, late)


class Team:
    """A fleet whose Director (pane %0) and worker run Claude Code, composers drawn."""

    def __init__(self, rig: PaneRig) -> None:
        self.rig = rig
        self.made: FleetCreated = rig.fleet()
        self.worker: Member = rig.member(self.made)
        self.director_pane = rig.director_pane()
        self.worker_pane = self.worker.pane
        assert self.worker_pane is not None
        for pane in (self.director_pane, self.worker_pane):
            pane.composer = "❯"
        self.drains = RecordingDrains()
        self.messaging: MessagingService = rig.messaging(drains=self.drains)

    @property
    def director(self) -> int:
        return self.made.director.agent_id

    def report(self, text: str) -> int:
        """The worker's message to the Director."""
        sent = self.messaging.send(
            self.made.fleet.fleet_id, self.worker.agent_id, self.director, text
        )
        return sent.message.task_id

    def order(self, text: str) -> int:
        """The Director's message to the worker."""
        fleet_id = self.made.fleet.fleet_id
        return self.messaging.send(
            fleet_id, self.director, self.worker.agent_id, text
        ).message.task_id

    def directors_dialog(self) -> FakePane:
        """The Director's pane, showing a permission dialog."""
        self.director_pane.dialog = list(DIALOG)
        return self.director_pane

    def drain(self, agent_id: int, watch: float = 0.0) -> None:
        """What the drainer a held delivery starts does (`python -m
        cafleet.entrypoints.processes.drain`)."""
        self.messaging.drain_queued([agent_id], watch)


@pytest.fixture
def team(rig: PaneRig) -> Team:
    return Team(rig)


# --------------------------------------------------------------------------- dialogs


def test_a_report_meeting_the_directors_dialog_is_announced_once_after_it_closes(
    team: Team,
) -> None:
    pane = team.directors_dialog()

    task = team.report("report: done")

    [row] = [r for r in team.rig.deliveries(task) if r.state is DeliveryState.PENDING]
    assert row.error == "held:nothing:dialog:esc to cancel"
    assert team.drains.started == [[team.director]]  # a drainer watches the pane
    assert pane.typed == [] and pane.into_dialog == []
    team.rig.clock.after(30, pane.dialog.clear)  # the user answers the dialog

    team.drain(team.director, HOLD_WATCH_SECONDS)

    assert previews(pane) == ["report: done"]
    assert pane.into_dialog == []
    assert ledger(team.rig, task) == [
        (KEYS, "skipped", "dialog:esc to cancel"),
        (KEYS, "sent", None),
    ]
    team.drain(team.director, HOLD_WATCH_SECONDS)  # nothing is announced twice
    assert previews(pane) == ["report: done"]


def test_the_drainer_looks_at_the_pane_at_a_modest_cadence_and_gives_up_at_its_bound(
    team: Team,
) -> None:
    pane = team.directors_dialog()
    task = team.report("report")
    started = team.rig.clock.now()
    looks_before = team.rig.driver.calls

    team.drain(team.director, watch=60)

    waited = (team.rig.clock.now() - started).total_seconds()
    assert 60 <= waited < 60 + 2 * HOLD_POLL_SECONDS
    assert team.rig.driver.calls - looks_before <= 3 * (60 / HOLD_POLL_SECONDS + 2)
    assert pane.typed == [] and pane.into_dialog == []
    assert team.rig.deliveries(task)[-1].state is DeliveryState.PENDING  # still held
    pane.dialog.clear()
    team.drain(team.director)  # the next holder (a later send, the monitor's drainer)
    assert previews(pane) == ["report"]


def test_later_messages_queue_behind_the_held_one_and_none_reaches_the_dialog(
    team: Team,
) -> None:
    pane = team.directors_dialog()
    first = team.report("first")

    second = team.messaging.send(
        team.made.fleet.fleet_id, team.worker.agent_id, team.director, "second"
    )

    assert (second.delivery.state, second.delivery.error) == (DeliveryState.PENDING, QUEUED)
    assert pane.typed == [] and pane.into_dialog == []
    pane.dialog.clear()
    team.drain(team.director)
    assert previews(pane) == ["first", "second"]
    assert ledger(team.rig, first)[-1] == (KEYS, "sent", None)
    assert ledger(team.rig, second.message.task_id) == [(KEYS, "sent", None)]


def test_a_held_message_read_meanwhile_is_not_announced(team: Team) -> None:
    pane = team.directors_dialog()
    task = team.report("read by a poll")
    team.messaging.ack(team.made.fleet.fleet_id, team.director, task)

    pane.dialog.clear()
    team.drain(team.director)

    assert pane.typed == []
    assert ledger(team.rig, task)[-1] == (None, "skipped", "read")


def test_a_member_whose_dialog_opens_between_text_and_enter_gets_enter_after_it_closes(
    team: Team,
) -> None:
    pane = team.worker_pane
    assert pane is not None
    team.rig.clock.after(0.01, lambda: pane.dialog.extend(DIALOG))  # opens during the delay

    task = team.order("build it")

    assert pane.submitted() == [] and pane.into_dialog == []
    assert ledger(team.rig, task)[-1][2] == "held:text:dialog:esc to cancel (before Enter)"
    pane.dialog.clear()
    team.drain(team.worker.agent_id)
    assert previews(pane) == ["build it"]  # the preview left in the composer, finished
    assert [k for k in pane.typed if k[0] == "paste"] == pane.typed[:1]  # typed once
    assert ledger(team.rig, task)[-1] == (KEYS, "sent", None)


class HerdrServer(ScriptedDriver):
    """A fake herdr server that reports its detection of each pane, as herdr's does."""

    def agent_states(self) -> dict[str, str]:
        return {p.pane_id: "blocked" if p.blocked else "idle" for p in self.panes.values()}


def test_a_message_herdr_refuses_for_a_dialog_is_prompted_once_it_is_answered() -> None:
    rig = PaneRig(backend=Multiplexer.HERDR)
    rig.driver = HerdrServer(Multiplexer.HERDR)
    rig.drivers.servers[(Multiplexer.HERDR, SOCKET)] = rig.driver
    made = rig.fleet()
    worker = rig.member(made)
    pane = rig.director_pane()
    pane.detected, pane.blocked = "claude", True
    messaging = rig.messaging(notifier=rig.ladder())
    fleet_id, director = made.fleet.fleet_id, made.director.agent_id

    task = messaging.send(fleet_id, worker.agent_id, director, "report").message.task_id
    messaging.drain_queued([director])  # looked at again while herdr still says blocked

    assert pane.typed == []
    assert ledger(rig, task) == [
        (Channel.HERDR_PROMPT, "skipped", "agent-blocked"),
        (None, "pending", "held:nothing:agent-blocked"),
    ]
    pane.blocked = False
    messaging.drain_queued([director])
    assert previews(pane) == ["report"]
    assert ledger(rig, task)[-1] == (Channel.HERDR_PROMPT, "sent", None)


# --------------------------------------------------------------------------- late answers


def test_a_paste_answered_late_is_finished_from_the_composer_and_the_next_is_not_glued(
    team: Team,
) -> None:
    pane = team.worker_pane
    assert pane is not None
    answered_late(team.rig.driver, "paste_text")

    first = team.order("first")

    assert pane.submitted() == [] and "first" in pane.composing()  # left in the composer
    assert ledger(team.rig, first) == [
        (KEYS, FAILED, LATE),
        (None, "pending", f"held:maybe-text:{LATE}"),
    ]
    team.drain(team.worker.agent_id)  # the pane answers again
    second = team.order("second")

    assert previews(pane) == ["first", "second"]
    assert ledger(team.rig, first)[-1] == (KEYS, "sent", None)
    assert ledger(team.rig, second) == [(KEYS, "sent", None)]


def test_a_paste_that_never_landed_is_typed_again_once(team: Team) -> None:
    pane = team.worker_pane
    assert pane is not None
    team.rig.driver.failures["paste_text"] = Unavailable(LATE)
    task = team.order("lost")
    del team.rig.driver.failures["paste_text"]

    team.drain(team.worker.agent_id)

    assert previews(pane) == ["lost"]
    assert ledger(team.rig, task) == [(KEYS, FAILED, LATE), (KEYS, "sent", None)]


def test_an_enter_answered_late_counts_as_sent_and_nothing_is_typed_again(team: Team) -> None:
    pane = team.worker_pane
    assert pane is not None
    answered_late(team.rig.driver, "send_keys")

    task = team.order("once")
    team.drain(team.worker.agent_id)
    team.drain(team.worker.agent_id)

    assert previews(pane) == ["once"]
    assert pane.typed.count(("key", Key.ENTER.value)) == 1
    assert ledger(team.rig, task) == [(KEYS, FAILED, LATE), (KEYS, "sent", None)]


def test_a_drainer_stops_watching_a_pane_that_does_not_answer_long_before_its_bound(
    team: Team,
) -> None:
    team.rig.driver.unreachable = "server stalled"
    task = team.order("x")
    started = team.rig.clock.now()

    team.drain(team.worker.agent_id, HOLD_WATCH_SECONDS)

    waited = (team.rig.clock.now() - started).total_seconds()
    assert UNANSWERED_WATCH_SECONDS <= waited <= UNANSWERED_WATCH_SECONDS + 2 * HOLD_POLL_SECONDS
    assert team.rig.deliveries(task)[-1].state is DeliveryState.PENDING  # left to the next


def test_a_pane_whose_server_no_longer_runs_is_gone_not_held(team: Team) -> None:
    team.rig.driver.server_gone = True  # no socket, or nobody listens at it

    task = team.order("x")

    assert ledger(team.rig, task) == [(KEYS, "skipped", "pane-gone")]


def test_a_pane_that_keeps_failing_is_given_up_after_its_time(team: Team) -> None:
    pane = team.worker_pane
    assert pane is not None
    team.rig.driver.unreachable = "server stalled"
    task = team.order("never")

    team.rig.clock.advance(601)
    team.drain(team.worker.agent_id)

    assert team.rig.deliveries(task)[-1].state is DeliveryState.FAILED
    team.rig.driver.unreachable = None
    team.order("after")
    assert previews(pane) == ["after"]


# --------------------------------------------------------------------------- interrupted


def interrupted_send(team: Team, text: str, pasted: bool) -> int:
    """What a sender killed between its paste and its Enter leaves: a begun row and,
    when it got that far, its preview in the worker's composer."""
    rig, pane = team.rig, team.worker_pane
    assert pane is not None
    now = rig.clock.now()
    with rig.store(write=True) as uow:
        task = uow.messages.add(unicast(team.director, team.worker.agent_id, text, now))
        row = Delivery(task, team.worker.agent_id, DeliveryState.PENDING, now)
        uow.deliveries.add(row.started(now))
        uow.commit()
    if pasted:
        pane.typed.append(("paste", preview(task, team.director, now, text, 200)))
    return task


def test_a_preview_left_by_a_killed_sender_is_finished_before_the_next_is_typed(
    team: Team,
) -> None:
    pane = team.worker_pane
    assert pane is not None
    killed = interrupted_send(team, "killed mid-way", pasted=True)

    later = team.order("next")

    assert previews(pane) == ["killed mid-way", "next"]
    assert [k for k in pane.typed if k[0] == "paste"] == pane.typed[::2]  # no paste again
    assert ledger(team.rig, killed) == [(KEYS, "sent", None)]
    assert ledger(team.rig, later) == [(KEYS, "sent", None)]


def test_a_killed_send_that_left_nothing_is_settled_interrupted_and_not_typed(
    team: Team,
) -> None:
    pane = team.worker_pane
    assert pane is not None
    killed = interrupted_send(team, "killed early", pasted=False)

    team.order("next")

    assert previews(pane) == ["next"]
    assert ledger(team.rig, killed) == [(None, FAILED, INTERRUPTED)]


# --------------------------------------------------------------------------- channels


@pytest.mark.parametrize(
    ("setup", "reason"),
    [
        (lambda pane: setattr(pane, "command", "bash"), "not-agent:bash"),
        (lambda pane: pane.screen.append("Do you trust this folder? Esc to cancel"), None),
    ],
    ids=["shell", "dialog"],
)
def test_every_attempt_row_names_the_channel_that_produced_it(
    team: Team, setup: Callable[[FakePane], None], reason: str | None
) -> None:
    pane = team.worker_pane
    assert pane is not None
    setup(pane)

    task = team.order("x")

    attempts = [r for r in team.rig.deliveries(task) if r.state is not DeliveryState.PENDING]
    assert attempts and all(r.channel == KEYS for r in attempts)
    if reason is not None:
        assert attempts[-1].error == reason
