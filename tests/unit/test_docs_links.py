"""Every relative link in README.md and docs/ names a file that exists, and every #anchor a
heading of that file: moving a section must not leave a link behind."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FENCE = re.compile(r"^\s*(```|~~~)")
INLINE_CODE = re.compile(r"`[^`]*`")
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\".*\")?\s*$")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def prose_lines(path: Path) -> list[tuple[int, str]]:
    """(line number, text) outside fenced blocks, with inline code removed."""
    lines, in_fence = [], False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if FENCE.match(line):
            in_fence = not in_fence
            continue
        if not in_fence:
            lines.append((number, INLINE_CODE.sub("", line)))
    return lines


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "").lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    found: set[str] = set()
    for _, line in prose_lines(path):
        match = HEADING.match(line)
        if match:
            base = slug(match.group(2))
            name, count = base, 1
            while name in found:
                name, count = f"{base}-{count}", count + 1
            found.add(name)
    return found


def links(path: Path) -> list[tuple[int, str]]:
    found = []
    for number, line in prose_lines(path):
        targets = LINK.findall(line)
        reference = REFERENCE.match(line)
        if reference:
            targets.append(reference.group(1))
        found += [(number, target) for target in targets]
    return found


def problem(source: Path, target: str) -> str | None:
    if re.match(r"^[a-z][a-z0-9+.-]*:", target):
        return None  # https:, mailto: ...
    name, _, anchor = target.partition("#")
    destination = (source.parent / name).resolve() if name else source
    if not destination.exists():
        return "no such file"
    if anchor and destination.suffix == ".md" and anchor not in anchors(destination):
        return f"no heading #{anchor} in {name or source.name}"
    return None


def broken_links(paths: list[Path]) -> list[str]:
    return [
        f"{path.relative_to(ROOT)}:{number}: {target}: {reason}"
        for path in paths
        for number, target in links(path)
        if (reason := problem(path, target))
    ]


def test_every_relative_link_and_anchor_resolves() -> None:
    assert broken_links(documents()) == []


@pytest.mark.parametrize(
    ("heading", "anchor"),
    [
        ("CLI latency against upstream 0.17.1", "cli-latency-against-upstream-0171"),
        ("Two composition roots, and why", "two-composition-roots-and-why"),
        ("The `--json` shapes", "the---json-shapes"),
    ],
)
def test_anchors_follow_githubs_rule(heading: str, anchor: str) -> None:
    assert slug(heading) == anchor


def test_a_missing_file_and_a_missing_heading_are_reported(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "other.md").write_text("# Other\n\n## A section\n")
    page = docs / "page.md"
    page.write_text(
        "See [ok](other.md#a-section), [gone](missing.md), [moved](other.md#old-section),\n"
        "[web](https://example.org/x.md) and `[code](nowhere.md)`.\n"
        "```\n[fenced](nowhere.md)\n```\n"
    )

    assert [(target, problem(page, target)) for _, target in links(page)] == [
        ("other.md#a-section", None),
        ("missing.md", "no such file"),
        ("other.md#old-section", "no heading #old-section in other.md"),
        ("https://example.org/x.md", None),
    ]
