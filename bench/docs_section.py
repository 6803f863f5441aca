"""The one way a benchmark rewrites its own results block in docs/benchmarks.md."""

from __future__ import annotations

from pathlib import Path


def replace_marked(docs: Path, start_mark: str, end_mark: str, block: str, heading: str) -> None:
    """Replace the text from `start_mark` to `end_mark` with `block` (which carries both marks),
    re-reading the file just before writing since other sections may change meanwhile; append
    the block when the marks are absent, and start the file with `heading` when it is missing."""
    if not docs.exists():
        docs.parent.mkdir(parents=True, exist_ok=True)
        docs.write_text(heading + block + "\n")
        return
    text = docs.read_text()
    start, end = text.find(start_mark), text.find(end_mark)
    if start == -1 or end < start:
        docs.write_text(text.rstrip("\n") + "\n\n" + block + "\n")
        return
    docs.write_text(text[:start] + block + text[end + len(end_mark) :])


def reproduce_lines(command: str) -> list[str]:
    """The lines that end a results block: how to run the benchmark again."""
    return ["Reproduce (from the repository root):", "", "```bash", command, "```"]
