"""Writing an agent's receipt into the ledger (`confirmed_at`), shared by the receipt its
prompt hook reports (`MessagingService.confirm`) and the monitor's tick (`ReceiptRecorder`).

A receipt can come before its announcement is recorded: Claude Code's prompt hook fires as
the typed preview is submitted, while the sender still checks that it left the composer.
Such a message is still being announced (its row pending, begun), and its receipt is
written once the row is settled: `confirm_taken` says which tasks are waiting so.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from cafleet.application.ports.store import UnitOfWork

RECEIPT_PATIENCE_SECONDS = 15.0  # longer than typing and checking a preview may take
RECEIPT_POLL_SECONDS = 0.2


def confirm_taken(
    uow: UnitOfWork, recipient_agent_id: int, task_ids: Sequence[int], at: datetime
) -> tuple[int, list[int]]:
    """Confirm the sent attempts of these messages to this recipient: how many rows changed,
    and which of the tasks are still being announced to it (to confirm once recorded)."""
    changed = uow.deliveries.confirm(recipient_agent_id, task_ids, at)
    announcing = {
        row.task_id
        for row in uow.deliveries.for_tasks(task_ids)
        if row.recipient_agent_id == recipient_agent_id and row.announcing
    }
    return changed, [task for task in task_ids if task in announcing]
