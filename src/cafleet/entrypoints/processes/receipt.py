"""`python -m cafleet.entrypoints.processes.receipt <agent id> <unix time> <task id>...`: record
that a member's agent took these messages in.

Claude Code's `UserPromptSubmit` hook starts this, detached, when the prompt it was given
holds CAFleet previews (a typed preview, or mail a waiting hook handed over), so the ledger
can tell a message the agent really received from one typed into its pane and never taken.
The hook fires as the preview is submitted, often before the sender has recorded the
announcement: this then waits for that record (`MessagingService.confirm`). It runs with
the member's environment (its `CAFLEET_*` settings), prints nothing, and a failure changes
nothing.
"""

from __future__ import annotations

import contextlib
import os
import sys
from datetime import UTC, datetime


def main(args: list[str] | None = None) -> int:
    args = sys.argv[1:] if args is None else args
    with contextlib.suppress(Exception):  # a receipt is best effort: the message is stored
        from cafleet.composition import Components
        from cafleet.settings import Settings

        agent_id, stamp, *task_ids = args
        at = datetime.fromtimestamp(float(stamp), UTC)
        components = Components(Settings.from_environ(os.environ))
        components.messaging.confirm(int(agent_id), [int(t) for t in task_ids], at)
    return 0


if __name__ == "__main__":
    sys.exit(main())
