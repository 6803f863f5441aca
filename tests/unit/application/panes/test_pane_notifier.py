"""PaneNotifier, alone and wired into MessagingService over fake panes."""

from __future__ import annotations

import pytest

from cafleet.application.panes.notifier import PaneNotifier
from cafleet.domain.delivery import Announcement, Channel, DeliveryState, PushOutcome
from cafleet.domain.message import MessageState
from support.pane_rig import ENTER, START, SUBMIT_DELAYS, PaneRig, TimedOutLocks, paste, target

HEADER_TS = "2026-01-01T08:00:00.000000+00:00"


def announce(rig: PaneRig, pane_id: str, body: str, max_text_len: int = 200) -> PushOutcome:
    notifier = PaneNotifier(rig.keystrokes(), max_text_len)
    return notifier.announce(Announcement(12, 3, START, body, target(pane_id)))


# --------------------------------------------------------------------------- the notifier


def test_preview_is_pasted_and_submitted_without_esc(rig: PaneRig) -> None:
    pane = rig.driver.add_pane("claude")

    outcome = announce(rig, pane.pane_id, "hello worker")

    assert outcome == PushOutcome.sent("tmux", pane.pane_id)
    assert pane.typed == [paste(f"[cafleet msg 12 from 3 {HEADER_TS}]\nhello worker"), ENTER]


@pytest.mark.parametrize(
    ("body", "shown"),
    [
        pytest.param("hello worker", "hello worker", id="plain"),
        pytest.param("line1\nline2", "line1⏎line2", id="lf"),
        pytest.param("one\r\ntwo", "one⏎two", id="crlf"),
        pytest.param("run $(date) | tee `x`", "run $﹙date) │ tee ˋxˋ", id="shell-active"),
        pytest.param("bell\x07esc\x1bc1\x85", "bell\ufffdesc\ufffdc1\ufffd", id="controls"),
        pytest.param("y" * 205, "y" * 200 + "…", id="truncated"),
    ],
)
def test_preview_text_is_exact(rig: PaneRig, body: str, shown: str) -> None:
    pane = rig.driver.add_pane("claude")

    announce(rig, pane.pane_id, body)

    assert pane.submitted() == [f"[cafleet msg 12 from 3 {HEADER_TS}]\n{shown}"]


def test_preview_honours_the_configured_text_limit(rig: PaneRig) -> None:
    pane = rig.driver.add_pane("claude")

    announce(rig, pane.pane_id, "abcdefgh", max_text_len=5)

    assert pane.submitted() == [f"[cafleet msg 12 from 3 {HEADER_TS}]\nabcde…"]


def test_notifier_reports_a_shell_pane_as_skipped(rig: PaneRig) -> None:
    pane = rig.driver.add_pane("bash")

    outcome = announce(rig, pane.pane_id, "rm -rf /")

    assert outcome == PushOutcome.skipped("not-agent:bash", "tmux", pane.pane_id, Channel.KEYS)
    assert pane.typed == []


# --------------------------------------------------------------------------- send


def test_send_to_a_pane_bound_member_is_sent_over_tmux(rig: PaneRig) -> None:
    made = rig.fleet()
    worker = rig.member(made)
    assert worker.pane is not None

    result = rig.messaging().send(
        made.fleet.fleet_id, made.director.agent_id, worker.agent_id, "hi"
    )

    [row] = rig.deliveries(result.message.task_id)
    assert (row.state, row.transport, row.pane_id, row.error) == (
        "sent",
        "tmux",
        worker.pane_id,
        None,
    )
    assert row.attempted_at is not None
    assert result.delivery == row
    assert worker.pane.submitted() == [
        f"[cafleet msg {result.message.task_id} from {made.director.agent_id} {HEADER_TS}]\nhi"
    ]


def test_send_to_a_member_whose_pane_runs_a_shell_is_skipped(rig: PaneRig) -> None:
    made = rig.fleet()
    worker = rig.member(made, command="bash")
    assert worker.pane is not None

    result = rig.messaging().send(
        made.fleet.fleet_id, made.director.agent_id, worker.agent_id, "echo pwned"
    )

    [row] = rig.deliveries(result.message.task_id)
    assert (row.state, row.transport, row.pane_id, row.error) == (
        "skipped", "tmux", worker.pane_id, "not-agent:bash",
    )  # fmt: skip
    assert worker.pane.typed == []
    assert result.message.state is MessageState.INPUT_REQUIRED


def test_send_to_a_member_whose_pane_is_gone_is_skipped(rig: PaneRig) -> None:
    made = rig.fleet()
    worker = rig.member(made, command=None)

    result = rig.messaging().send(made.fleet.fleet_id, made.director.agent_id, worker.agent_id, "x")

    assert (result.delivery.state, result.delivery.error) == ("skipped", "pane-gone")


def test_send_to_a_pending_member_types_nothing(rig: PaneRig) -> None:
    made = rig.fleet()
    worker = rig.member(made, pending=True)

    result = rig.messaging().send(made.fleet.fleet_id, made.director.agent_id, worker.agent_id, "x")

    assert (result.delivery.state, result.delivery.error) == ("skipped", "pending-pane")
    assert rig.director_pane().typed == []


def test_send_to_the_administrator_or_to_oneself_types_nothing(rig: PaneRig) -> None:
    made = rig.fleet()
    fleet_id, director = made.fleet.fleet_id, made.director.agent_id
    messaging = rig.messaging()

    to_admin = messaging.send(fleet_id, director, made.administrator.agent_id, "x")
    to_self = messaging.send(fleet_id, director, director, "x")

    assert (to_admin.delivery.state, to_admin.delivery.error) == ("skipped", "no-placement")
    assert (to_self.delivery.state, to_self.delivery.error) == ("skipped", "self")
    assert rig.director_pane().typed == []


def test_message_is_committed_before_the_preview_is_typed(rig: PaneRig) -> None:
    made = rig.fleet()
    worker = rig.member(made)
    seen: list[tuple[str | None, str | None]] = []

    def check_store(pane_id: str, text: str) -> None:
        task_id = int(text.split()[2])
        with rig.store() as uow:
            message = uow.messages.get(task_id)
            row = uow.deliveries.get(task_id, worker.agent_id)
        seen.append(
            (
                message.state.value if message is not None else None,
                row.state.value if row is not None else None,
            )
        )

    rig.driver.before_paste = check_store

    rig.messaging().send(made.fleet.fleet_id, made.director.agent_id, worker.agent_id, "hi")

    assert seen == [("input_required", "pending")]


def test_a_send_lock_timeout_is_a_failed_attempt_held_for_a_retry_and_the_message_stays(
    rig: PaneRig,
) -> None:
    made = rig.fleet()
    worker = rig.member(made)
    rig.locks = TimedOutLocks()

    result = rig.messaging().send(made.fleet.fleet_id, made.director.agent_id, worker.agent_id, "x")

    failed, held = rig.deliveries(result.message.task_id)
    assert (failed.state, failed.error, failed.channel) == (
        "failed",
        "send lock timeout after 30s",
        Channel.KEYS,
    )
    assert (held.state, held.error) == ("pending", "held:nothing:send lock timeout after 30s")
    with rig.store() as uow:
        stored = uow.messages.get(result.message.task_id)
    assert stored is not None
    assert stored.state is MessageState.INPUT_REQUIRED


def test_nudge_types_the_preview_into_the_directors_pane(rig: PaneRig) -> None:
    made = rig.fleet()
    watcher = rig.member(made, "watcher", monitor=True)

    result = rig.messaging().nudge(
        made.fleet.fleet_id, watcher.agent_id, made.director.agent_id, "look at member 4"
    )

    assert result.sent.delivery.state is DeliveryState.SENT
    task_id = result.sent.message.task_id
    assert rig.director_pane().submitted() == [
        f"[cafleet msg {task_id} from {watcher.agent_id} {HEADER_TS}]\nlook at member 4"
    ]


# --------------------------------------------------------------------------- broadcast


def test_broadcast_to_20_placed_members_types_into_all_at_once_with_one_delay(
    rig: PaneRig,
) -> None:
    made = rig.fleet()
    members = [rig.member(made, f"m{n}") for n in range(20)]

    result = rig.messaging().broadcast(made.fleet.fleet_id, made.director.agent_id, "sync up")

    assert (result.recipients, result.delivered) == (20, 20)
    assert rig.clock.slept == [SUBMIT_DELAYS["claude"]]
    assert rig.driver.batches.count("write_all") == 1
    assert rig.driver.batches.count("press_all") == 1
    rows = [row for d in result.deliveries for row in rig.deliveries(d.task_id)]
    assert sorted(r.recipient_agent_id for r in rows) == sorted(m.agent_id for m in members)
    assert {(r.state, r.transport) for r in rows} == {("sent", "tmux")}
    for member in members:
        assert member.pane is not None
        [submitted] = member.pane.submitted()
        assert submitted.endswith("\nsync up")


def test_broadcasts_reach_each_pane_in_the_order_they_were_sent(rig: PaneRig) -> None:
    made = rig.fleet()
    members = [rig.member(made, f"m{n}") for n in range(5)]
    service = rig.messaging()

    for text in ("first", "second", "third"):
        service.broadcast(made.fleet.fleet_id, made.director.agent_id, text)

    for member in members:
        assert member.pane is not None
        endings = [turn.rsplit("\n", 1)[-1] for turn in member.pane.submitted()]
        assert endings == ["first", "second", "third"]


def test_broadcast_records_each_recipients_own_outcome(rig: PaneRig) -> None:
    made = rig.fleet()
    ok = rig.member(made, "ok")
    shell = rig.member(made, "shell", command="bash")
    gone = rig.member(made, "gone", command=None)
    pending = rig.member(made, "pending", pending=True)

    result = rig.messaging().broadcast(
        made.fleet.fleet_id, made.administrator.agent_id, "all hands"
    )

    outcomes = {d.recipient_agent_id: (d.state.value, d.error) for d in result.deliveries}
    assert outcomes == {
        made.director.agent_id: ("sent", None),
        ok.agent_id: ("sent", None),
        shell.agent_id: ("skipped", "not-agent:bash"),
        gone.agent_id: ("skipped", "pane-gone"),
        pending.agent_id: ("skipped", "pending-pane"),
    }
    assert result.delivered == 2
