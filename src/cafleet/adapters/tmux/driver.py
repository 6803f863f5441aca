"""TmuxPaneDriver: every pane operation as one `tmux -S <socket> ...` argv call.

No shell is involved anywhere. Known tmux pitfalls handled here: a trailing `;`
is a command separator (sent as `\\;`), one command is capped near 16 KiB (text
is chunked), `display-message` succeeds for missing panes (never used for
liveness), and a one-element command runs through the shell (refused).

The batched steps (`PaneBatches`) chain the commands of many panes with `;` into one call,
each pane's followed by a `display-message` mark: tmux stops a chain at its first failing
command, so the marks printed tell which panes were done, and the chain resumes after the
pane that failed.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import replace

from cafleet.adapters.system.foreground import foreground_argv, shows_terminal
from cafleet.adapters.tmux.formats import (
    BORDER_FORMAT,
    CHUNK_BYTES,
    KEY_NAMES,
    MARKER_OPTION,
    PANE_FORMAT,
    TITLE_OPTION,
    chunks,
    escape_trailing_semicolon,
    fitting,
    marked,
    pane_rows,
    parse_panes,
    trimmed,
)
from cafleet.adapters.tmux.server_reads import parsed, read_command
from cafleet.application.ports.panes import PaneBatches, PaneDriver, PaneLabels, Typing
from cafleet.domain.errors import CafleetError, Unavailable
from cafleet.domain.panes import Key, PaneGone, PaneInfo, PromptAnswer, ServerGone, is_runtime
from cafleet.domain.placement import Multiplexer, PaneLocation

TIMEOUT_SECONDS = 5
_GONE_SIGNS = ("can't find pane", "no such pane", "can't find window")
_UNREACHABLE_SIGNS = ("no server running", "error connecting to", "failed to connect")
# of those, the ones that say no server runs there (not one that is slow or refuses us)
_SERVER_GONE_SIGNS = ("no server running", "no such file or directory", "connection refused")


class TmuxPaneDriver(PaneDriver, PaneBatches, PaneLabels):
    backend = Multiplexer.TMUX

    def __init__(
        self, socket: str | None = None, binary: str | None = None, server: str | None = None
    ) -> None:
        """socket: the server's socket path; else `server`, its name (tmux -L); else the
        user's default server."""
        self._socket = socket
        self._binary = binary
        self._server = server

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
        with contextlib.suppress(PaneGone, Unavailable):  # cosmetic: never fail a spawn
            self.show_titles(pane_id)
        return pane_id

    def type_text(self, pane_id: str, text: str) -> None:
        for chunk in chunks(text, CHUNK_BYTES):
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
        return trimmed(screen, lines)

    def list_panes(self) -> dict[str, PaneInfo]:
        return parse_panes(self._run("list-panes", "-a", "-F", PANE_FORMAT))

    def pane(self, pane_id: str) -> PaneInfo | None:
        """The pane with its foreground process's argv (the agent check needs it)."""
        try:
            listing = self._run("list-panes", "-t", pane_id, "-F", PANE_FORMAT)
        except PaneGone:
            return None
        rows = [row for row in pane_rows(listing) if row[0].pane_id == pane_id]
        return next(iter(self._with_foregrounds(rows)), None)

    def panes_of(self, pane_ids: Sequence[str]) -> dict[str, PaneInfo | None]:
        wanted = set(pane_ids)
        listing = self._run("list-panes", "-a", "-F", PANE_FORMAT)
        rows = [row for row in pane_rows(listing) if row[0].pane_id in wanted]
        found = {info.pane_id: info for info in self._with_foregrounds(rows)}
        return {pane: found.get(pane) for pane in pane_ids}

    def _with_foregrounds(self, rows: Sequence[tuple[PaneInfo, int, str]]) -> list[PaneInfo]:
        """The panes, each with the argv of the runtime in front of it (node, python...: the
        agent check must see what it runs; any other program is told by its name). Read from
        this process's /proc where it shows the pane's process, else on the tmux server's
        side (this process runs in another pid namespace, a tool sandbox), one call for all."""
        argvs: dict[str, tuple[str, ...] | None] = {}
        elsewhere: dict[str, int] = {}
        for info, pid, terminal in rows:
            if info.dead or not is_runtime(info.command):
                continue
            if shows_terminal(pid, terminal):
                argvs[info.pane_id] = foreground_argv(pid)
            elif pid > 0:
                elsewhere[info.pane_id] = pid
        if elsewhere:
            read = self._foregrounds_on_server(sorted(set(elsewhere.values())))
            argvs.update({pane: read.get(pid) for pane, pid in elsewhere.items()})
        return [replace(info, argv=argvs.get(info.pane_id)) for info, _, _ in rows]

    def _foregrounds_on_server(self, pids: Sequence[int]) -> dict[int, tuple[str, ...] | None]:
        """Each pane process's foreground argv as the server reads it (see server_reads);
        {} when it cannot (then none counts as the agent)."""
        buffer = f"cafleet-{uuid.uuid4().hex}"
        try:
            command = read_command(pids, self._tmux(), buffer)
            code, answer, _ = self._call(
                ["run-shell", command, ";", "show-buffer", "-b", buffer, ";",
                 "delete-buffer", "-b", buffer]
            )  # fmt: skip
        except Unavailable:
            return {}
        return parsed(answer) if code == 0 else {}

    def captures(self, pane_ids: Sequence[str], lines: int) -> dict[str, str | CafleetError]:
        done, failed = self._chained(
            [(pane, [["capture-pane", "-p", "-t", pane, "-S", f"-{lines}"]]) for pane in pane_ids]
        )
        return {**{pane: trimmed(screen, lines) for pane, screen in done.items()}, **failed}

    def write_all(self, typings: Sequence[Typing]) -> dict[str, CafleetError]:
        failures: dict[str, CafleetError] = {}
        chained: list[tuple[str, list[list[str]]]] = []
        buffers: dict[str, str] = {}
        for typing in typings:
            if len(typing.text.encode()) > CHUNK_BYTES:  # too long for a chain: on its own
                try:
                    write = self.paste_text if typing.paste else self.type_text
                    write(typing.pane_id, typing.text)
                except CafleetError as exc:
                    failures[typing.pane_id] = exc
            elif typing.paste:
                buffer = buffers[typing.pane_id] = f"cafleet-{uuid.uuid4().hex}"
                chained.append(
                    (
                        typing.pane_id,
                        [
                            ["set-buffer", "-b", buffer, "--", typing.text],
                            ["paste-buffer", "-p", "-r", "-d", "-b", buffer, "-t", typing.pane_id],
                        ],
                    )
                )
            else:
                chained.append(
                    (typing.pane_id, [["send-keys", "-t", typing.pane_id, "-l", "--", typing.text]])
                )
        _, failed = self._chained(chained)
        for pane in failed.keys() & buffers.keys():
            with contextlib.suppress(CafleetError):  # do not leave the buffer behind
                self._run("delete-buffer", "-b", buffers[pane])
        return {**failures, **failed}

    def press_all(self, pane_ids: Sequence[str], key: Key) -> dict[str, CafleetError]:
        _, failed = self._chained(
            [(pane, [["send-keys", "-t", pane, KEY_NAMES[key]]]) for pane in pane_ids]
        )
        return failed

    def _chained(
        self, steps: Sequence[tuple[str, list[list[str]]]]
    ) -> tuple[dict[str, str], dict[str, CafleetError]]:
        """Each pane's commands, many panes per call: what each printed, and the panes that
        failed (gone). Any other failure (the server unreachable) is raised."""
        token = uuid.uuid4().hex
        printed: dict[str, str] = {}
        failed: dict[str, CafleetError] = {}
        todo = list(steps)
        while todo:
            batch = fitting(todo, token)
            argv: list[str] = []
            for index, (_, commands) in enumerate(batch):
                for command in [*commands, ["display-message", "-p", f"{token}:{index}"]]:
                    argv += [*map(escape_trailing_semicolon, command), ";"]
            code, stdout, stderr = self._call(argv[:-1])
            outputs = marked(stdout, token)
            for (pane, _), output in zip(batch, outputs, strict=False):
                printed[pane] = output
            todo = todo[len(outputs) :]
            if code != 0 and len(outputs) < len(batch):
                pane = todo.pop(0)[0]
                error = self._error(batch[len(outputs)][1][-1][0], stderr, code, pane)
                if not isinstance(error, PaneGone):
                    raise error
                failed[pane] = error
        return printed, failed

    def label(self, pane_id: str, label: str) -> None:
        failed = self.label_all({pane_id: label})
        if failed:
            raise failed[pane_id]

    def label_all(self, titles: Mapping[str, str]) -> dict[str, CafleetError]:
        """TITLE_OPTION (which the border shows, see show_titles) and the pane title, every
        pane's in one chained call."""
        _, failed = self._chained(
            [
                (pane, [
                    ["set-option", "-p", "-t", pane, TITLE_OPTION, title],
                    ["select-pane", "-t", pane, "-T", title],  # with -T: selects nothing
                ])
                for pane, title in titles.items()
            ]
        )  # fmt: skip
        return failed

    def show_titles(self, pane_id: str) -> None:
        """The border of the pane's window shows each pane's TITLE_OPTION, unless the window
        has border settings of its own (-o: never replaced)."""
        for option, value in (("pane-border-status", "top"), ("pane-border-format", BORDER_FORMAT)):
            code, _, stderr = self._call(["set-option", "-w", "-o", "-t", pane_id, option, value])
            if code != 0 and "already set" not in stderr:
                raise self._error("set-option", stderr, code, pane_id)

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
        code, stdout, stderr = self._call(
            [subcommand, *map(escape_trailing_semicolon, args)], stdin
        )
        if code == 0:
            return stdout
        pane = args[args.index("-t") + 1] if "-t" in args else "?"
        raise self._error(subcommand, stderr, code, pane)

    def _tmux(self) -> str:
        binary = self._binary or shutil.which("tmux")
        if binary is None:
            raise Unavailable("tmux binary not found on PATH")
        return binary

    def _call(self, args: Sequence[str], stdin: str | None = None) -> tuple[int, str, str]:
        argv = [self._tmux(), *self._server_args(), *args]
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
            raise Unavailable(f"tmux {args[0]} timed out after {TIMEOUT_SECONDS}s") from None
        except OSError as exc:  # the binary went away (or never was) since it was found
            raise Unavailable(f"cannot run {argv[0]}: {exc.strerror or exc}") from None
        return done.returncode, done.stdout, done.stderr

    def _server_args(self) -> list[str]:
        if self._socket:
            return ["-S", self._socket]
        return ["-L", self._server] if self._server else []

    def command(self, subcommand: str, *args: str) -> str:
        """Any tmux command on this server (what the pane operations do not cover); its
        output, or its first error line as the error."""
        return self._run(subcommand, *args)

    def _error(self, subcommand: str, stderr: str, code: int, pane: str) -> CafleetError:
        reason = (stderr.strip().splitlines() or [f"exit status {code}"])[0]
        lowered = reason.lower()
        if any(sign in lowered for sign in _GONE_SIGNS):
            return PaneGone(pane)
        if any(sign in lowered for sign in _UNREACHABLE_SIGNS):
            gone = any(sign in lowered for sign in _SERVER_GONE_SIGNS)
            return (ServerGone if gone else Unavailable)(
                f"cannot reach the tmux server at {self._socket or 'default'}: {reason}"
            )
        return Unavailable(f"tmux {subcommand} failed: {reason}")
