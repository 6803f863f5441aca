"""The tmux session of a relay that runs in no pane (a service: systemd, nohup).

Members spawned on a host from other hosts open beside the relay's pane; a relay without one
makes a detached session of its own on a tmux server of CAFleet's (`tmux -L cafleet`, whose
socket lies in the user's private tmux directory) or, started again, finds the one it made.
Its first pane, where the members open beside, stays when its shell exits; the session
outlives the relay, as its members do.
"""

from __future__ import annotations

import shutil
from dataclasses import replace

from cafleet.adapters.tmux.driver import TmuxPaneDriver
from cafleet.domain.errors import Unavailable
from cafleet.domain.relay import RelaySession

SERVER = "cafleet"  # tmux -L: a server of CAFleet's own beside the user's
SESSION = "members"
HOME_MARK = "@cafleet-relay-home"  # the pane members open beside (a pane option)
SIZE = ("240", "80")  # a detached session's columns and rows: room for many members' panes
WHERE = "#{socket_path}\t#{pane_id}"


def relay_session(host: str) -> RelaySession:
    """The relay's session, made or found again; Unavailable when tmux cannot make it."""
    binary = shutil.which("tmux")
    if binary is None:
        raise Unavailable("tmux binary not found on PATH")
    socket, pane_id = _home_pane(TmuxPaneDriver(binary=binary, server=SERVER))
    driver = TmuxPaneDriver(socket, binary)
    pane = replace(driver.locate(pane_id), host=host, identity=driver.claim(pane_id))
    return RelaySession(SESSION, pane, f"tmux -L {SERVER} attach -t {SESSION}")


def _home_pane(tmux: TmuxPaneDriver) -> tuple[str, str]:
    """The socket and the marked pane of the session; made, with the session, if missing."""
    try:
        made = tmux.command("new-session", "-d", "-s", SESSION, "-x", SIZE[0], "-y", SIZE[1],
                            "-P", "-F", WHERE)  # fmt: skip
    except Unavailable as exc:
        if "duplicate session" not in exc.message:
            raise
    else:
        return _marked(tmux, made)
    listed = tmux.command("list-panes", "-s", "-t", f"={SESSION}", "-F",
                          f"{WHERE}\t#{{{HOME_MARK}}}")  # fmt: skip
    for line in listed.splitlines():
        socket, pane_id, mark = [*line.split("\t"), "", "", ""][:3]
        if mark:
            return socket, pane_id
    # its home pane was closed: a new window becomes it
    return _marked(tmux, tmux.command("new-window", "-d", "-t", f"={SESSION}:", "-P", "-F", WHERE))


def _marked(tmux: TmuxPaneDriver, printed: str) -> tuple[str, str]:
    """Mark the new pane as the home, kept (dead) when its shell exits."""
    socket, pane_id = printed.strip().split("\t")
    tmux.command("set-option", "-p", "-t", pane_id, "remain-on-exit", "on")
    tmux.command("set-option", "-p", "-t", pane_id, HOME_MARK, "1")
    return socket, pane_id
