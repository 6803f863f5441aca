"""The bundled skills: layout, front matter, links, and every quoted `cafleet` command line.

Three skill folders ship as package data, and what they teach must hold. The
consistency test parses each `cafleet ...` line quoted in a skill (fenced code blocks and
inline code spans) and checks it against the real click command tree, so the skills cannot
drift from the CLI.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import click
import pytest

import cafleet
from cafleet.entrypoints.cli.main import cli

SKILLS_DIR = Path(cafleet.__file__).resolve().parent / "skills"

EXPECTED_FILES = {
    "cafleet": {"SKILL.md", "director.md", "member.md", "monitor.md", "backends.md"},
    "cafleet-design-doc": {"SKILL.md", "create.md", "interview.md", "execute.md", "template.md"},
    "cafleet-research": {
        "SKILL.md",
        "report.md",
        "presentation.md",
        "charts.md",
        "slide-theme.md",
    },
}

SKILL_NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
PLACEHOLDER = re.compile(r"<[^<>\n]+>")
INLINE_CODE = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
FENCE = re.compile(r"^\s*(```|~~~)")
MARKDOWN_LINK = re.compile(r"\[[^\]\n]*\]\(([^)\s]+)\)")
SHELL_OPERATORS = {"|", "||", "&", "&&", ";", ">", ">>", "<", "2>", ">&", "2>&1", "(", ")"}


@dataclass(frozen=True)
class QuotedCommand:
    path: Path
    line: int
    text: str

    def where(self) -> str:
        return f"{self.path.relative_to(SKILLS_DIR)}:{self.line}"


def skill_folders() -> list[Path]:
    return sorted(p for p in SKILLS_DIR.iterdir() if p.is_dir() and not p.name.startswith("_"))


def markdown_files() -> list[Path]:
    return sorted(SKILLS_DIR.rglob("*.md"))


def front_matter(text: str) -> dict[str, str]:
    """The `key: value` lines between the opening and closing `---` lines."""
    lines = text.splitlines()
    assert lines, "file is empty"
    assert lines[0] == "---", "the file must start with a '---' front matter line"
    try:
        end = lines.index("---", 1)
    except ValueError:
        pytest.fail("front matter is not closed by a '---' line")
    fields: dict[str, str] = {}
    for raw in lines[1:end]:
        key, sep, value = raw.partition(":")
        assert sep, f"front matter line is not 'key: value': {raw!r}"
        fields[key.strip()] = value.strip()
    return fields


def is_command(text: str) -> bool:
    return text.startswith("cafleet ") and len(text.split()) > 1


def quoted_commands(path: Path) -> list[QuotedCommand]:
    """Every `cafleet ...` command line in fenced blocks and inline code spans of one file."""
    found: list[QuotedCommand] = []
    in_fence = False
    pending: tuple[int, str] | None = None  # a fenced command continued with a backslash
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if FENCE.match(raw):
            in_fence = not in_fence
            pending = None
            continue
        if in_fence:
            line = raw.strip()
            if pending is not None:
                start, head = pending
                line = f"{head} {line}"
            else:
                start = number
                line = line.removeprefix("$ ")
            if line.endswith("\\"):
                pending = (start, line[:-1].rstrip())
                continue
            pending = None
            if is_command(line):
                found.append(QuotedCommand(path, start, line))
            continue
        for span in INLINE_CODE.findall(raw):
            text = span.strip()
            if is_command(text):
                found.append(QuotedCommand(path, number, text))
    return found


def all_quoted_commands() -> list[QuotedCommand]:
    return [command for path in markdown_files() for command in quoted_commands(path)]


def tokenize(text: str) -> list[str]:
    """shlex words of the command, placeholders filled in, cut at the first shell operator."""
    lexer = shlex.shlex(PLACEHOLDER.sub("1", text), posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    words: list[str] = []
    for word in lexer:
        if word in SHELL_OPERATORS:
            break
        words.append(word)
    return words


def options_of(command: click.Command, ctx: click.Context) -> dict[str, click.Parameter]:
    table: dict[str, click.Parameter] = {}
    params = [*command.params]
    help_option = command.get_help_option(ctx)
    if help_option is not None:
        params.append(help_option)
    for param in params:
        if isinstance(param, click.Option):
            for name in (*param.opts, *param.secondary_opts):
                table[name] = param
    return table


def takes_value(param: click.Parameter) -> bool:
    return not (isinstance(param, click.Option) and (param.is_flag or param.count))


def problem_with(words: list[str]) -> str | None:
    """Why the command line does not fit the click tree, or None when it does."""
    if not words or words[0] != "cafleet":
        return "does not start with 'cafleet'"
    command: click.Command = cli
    ctx = click.Context(cli, info_name="cafleet")
    path = ["cafleet"]
    positionals: list[str] = []
    index = 1
    while index < len(words):
        word = words[index]
        index += 1
        if word.startswith("-") and word != "-":
            name, has_inline_value, _ = word.partition("=")
            param = options_of(command, ctx).get(name)
            if param is None:
                where = " ".join(path)
                hint = " (global options go before the subcommand)" if name == "--json" else ""
                return f"'{where}' has no option {name}{hint}"
            if takes_value(param) and not has_inline_value:
                if index >= len(words):
                    return f"option {name} of '{' '.join(path)}' needs a value"
                index += 1
            continue
        if isinstance(command, click.Group) and not positionals:
            sub = command.get_command(ctx, word)
            if sub is None:
                return f"'{' '.join(path)}' has no subcommand {word!r}"
            command = sub
            ctx = click.Context(sub, info_name=word, parent=ctx)
            path.append(word)
            continue
        positionals.append(word)
    arguments = [p for p in command.params if isinstance(p, click.Argument)]
    unlimited = any(a.nargs == -1 for a in arguments)
    capacity = sum(a.nargs for a in arguments if a.nargs > 0)
    if not unlimited and len(positionals) > capacity:
        extra = positionals[capacity:]
        return f"'{' '.join(path)}' takes {capacity} positional argument(s); got extra {extra}"
    return None


# --- layout and front matter ------------------------------------------------------------


def test_the_three_skills_ship_inside_the_package() -> None:
    assert {p.name for p in skill_folders()} == set(EXPECTED_FILES)


@pytest.mark.parametrize("skill", sorted(EXPECTED_FILES))
def test_each_skill_has_its_reference_files(skill: str) -> None:
    present = {p.name for p in (SKILLS_DIR / skill).iterdir() if p.is_file()}

    assert EXPECTED_FILES[skill] <= present


@pytest.mark.parametrize("skill", sorted(EXPECTED_FILES))
def test_skill_md_front_matter_names_the_folder_and_describes_it(skill: str) -> None:
    fields = front_matter((SKILLS_DIR / skill / "SKILL.md").read_text(encoding="utf-8"))

    assert fields.get("name") == skill
    assert SKILL_NAME.match(skill)
    description = fields.get("description", "")
    assert description, "description must not be empty"
    assert len(description) <= 1024, "coding agents cut descriptions longer than 1024 chars"


def test_skills_are_markdown_only() -> None:
    stray = [
        str(p.relative_to(SKILLS_DIR))
        for p in SKILLS_DIR.rglob("*")
        if p.is_file() and p.suffix != ".md"
    ]

    assert stray == []


def test_relative_links_point_at_existing_files() -> None:
    """Links in the prose; examples inside fenced blocks point into the reader's project."""
    broken = []
    for path in markdown_files():
        in_fence = False
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if FENCE.match(line):
                in_fence = not in_fence
            if in_fence:
                continue
            for target in MARKDOWN_LINK.findall(line):
                if "://" in target or target.startswith("#"):
                    continue
                if not (path.parent / target.split("#", 1)[0]).is_file():
                    broken.append(f"{path.relative_to(SKILLS_DIR)}:{number}: {target}")

    assert broken == []


def test_skills_name_no_machine_specific_paths() -> None:
    leaks = [
        f"{path.relative_to(SKILLS_DIR)}:{number}"
        for path in markdown_files()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if re.search(r"/home/|/Users/|/root/", line)
    ]

    assert leaks == []


# --- command lines against the CLI --------------------------------------------------------


def test_extraction_finds_the_command_lines() -> None:
    commands = all_quoted_commands()
    texts = {c.text for c in commands}

    assert len(commands) >= 50
    assert "cafleet monitor start --fleet-id 1" in texts
    assert any(t.startswith("cafleet --json member capture ") for t in texts)
    assert all(is_command(t) for t in texts)


def test_extraction_ignores_prose_and_handles_continuations(tmp_path: Path) -> None:
    sample = tmp_path / "sample.md"
    sample.write_text(
        "cafleet is the CLI; `cafleet` alone and `cafleet-demo-agent` are names.\n"
        "Run `cafleet message poll --fleet-id 1 --agent-id 4` now.\n"
        "```bash\n"
        "$ cafleet member create --fleet-id 1 --agent-id 1 \\\n"
        "    --name coder --description 'x' --text 'y'\n"
        "echo done\n"
        "```\n",
        encoding="utf-8",
    )

    found = [(c.line, c.text) for c in quoted_commands(sample)]

    assert found == [
        (2, "cafleet message poll --fleet-id 1 --agent-id 4"),
        (
            4,
            "cafleet member create --fleet-id 1 --agent-id 1 "
            "--name coder --description 'x' --text 'y'",
        ),
    ]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("cafleet --json member capture --fleet-id 1 --member-id 4 --lines 120 --no-ansi", None),
        ("cafleet member capture --fleet-id <fleet-id> --member-id <id> --tail 5", None),
        ("cafleet fleet create --name x --json", None),
        ("cafleet member exec --fleet-id 1 --member-id 4 'git status'", None),
        ("cafleet member delete --fleet-id 1 --member-id 4 -f", None),
        ("cafleet message send --fleet-id 1 --agent-id 4 --to 1 --text 'a | b' > log", None),
        ("cafleet message poll --help", None),
        ("cafleet message poll --fleet-id 1 --agent-id 4 --json", None),
        ("cafleet message poll --fleet-id 1 --agent-id 4 --jsn", "has no option --jsn"),
        ("cafleet member nudge --fleet-id 1 --bogus 3", "has no option --bogus"),
        ("cafleet member teleport --fleet-id 1", "has no subcommand 'teleport'"),
        ("cafleet message poll --fleet-id 1 --agent-id 4 extra", "got extra ['extra']"),
        ("cafleet message send --fleet-id 1 --agent-id 4 --to", "needs a value"),
    ],
)
def test_the_checker_accepts_valid_lines_and_names_the_problem(
    line: str, expected: str | None
) -> None:
    problem = problem_with(tokenize(line))

    if expected is None:
        assert problem is None
    else:
        assert problem is not None
        assert expected in problem


def test_every_quoted_command_matches_the_cli() -> None:
    problems = []
    for command in all_quoted_commands():
        try:
            words = tokenize(command.text)
        except ValueError as exc:
            problems.append(f"{command.where()}: {command.text!r}: cannot tokenize ({exc})")
            continue
        problem = problem_with(words)
        if problem is not None:
            problems.append(f"{command.where()}: {command.text!r}: {problem}")

    assert not problems, "skill command lines that do not match the CLI:\n" + "\n".join(problems)
