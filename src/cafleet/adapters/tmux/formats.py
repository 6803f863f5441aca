"""What goes into a tmux call and what comes back: the formats CAFleet asks tmux for, an
argument's escape, texts cut into chunks and chains packed to fit one call, and the listings
and marked outputs read back. Pure functions; the driver runs the calls."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from cafleet.domain.panes import Key, PaneInfo

CHUNK_BYTES = 8 * 1024  # one tmux command is capped near 16 KiB
CHAIN_BYTES = 12 * 1024  # so is a chain of them: the arguments of one call stay under this
MARKER_OPTION = "@cafleet-pane"  # a pane option: it lives and dies with its pane and server
# the server's pid and start, the pane's first process and CAFleet's marker: a pane of a
# later server that reuses the id differs in all of them
IDENTITY_FORMAT = f"#{{pid}}.#{{start_time}}.#{{pane_pid}}.#{{{MARKER_OPTION}}}"
TITLE_OPTION = "@cafleet-title"  # a pane option: unlike the pane title, no program in the pane
# can overwrite it with a terminal escape, so the border shows it where it is set
BORDER_FORMAT = f"#{{?{TITLE_OPTION}, #{{{TITLE_OPTION}}} ,#{{pane_title}}}}"
PANE_FORMAT = (  # the title last: it is the one field that may hold anything but a tab
    f"#{{pane_id}}\t#{{pane_dead}}\t#{{pane_current_command}}\t#{{pane_pid}}\t{IDENTITY_FORMAT}"
    f"\t#{{pane_tty}}\t#{{{TITLE_OPTION}}}"
)
KEY_NAMES = {Key.ENTER: "Enter", Key.ESCAPE: "Escape"}


def escape_trailing_semicolon(arg: str) -> str:
    """tmux reads an argument ending in `;` as the end of a command; `\\;` keeps the `;`."""
    return arg[:-1] + "\\;" if arg.endswith(";") else arg


def chunks(text: str, limit: int) -> Iterator[str]:
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


def trimmed(screen: str, lines: int) -> str:
    rows = screen.split("\n")
    while rows and not rows[-1].strip():
        rows.pop()
    return "\n".join(rows[-lines:])


def fitting(
    todo: Sequence[tuple[str, list[list[str]]]], token: str
) -> list[tuple[str, list[list[str]]]]:
    """The first panes' steps whose arguments fit one call (at least one pane's)."""
    size, taken = 0, 0
    for _, commands in todo:
        size += sum(len(arg.encode()) + 1 for command in commands for arg in command)
        size += len(token) + 40  # its mark
        if taken and size > CHAIN_BYTES:
            break
        taken += 1
    return list(todo[:taken])


def marked(stdout: str, token: str) -> list[str]:
    """What each pane's commands printed, up to each mark (`token:index`) printed."""
    outputs: list[str] = []
    current: list[str] = []
    for line in stdout.split("\n"):
        if line == f"{token}:{len(outputs)}":
            outputs.append("\n".join(current))
            current = []
        else:
            current.append(line)
    return outputs


def pane_rows(listing: str) -> Iterator[tuple[PaneInfo, int, str]]:
    """Each listed pane with the pid of its first process (0 when not reported) and its
    terminal."""
    for line in listing.splitlines():
        fields = [*line.split("\t", 6), "", "", "", "", "", ""]
        pane_id, dead, command, pid, identity, terminal, title = fields[:7]
        if pane_id:
            info = PaneInfo(pane_id, dead == "1", command, identity=identity, title=title or None)
            yield info, int(pid) if pid.isdigit() else 0, terminal


def parse_panes(listing: str) -> dict[str, PaneInfo]:
    return {info.pane_id: info for info, _, _ in pane_rows(listing)}
