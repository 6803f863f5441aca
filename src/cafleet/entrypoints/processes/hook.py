"""A coding agent's hooks: report the member's state, and wait for its mail.

`python -m cafleet.entrypoints.processes.hook <event file> <event>` appends one line, `<event> <unix
time>`, to the member's event file and prints nothing (some hooks' output would reach the model). A
notification's type is kept as `<event>:<type>`.

`python -m cafleet.entrypoints.processes.hook wait <launch pad>` is Claude Code's `asyncRewake` Stop
hook: it waits in the background until mail is posted to the member's mailbox, takes it, writes it
on stderr and exits 2, which wakes an idle session, or reaches a busy one after its running tool,
never interrupting it. Only one waiter is needed; a second exits at once.

Both read and ignore the hook's JSON on stdin, never fail the hook (a broken report must not
block the agent), and import only the standard library.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from cafleet.adapters.runtime.mailbox import Mailbox
from cafleet.adapters.runtime.private_files import open_private, read_private
from cafleet.domain.preview import PREVIEW_SENDER, previewed_tasks

WAIT_POLL_SECONDS = 0.1
GATHER_SECONDS = 0.3  # mail arriving together (a broadcast, a burst) wakes the agent once
WAIT_LIMIT_SECONDS = 86000.0  # ends just before Claude's hook timeout would kill it
HANDED = "handed"  # the event recorded when mail went to the agent
PROMPT = "prompt"  # the event of Claude Code's UserPromptSubmit hook
RECEIPT_MODULE = "cafleet.entrypoints.processes.receipt"
WAKE_EXIT = 2  # Claude Code: asyncRewake wakes the model on this exit code


def record(path: str, event: str) -> None:
    with contextlib.suppress(OSError):
        fd = open_private(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        try:
            os.write(fd, f"{event} {time.time():.3f}\n".encode())
        finally:
            os.close(fd)


def agent_runs(pad: Path) -> bool:
    """Whether the member's agent still runs, as its launcher records: a waiter outliving a
    killed agent would take mail that nobody reads."""
    try:
        return not read_private(pad / "status").startswith("exited")
    except FileNotFoundError:
        return pad.is_dir()
    except (OSError, UnicodeDecodeError):
        return False


def wait_for_mail(pad: Path, limit: float = WAIT_LIMIT_SECONDS) -> int:
    box = Mailbox(pad)
    if box.has_waiter():
        return 0
    me = os.getpid()
    box.enlist(me)
    parent = os.getppid()
    deadline = time.monotonic() + limit
    try:
        while time.monotonic() < deadline and os.getppid() == parent and agent_runs(pad):
            taken = box.take_all()
            if taken:
                time.sleep(GATHER_SECONDS)
                taken += box.take_all()
                record(str(pad / "events"), f"{HANDED}:{','.join(str(t) for t, _ in taken)}")
                sys.stderr.write(announcement([text for _, text in taken]) + "\n")
                return WAKE_EXIT
            time.sleep(WAIT_POLL_SECONDS)
    finally:
        box.leave(me)
    return 0


def announcement(previews: list[str]) -> str:
    """One wake for all the mail taken: several previews get a headline that counts them."""
    if len(previews) == 1:
        return previews[0]
    senders = sorted({int(s) for p in previews for s in PREVIEW_SENDER.findall(p)})
    who = ", ".join(str(s) for s in senders)
    head = (
        f"{len(previews)} new CAFleet messages (from agent{'s' if len(senders) > 1 else ''} {who})"
    )
    return "\n\n".join([f"{head}; one `cafleet message poll` lists them all.", *previews])


def previews_in(hook_input: str) -> list[str]:
    """The task ids of the CAFleet previews in the prompt the agent took."""
    try:
        data = json.loads(hook_input)
    except ValueError:
        return []
    prompt = data.get("prompt") if isinstance(data, dict) else None
    return [str(task) for task in previewed_tasks(prompt)] if isinstance(prompt, str) else []


def report_receipt(hook_input: str) -> None:
    """Record, in the background, that the agent took these previews in (the database work
    would delay the prompt; the hook must return at once)."""
    ids = previews_in(hook_input)
    agent = os.environ.get("CAFLEET_AGENT_ID", "")
    if not ids or not agent.isdigit():
        return
    with contextlib.suppress(OSError):
        subprocess.Popen(
            [sys.executable, "-m", RECEIPT_MODULE, agent, f"{time.time():.3f}", *ids],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )


def detail_of(hook_input: str) -> str:
    """What kind of notification the hook reports (`permission_prompt`, `idle_prompt`), so
    the member's status can tell a person being asked from a reminder; else nothing."""
    try:
        data = json.loads(hook_input)
    except ValueError:
        return ""
    kind = data.get("notification_type") if isinstance(data, dict) else None
    return kind if isinstance(kind, str) and kind.replace("_", "").isalnum() else ""


def main(args: list[str] | None = None) -> int:
    args = sys.argv[1:] if args is None else args
    hook_input = ""
    with contextlib.suppress(OSError, ValueError):
        hook_input = sys.stdin.read()
    if len(args) != 2:
        return 0
    if args[0] == "wait":
        try:
            return wait_for_mail(Path(args[1]))
        except (OSError, KeyboardInterrupt):
            return 0
    path, event = args
    detail = detail_of(hook_input)
    if event == PROMPT:  # which previews the prompt carried: a receipt the ladder can read
        detail = ",".join(previews_in(hook_input))
        report_receipt(hook_input)
    record(path, f"{event}:{detail}" if detail else event)
    return 0


if __name__ == "__main__":
    sys.exit(main())
