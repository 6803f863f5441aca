"""`python -m cafleet.entrypoints.processes.drain <agent id>...`: deliver what is queued for these
members' panes (started by a command that left rows queued behind its own, or held; see
application/delivery_queue), looking at a held row's pane again for up to HOLD_WATCH_SECONDS. Prints
nothing; a failure leaves the rows queued for the next delivery or the monitor."""

from __future__ import annotations

import sys


def main(argv: list[str]) -> int:
    try:
        recipients = [int(arg) for arg in argv]
    except ValueError:
        return 2
    from cafleet.application.messaging.queue import HOLD_WATCH_SECONDS
    from cafleet.composition import Components
    from cafleet.settings import Settings

    try:
        messaging = Components(Settings.from_environ()).messaging
        messaging.drain_queued(recipients, HOLD_WATCH_SECONDS)
    except Exception:  # nobody reads this process's output: the rows simply stay queued
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
