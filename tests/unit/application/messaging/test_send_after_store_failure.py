"""A send whose message was stored reports it, whatever the store does afterwards (a full disk,
a connection lost): on the fakes, with the store's commits refused from a chosen point on.

Reporting failure then would make a sender send again, and the member get it twice.
"""

from __future__ import annotations

import json

import pytest

from cafleet.adapters.fake.clock import FakeClock
from cafleet.adapters.fake.notifier import RecordingNotifier
from cafleet.adapters.fake.pane_driver import ThreadLocks
from cafleet.adapters.fake.store import CommitRefusal, MemoryStore, MemoryUnitOfWork
from cafleet.application.messaging.service import MessagingService
from cafleet.application.ports.store import UnitOfWorkFactory
from cafleet.domain.delivery import INTERRUPTED, QUEUED, Announcement, DeliveryState, PushOutcome
from cafleet.domain.errors import ConnectionLost, Unavailable

FULL = "database error: database or disk is full"
LOST = "cannot reach database postgresql+psycopg://cafleet@/cafleet: server closed the connection"


def disk_full(times: int | None = None) -> CommitRefusal:
    return CommitRefusal(Unavailable(FULL), times=times)


class FillingNotifier(RecordingNotifier):
    """Announces as sent; once `fills`, the disk fills while the preview is being typed."""

    def __init__(self, store: MemoryStore) -> None:
        super().__init__(self._typed)
        self.store = store
        self.fills = False

    def _typed(self, announcement: Announcement) -> PushOutcome:
        if self.fills:
            self.store.refuse_commits(disk_full())
        return PushOutcome.sent(announcement.target.backend.value, announcement.target.pane_id)

    def task_ids(self) -> list[int]:
        return [a.task_id for a in self.announced]


@pytest.fixture
def notifier(store: MemoryStore) -> FillingNotifier:
    return FillingNotifier(store)


@pytest.fixture
def team(world) -> tuple[int, int, int]:
    """fleet id, Director, a member in pane %1."""
    made = world.fleet("alpha")
    world.drivers(made.placement.backend, made.placement.socket).add_pane("claude", pane_id="%1")
    return made.fleet.fleet_id, made.director.agent_id, world.member(made, "worker")


def test_an_outcome_the_full_disk_refuses_is_reported_as_known_and_never_typed_again(
    messaging: MessagingService, notifier: FillingNotifier, store: MemoryStore, team, world
) -> None:
    fleet_id, director, worker = team
    notifier.fills = True

    first = messaging.send(fleet_id, director, worker, "typed as the disk filled")

    assert first.unrecorded == FULL
    assert (first.delivery.state, first.delivery.pane_id) == (DeliveryState.SENT, "%1")
    assert world.get_message(first.message.task_id) == first.message
    [row] = world.deliveries(first.message.task_id)
    assert row.state is DeliveryState.PENDING and row.announcing  # begun: never typed again

    notifier.fills = False
    store.refuse_commits(None)  # room again: the next send to the pane finds the begun row
    second = messaging.send(fleet_id, director, worker, "after")

    assert second.unrecorded is None
    assert notifier.task_ids() == [first.message.task_id, second.message.task_id]
    settled = world.delivery(first.message.task_id, worker)
    assert (settled.state, settled.error) == (DeliveryState.FAILED, INTERRUPTED)


def test_a_disk_full_right_after_the_send_leaves_its_preview_queued(
    messaging: MessagingService, notifier: FillingNotifier, store: MemoryStore, team, world
) -> None:
    fleet_id, director, worker = team
    store.refuse_commits(disk_full(), after=1)  # the send's own commit, and no other

    sent = messaging.send(fleet_id, director, worker, "stored, not begun")

    assert sent.unrecorded == FULL
    assert (sent.delivery.state, sent.delivery.error) == (DeliveryState.PENDING, QUEUED)
    assert world.get_message(sent.message.task_id) == sent.message
    assert notifier.announced == []
    [row] = world.deliveries(sent.message.task_id)
    assert row.state is DeliveryState.PENDING and not row.announcing

    store.refuse_commits(None)
    messaging.drain_queued([worker])  # the next delivery to the pane, or the monitor's

    assert notifier.task_ids() == [sent.message.task_id]
    assert world.delivery(sent.message.task_id, worker).state is DeliveryState.SENT


def test_a_send_whose_own_commit_is_refused_fails_and_stores_nothing(
    messaging: MessagingService, notifier: FillingNotifier, store: MemoryStore, team, world
) -> None:
    fleet_id, director, worker = team
    store.refuse_commits(disk_full())

    with pytest.raises(Unavailable, match="disk is full"):
        messaging.send(fleet_id, director, worker, "never stored")

    assert world.all_messages() == []
    assert notifier.announced == []


def test_a_broadcast_that_fills_the_disk_reports_every_copy_as_known(
    messaging: MessagingService, notifier: FillingNotifier, world
) -> None:
    made = world.fleet("alpha")
    members = [world.member(made, name, pane_id=f"%{n}") for n, name in enumerate("abc", 1)]
    notifier.fills = True

    result = messaging.broadcast(made.fleet.fleet_id, made.director.agent_id, "to all")

    assert result.unrecorded == FULL
    assert world.get_message(result.summary.task_id) == result.summary
    assert [d.recipient_agent_id for d in result.deliveries] == members
    typed = {a.task_id for a in notifier.announced}
    assert typed  # the first copy was typed before the disk filled
    for delivery in result.deliveries:  # typed: sent as known; the others stay queued
        state = DeliveryState.SENT if delivery.task_id in typed else DeliveryState.PENDING
        assert delivery.state is state


def test_a_commit_applied_before_the_connection_broke_is_a_send(
    messaging: MessagingService, notifier: FillingNotifier, store: MemoryStore, team, world
) -> None:
    fleet_id, director, worker = team
    store.refuse_commits(CommitRefusal(ConnectionLost(LOST), applied=True, times=1))

    sent = messaging.send(fleet_id, director, worker, "its answer was lost")

    assert world.get_message(sent.message.task_id) == sent.message
    assert (sent.delivery.state, sent.unrecorded) == (DeliveryState.SENT, None)
    assert notifier.task_ids() == [sent.message.task_id]


def test_a_commit_lost_with_the_connection_is_no_send(
    messaging: MessagingService, notifier: FillingNotifier, store: MemoryStore, team, world
) -> None:
    fleet_id, director, worker = team
    store.refuse_commits(CommitRefusal(ConnectionLost(LOST), times=1))

    with pytest.raises(ConnectionLost):
        messaging.send(fleet_id, director, worker, "never stored")

    assert world.all_messages() == []
    assert notifier.announced == []


class GoneAfterCommit(UnitOfWorkFactory):
    """The store, unreachable once it applied one more commit (the server went away)."""

    def __init__(self, store: MemoryStore) -> None:
        self._store = store
        self._commits = store.commits

    def __call__(self, *, write: bool = False) -> MemoryUnitOfWork:
        if self._store.commits > self._commits:
            raise ConnectionLost(LOST)
        return self._store(write=write)


def test_a_send_that_cannot_tell_whether_it_was_stored_says_so(
    notifier: FillingNotifier, store: MemoryStore, clock: FakeClock, team, world
) -> None:
    fleet_id, director, worker = team
    messaging = MessagingService(GoneAfterCommit(store), clock, notifier, ThreadLocks())
    store.refuse_commits(CommitRefusal(ConnectionLost(LOST), applied=True, times=1))

    with pytest.raises(Unavailable) as raised:
        messaging.send(fleet_id, director, worker, "stored, unknown to the sender")

    [stored] = world.all_messages()
    assert raised.value.message == (
        f"{LOST}; message {stored.task_id} may have been stored: `cafleet message show`"
        " tells, before it is sent again"
    )
    assert notifier.announced == []


# -- what the commands print ------------------------------------------------------------------


@pytest.fixture
def cli_team(run) -> tuple[str, int, int]:
    made = run.world.fleet("alpha")
    return str(made.fleet.fleet_id), made.director.agent_id, run.world.member(made, "worker")


def test_message_send_exits_0_with_a_warning_and_the_delivery_as_known(
    run, notifier: FillingNotifier, cli_team
) -> None:
    fleet_id, director, worker = cli_team
    notifier.fills = True

    result = run(
        *("--json", "message", "send", "--fleet-id", fleet_id, "--agent-id", str(director)),
        *("--to", str(worker), "--text", "typed as the disk filled"),
    )

    assert result.exit_code == 0, result.output
    [stored] = run.world.all_messages()
    out = json.loads(result.stdout)
    assert out["task"]["id"] == stored.task_id
    assert out["notification_sent"] is True
    assert out["notification"] == {
        "state": "sent", "transport": "tmux", "reason": None, "unrecorded": FULL,
    }  # fmt: skip
    assert result.stderr == (
        f"Warning: message {stored.task_id} is stored; its preview was sent, but that is not"
        f" recorded ({FULL}). Do not send it again.\n"
    )


def test_member_nudge_and_broadcast_exit_0_with_a_warning(
    run, store: MemoryStore, cli_team
) -> None:
    fleet_id, director, worker = cli_team
    store.refuse_commits(disk_full(), after=1)

    nudged = run(
        *("member", "nudge", "--fleet-id", fleet_id, "--agent-id", str(director)),
        *("--member-id", str(worker), "--text", "stored, not begun"),
    )
    store.refuse_commits(disk_full(), after=1)
    spread = run(
        *("message", "broadcast", "--fleet-id", fleet_id, "--agent-id", str(director)),
        *("--text", "to all"),
    )

    nudge_id, summary_id = (m.task_id for m in run.world.all_messages()[:2])
    assert (nudged.exit_code, spread.exit_code) == (0, 0), (nudged.output, spread.output)
    assert nudged.stderr == (
        f"Warning: message {nudge_id} is stored; its preview stays queued for the next delivery"
        f" to the pane or the monitor ({FULL}). Do not send it again.\n"
    )
    assert spread.stderr == (
        f"Warning: broadcast {summary_id} is stored; the outcome of some previews is not"
        f" recorded ({FULL}). Do not send it again.\n"
    )
