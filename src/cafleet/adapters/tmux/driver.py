"""TmuxPaneDriver: every pane operation as one `tmux -S <socket> ...` argv call.

No shell is involved anywhere. Known tmux pitfalls handled here: a trailing `;`
is a command separator (sent as `\\;`), one command is capped near 16 KiB (text
is chunked), `display-message` succeeds for missing panes (never used for
liveness), and a one-element command runs through the shell (refused).
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace

from cafleet.adapters.foreground import foreground_argv
from cafleet.application.ports import PaneDriver
from cafleet.domain.errors import CafleetError, Unavailable
from cafleet.domain.panes import Key, PaneGone, PaneInfo, PromptAnswer
from cafleet.domain.placement import Multiplexer, PaneLocation

TIMEOUT_SECONDS = 5
CHUNK_BYTES = 8 * 1024  # one tmux command is capped near 16 KiB
MARKER_OPTION = "@cafleet-pane"  # a pane option: it lives and dies with its pane and server
# the server's pid and start, the pane's first process and CAFleet's marker: a pane of a
# later server that reuses the id differs in all of them
IDENTITY_FORMAT = f"#{{pid}}.#{{start_time}}.#{{pane_pid}}.#{{{MARKER_OPTION}}}"
PANE_FORMAT = (
    f"#{{pane_id}}\t#{{pane_dead}}\t#{{pane_current_command}}\t#{{pane_pid}}\t{IDENTITY_FORMAT}"
)
KEY_NAMES = {Key.ENTER: "Enter", Key.ESCAPE: "Escape"}
_GONE_SIGNS = ("can't find pane", "no such pane", "can't find window")
_UNREACHABLE_SIGNS = ("no server running", "error connecting to", "failed to connect")


class TmuxPaneDriver(PaneDriver):
    backend = Multiplexer.TMUX

    def __init__(self, socket: str | None = None, binary: str | None = None) -> None:
        self._socket = socket
        self._binary = binary

    def spawn(self, beside: str, argv: Sequence[str], env: Mapping[str, str], cwd: str) -> str:
        if len(argv) < 2:
            raise ValueError("tmux runs a one-element command through a shell; pass >= 2 args")
        env_args = [arg for key, value in env.items() for arg in ("-e", f"{key}={value}")]
        pane_id = self._run(
            "split-window",
            "-t",
            beside,
            "-d",
            "-P",
            "-F",
            "#{pane_id}",
            "-c",
            cwd,
            *env_args,
            "--",
            *argv,
        ).strip()
        self.relayout(beside)
        return pane_id

    def type_text(self, pane_id: str, text: str) -> None:
        for chunk in _chunks(text, CHUNK_BYTES):
            self._run("send-keys", "-t", pane_id, "-l", "--", chunk)

    def paste_text(self, pane_id: str, text: str) -> None:
        buffer = f"cafleet-{uuid.uuid4().hex}"
        self._run("load-buffer", "-b", buffer, "-", stdin=text)
        try:
            self._run("paste-buffer", "-p", "-r", "-d", "-b", buffer, "-t", pane_id)
        except CafleetError:
            with contextlib.suppress(CafleetError):  # do not leave the buffer behind
                self._run("delete-buffer", "-b", buffer)
            raise

    def send_keys(self, pane_id: str, *keys: Key) -> None:
        for key in keys:
            self._run("send-keys", "-t", pane_id, KEY_NAMES[key])

    def prompt_agent(self, pane_id: str, text: str) -> PromptAnswer:
        return PromptAnswer.NO_PROMPT  # tmux only types keys

    def capture(self, pane_id: str, lines: int, *, ansi: bool = False) -> str:
        flags = ["-e"] if ansi else []
        screen = self._run("capture-pane", "-p", *flags, "-t", pane_id, "-S", f"-{lines}")
        rows = screen.split("\n")
        while rows and not rows[-1].strip():
            rows.pop()
        return "\n".join(rows[-lines:])

    def list_panes(self) -> dict[str, PaneInfo]:
        return _parse_panes(self._run("list-panes", "-a", "-F", PANE_FORMAT))

    def pane(self, pane_id: str) -> PaneInfo | None:
        """The pane with its foreground process's argv (the agent check needs it)."""
        try:
            listing = self._run("list-panes", "-t", pane_id, "-F", PANE_FORMAT)
        except PaneGone:
            return None
        for info, pid in _pane_rows(listing):
            if info.pane_id == pane_id:
                argv = None if info.dead else foreground_argv(pid)
                return replace(info, argv=argv)
        return None

    def claim(self, pane_id: str) -> str:
        info = self.pane(pane_id)
        if info is None:
            raise PaneGone(pane_id)
        if info.identity is None or info.identity.endswith("."):  # not marked yet
            try:  # -o: a mark set meanwhile (another fleet create in this pane) is kept
                self._run("set-option", "-o", "-p", "-t", pane_id, MARKER_OPTION, uuid.uuid4().hex)
            except Unavailable as exc:
                if "already set" not in exc.message:
                    raise
            info = self.pane(pane_id)
        if info is None or not info.identity:
            raise PaneGone(pane_id)
        return info.identity

    def kill(self, pane_id: str) -> bool:
        try:
            self._run("kill-pane", "-t", pane_id)
        except PaneGone:
            return False
        return True

    def locate(self, pane_id: str) -> PaneLocation:
        """Session, window and pane ids of a pane (always with -t: tmux otherwise answers
        for the focused client)."""
        fields = (
            self._run(
                "display-message", "-p", "-t", pane_id, "#{session_name}|#{window_id}|#{pane_id}"
            )
            .strip()
            .split("|")
        )
        if len(fields) != 3 or not all(fields):
            raise Unavailable(f"tmux display-message failed: no pane {pane_id} reported")
        session, window_id, found = fields
        return PaneLocation(Multiplexer.TMUX, session, window_id, found, self._socket)

    def relayout(self, window_id: str) -> None:
        with contextlib.suppress(PaneGone, Unavailable):  # cosmetic: never fail over layout
            self._run("select-layout", "-t", window_id, "main-vertical")

    def _run(self, subcommand: str, *args: str, stdin: str | None = None) -> str:
        binary = self._binary or shutil.which("tmux")
        if binary is None:
            raise Unavailable("tmux binary not found on PATH")
        argv = [
            binary,
            *(["-S", self._socket] if self._socket else []),
            subcommand,
            *map(_escape_trailing_semicolon, args),
        ]
        try:
            done = subprocess.run(
                argv,
                input=stdin,
                capture_output=True,
                text=True,
                timeout=TIMEOUT_SECONDS,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise Unavailable(f"tmux {subcommand} timed out after {TIMEOUT_SECONDS}s") from None
        if done.returncode == 0:
            return done.stdout
        reason = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[0]
        lowered = reason.lower()
        if any(sign in lowered for sign in _GONE_SIGNS):
            raise PaneGone(args[args.index("-t") + 1] if "-t" in args else "?")
        if any(sign in lowered for sign in _UNREACHABLE_SIGNS):
            raise Unavailable(
                f"cannot reach the tmux server at {self._socket or 'default'}: {reason}"
            )
        raise Unavailable(f"tmux {subcommand} failed: {reason}")


def _escape_trailing_semicolon(arg: str) -> str:
    """tmux reads an argument ending in `;` as the end of a command; `\\;` keeps the `;`."""
    return arg[:-1] + "\\;" if arg.endswith(";") else arg


def _chunks(text: str, limit: int) -> Iterator[str]:
    """Pieces of at most `limit` UTF-8 bytes, never splitting a character. Cut on the bytes
    (a wake naming 200 agents is ~15 KB: a loop per character cost ~5 ms of each tick)."""
    data = text.encode()
    start = 0
    while start < len(data):
        end = min(start + limit, len(data))
        while end < len(data) and data[end] & 0xC0 == 0x80:  # a continuation byte
            end -= 1
        if end == start:  # a limit below one character's width: that character alone
            end = start + 1
            while end < len(data) and data[end] & 0xC0 == 0x80:
                end += 1
        yield data[start:end].decode()
        start = end


def _pane_rows(listing: str) -> Iterator[tuple[PaneInfo, int]]:
    """Each listed pane with the pid of its first process (0 when not reported)."""
    for line in listing.splitlines():
        pane_id, dead, command, pid, identity = [*line.split("\t"), "", "", "", ""][:5]
        if pane_id:
            info = PaneInfo(pane_id, dead == "1", command, identity=identity)
            yield info, int(pid) if pid.isdigit() else 0


def _parse_panes(listing: str) -> dict[str, PaneInfo]:
    return {info.pane_id: info for info, _ in _pane_rows(listing)}
