"""The two-line preview typed into a recipient's pane, made safe to type anywhere."""

from __future__ import annotations

import re
from datetime import datetime

PREVIEW_HEADER = re.compile(r"\[cafleet msg (\d+) from \d+ ")
PREVIEW_SENDER = re.compile(r"\[cafleet msg \d+ from (\d+) ")
_LINE_BREAK = re.compile(r"\r\n|\r|\n|\t")
_CONTROL = re.compile(r"[\x00-\x1f\x7f\x80-\x9f]")


def truncated(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def sanitized(text: str) -> str:
    """Line breaks become ⏎ and shell-active characters look-alikes, so typing it runs nothing."""
    text = _LINE_BREAK.sub("⏎", text)
    text = text.replace("`", "ˋ").replace("$(", "$﹙").replace("|", "│")
    return _CONTROL.sub("�", text)


def preview(
    task_id: int,
    from_agent_id: int,
    created_at: datetime,
    text: str,
    max_text_len: int,
    in_reply_to: int | None = None,
) -> str:
    """The header an agent recognises, then the body; a reply says what it answers first
    (the header keeps its form: agents and hooks read the task id from it)."""
    header = (
        f"[cafleet msg {task_id} from {from_agent_id} "
        f"{created_at.isoformat(timespec='microseconds')}]"
    )
    answers = "" if in_reply_to is None else f"(reply to {in_reply_to}) "
    return f"{header}\n{answers}{sanitized(truncated(text, max_text_len))}"


def one_line(text: str) -> str:
    """The preview as one line (header, a space, the body): for an agent without bracketed
    paste, whose composer would submit at the line break."""
    return " ".join(text.split("\n"))


def previewed_tasks(text: str) -> list[int]:
    """The task ids of the previews (their headers) in `text`, in order."""
    return [int(task) for task in PREVIEW_HEADER.findall(text)]
