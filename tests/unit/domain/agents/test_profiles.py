"""The coding-agent profiles: command lines, foreground names, ready rules, dialog signs, hook
settings, the spawn prompt's mark on screen, and the user's overrides."""

from __future__ import annotations

import json
import shlex
from dataclasses import replace

import pytest

from cafleet.domain.agents.claude import ALLOW_CAFLEET, CLAUDE_FLOOR
from cafleet.domain.agents.profile import LaunchContext, ReadyRule
from cafleet.domain.agents.registry import PROFILES, AgentProfiles, ProfileOverrides
from cafleet.domain.agents.screen import prompt_mark, screen_shows
from cafleet.domain.agents.server import HttpFacts
from cafleet.domain.delivery import Channel
from cafleet.domain.placement import CodingAgent

CLAUDE, CODEX, OPENCODE, CUSTOM = (
    PROFILES[CodingAgent.CLAUDE],
    PROFILES[CodingAgent.CODEX],
    PROFILES[CodingAgent.OPENCODE],
    PROFILES[CodingAgent.CUSTOM],
)
CODEX_HEAD = [
    "--no-daemon",
    "--ask-for-approval",
    "never",
    "--sandbox",
    "workspace-write",
    "-c",
    "allow_login_shell=false",
    "-c",
    "sandbox_workspace_write.network_access=true",
]


def launch(binary: str, **changes: object) -> LaunchContext:
    fields: dict[str, object] = {"binary": binary, "name": "coder", "prompt": "do the work"}
    fields.update(changes)
    return LaunchContext(**fields)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- argv


FLOOR = ",".join(CLAUDE_FLOOR)


def test_claude_argv_in_full() -> None:
    argv = CLAUDE.argv(
        launch(
            "/b/claude",
            model="opus",
            hook_settings="/run/pad/agent-settings.json",
            database_dir="/data",  # claude's tools are not sandboxed: nothing to add
            git_dirs=("/src/app/.git",),
            extra_args=("--verbose",),
        )
    )

    assert argv == [
        "/b/claude", "--permission-mode", "dontAsk", "--allowedTools", FLOOR,
        "--name", "coder", "--settings", "/run/pad/agent-settings.json", "--model", "opus",
        "--verbose", "--", "do the work",
    ]  # fmt: skip
    assert ALLOW_CAFLEET == "Bash(cafleet:*)"


def test_claude_argv_bare() -> None:
    assert CLAUDE.argv(launch("/b/claude")) == [
        "/b/claude", "--permission-mode", "dontAsk", "--allowedTools", FLOOR,
        "--name", "coder", "--", "do the work",
    ]  # fmt: skip


def test_claudes_floor_allows_a_coding_agents_work_in_the_workspace_and_no_more() -> None:
    floor = set(CLAUDE_FLOOR)
    assert {ALLOW_CAFLEET, "Edit(./**)", "Bash(git add:*)", "Bash(git commit:*)"} <= floor
    assert {"Bash(pytest:*)", "Bash(python -m pytest:*)", "Bash(npm test:*)"} <= floor
    assert {"Bash(make:*)", "Bash(cargo test:*)", "Bash(go test:*)"} <= floor
    # no tool without a scope, no path beyond the working directory, no network or push
    assert all("(" in rule and not rule.startswith(("Edit(/", "Edit(~")) for rule in floor)
    for refused in ("git push", "git reset", "git checkout", "git clean", "curl", "wget", "ssh"):
        assert not any(rule.startswith(f"Bash({refused}") for rule in floor), refused
    assert "," not in "".join(rule[rule.index("(") :] for rule in floor)  # one flag holds all


@pytest.mark.parametrize(
    "own",
    [
        ("--permission-mode", "acceptEdits"),
        ("--permission-mode=acceptEdits",),
        ("--dangerously-skip-permissions",),
    ],
)
def test_the_users_own_claude_mode_flag_replaces_dontask(own: tuple[str, ...]) -> None:
    argv = CLAUDE.argv(launch("/b/claude", extra_args=own))

    assert "dontAsk" not in argv
    assert argv == [
        "/b/claude", "--allowedTools", FLOOR, "--name", "coder", *own, "--", "do the work",
    ]  # fmt: skip


def test_codex_argv_in_full() -> None:
    argv = CODEX.argv(
        launch(
            "/b/codex",
            model="gpt-5",
            database_dir="/data/cafleet",
            hook_settings="/ignored.json",  # codex takes no hook settings
            extra_args=("--search",),
        )
    )

    assert argv == [
        "/b/codex", *CODEX_HEAD, "--add-dir", "/data/cafleet", "--model", "gpt-5", "--search",
        "--", "do the work",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("own", "dropped"),
    [
        (("--ask-for-approval", "on-request"), ["--ask-for-approval", "never"]),
        (("-a", "on-request"), ["--ask-for-approval", "never"]),
        (("--sandbox=read-only",), ["--sandbox", "workspace-write"]),
        (("-s", "danger-full-access"), ["--sandbox", "workspace-write"]),
    ],
)
def test_the_users_own_approval_or_sandbox_flag_replaces_cafleets(
    own: tuple[str, ...], dropped: list[str]
) -> None:
    argv = CODEX.argv(launch("/b/codex", extra_args=own))

    head = CODEX_HEAD.copy()
    start = head.index(dropped[0])
    del head[start : start + 2]
    assert argv == ["/b/codex", *head, *own, "--", "do the work"]


def test_codex_argv_bare_has_no_name() -> None:
    assert CODEX.argv(launch("/b/codex")) == ["/b/codex", *CODEX_HEAD, "--", "do the work"]


def test_codex_may_write_the_repositorys_git_directories_to_commit() -> None:
    git_dirs = ("/src/main/.git", "/src/other/.git")

    argv = CODEX.argv(launch("/b/codex", database_dir="/data", git_dirs=git_dirs))

    assert argv == [
        "/b/codex", *CODEX_HEAD, "--add-dir", "/data", "--add-dir", "/src/main/.git",
        "--add-dir", "/src/other/.git", "--", "do the work",
    ]  # fmt: skip
    assert CODEX.argv(launch("/b/codex", git_dirs=git_dirs[:1]))[-4:] == [
        "--add-dir", "/src/main/.git", "--", "do the work",
    ]  # fmt: skip


def test_opencode_argv_in_full() -> None:
    argv = OPENCODE.argv(
        launch(
            "/b/opencode",
            model="openai/gpt-5",
            http_port=41234,
            database_dir="/d",
            extra_args=("--print-logs",),
        )
    )

    assert argv == [
        "/b/opencode", "--agent", "cafleet", "--port", "41234", "--model", "openai/gpt-5",
        "--print-logs", "--prompt", "do the work",
    ]  # fmt: skip


@pytest.mark.parametrize("profile", [CLAUDE, CODEX], ids=lambda p: p.coding_agent)
def test_only_opencode_opens_a_port(profile) -> None:  # type: ignore[no-untyped-def]
    argv = profile.argv(launch("/b/agent", http_port=41234))

    assert "--port" not in argv
    assert "41234" not in argv


def test_opencode_argv_bare() -> None:
    assert OPENCODE.argv(launch("/b/opencode")) == [
        "/b/opencode", "--agent", "cafleet", "--prompt", "do the work",
    ]  # fmt: skip


def test_a_custom_profile_builds_no_argv() -> None:
    with pytest.raises(ValueError, match="command template"):
        CUSTOM.argv(launch("/b/agent"))


def test_the_profile_s_extra_args_come_before_the_launch_s() -> None:
    profile = AgentProfiles.resolved(
        {CodingAgent.CLAUDE: ProfileOverrides(extra_args=("--from-settings",))}
    )[CodingAgent.CLAUDE]

    argv = profile.argv(launch("/b/claude", extra_args=("--from-launch",)))

    assert argv[-4:] == ["--from-settings", "--from-launch", "--", "do the work"]


@pytest.mark.parametrize("profile", [CLAUDE, CODEX, OPENCODE], ids=lambda p: p.coding_agent)
def test_the_prompt_is_always_the_last_word_and_whole(profile) -> None:  # type: ignore[no-untyped-def]
    prompt = "-x\nline two; rm -rf / 'quoted' \"double\""

    argv = profile.argv(launch("/b/agent", prompt=prompt, extra_args=("--a", "--b")))

    assert argv[-1] == prompt
    assert argv.count(prompt) == 1
    assert argv[-2] in ("--", "--prompt")


# --------------------------------------------------------------------------- the profiles


def test_the_built_in_profiles() -> None:
    facts = {
        agent: (p.foreground_names, p.submit_delay, p.ready_rules, p.wait_fallback_seconds)
        for agent, p in PROFILES.items()
    }

    assert facts == {
        CodingAgent.CLAUDE: (
            ("claude",), 0.05, (ReadyRule.HOOK, ReadyRule.SCREEN, ReadyRule.WAIT), 20.0,
        ),
        CodingAgent.CODEX: (("codex", "node"), 0.05, (ReadyRule.SCREEN, ReadyRule.WAIT), 20.0),
        CodingAgent.OPENCODE: (
            ("opencode", "node", "bun"), 0.1, (ReadyRule.HTTP, ReadyRule.WAIT), 45.0,
        ),
        CodingAgent.CUSTOM: ((), 0.2, (ReadyRule.WAIT,), 0.5),
    }  # fmt: skip
    assert {p.coding_agent for p in PROFILES.values()} == set(CodingAgent)
    assert all(p.exit_text == "/exit" for p in PROFILES.values())
    assert [a for a, p in PROFILES.items() if p.uses_hooks] == [CodingAgent.CLAUDE]
    assert [a for a, p in PROFILES.items() if p.server is not None] == [CodingAgent.OPENCODE]
    assert {a: p.signal_rule for a, p in PROFILES.items()} == {
        CodingAgent.CLAUDE: ReadyRule.HOOK,
        CodingAgent.CODEX: None,
        CodingAgent.OPENCODE: ReadyRule.HTTP,
        CodingAgent.CUSTOM: None,
    }
    assert [a for a, p in PROFILES.items() if p.http is not None] == [CodingAgent.OPENCODE]
    assert OPENCODE.http == HttpFacts(
        "OPENCODE_SERVER_PASSWORD",
        "opencode",
        "/session/status",
        "/session/{session}/prompt_async",
        "cafleet",
        "/permission",
        shell_path="/session/{session}/shell",
    )
    assert OPENCODE.http.shell("ses_1", "ls") == (
        "/session/ses_1/shell", {"agent": "cafleet", "command": "ls"},
    )  # fmt: skip
    assert replace(OPENCODE.http, shell_path=None).shell("ses_1", "ls") is None
    assert {a: p.channels for a, p in PROFILES.items()} == {
        CodingAgent.CLAUDE: (Channel.CLAUDE_HOOK,),
        CodingAgent.CODEX: (Channel.CODEX_QUEUE,),
        CodingAgent.OPENCODE: (Channel.OPENCODE_HTTP,),
        CodingAgent.CUSTOM: (),
    }
    assert all(sign == sign.lower() for p in PROFILES.values() for sign in p.dialog_signs)


def test_the_ready_rules_have_stable_names() -> None:
    assert [rule.value for rule in ReadyRule] == ["hook", "http", "screen", "wait"]


def test_the_signal_rule_is_the_first_the_agent_reports_itself() -> None:
    profile = AgentProfiles.resolved(
        {CodingAgent.OPENCODE: ProfileOverrides(ready_rules=(ReadyRule.WAIT, ReadyRule.HTTP))}
    )[CodingAgent.OPENCODE]
    without = AgentProfiles.resolved(
        {CodingAgent.OPENCODE: ProfileOverrides(ready_rules=(ReadyRule.SCREEN, ReadyRule.WAIT))}
    )[CodingAgent.OPENCODE]
    neither = AgentProfiles.resolved(
        {
            CodingAgent.OPENCODE: ProfileOverrides(
                ready_rules=(ReadyRule.SCREEN, ReadyRule.WAIT), channels=()
            )
        }
    )[CodingAgent.OPENCODE]

    assert profile.signal_rule is ReadyRule.HTTP
    assert without.signal_rule is None
    assert without.server is not None  # the opencode-http channel still needs the server
    assert (neither.signal_rule, neither.server) == (None, None)


@pytest.mark.parametrize(
    ("answer", "taken"),
    [
        pytest.param('{"ses_1": {"type": "busy"}}', True, id="a-busy-session"),
        pytest.param("{}", False, id="no-session-busy"),
        pytest.param("[]", False, id="not-an-object"),
        pytest.param('["ses_1"]', False, id="a-list"),
        pytest.param("<html>login</html>", False, id="not-json"),
        pytest.param("", False, id="empty"),
        pytest.param(None, False, id="no-answer"),
    ],
)
def test_the_http_status_says_whether_a_prompt_was_taken(answer: str | None, taken: bool) -> None:
    assert OPENCODE.http is not None
    assert OPENCODE.http.prompt_taken(answer) is taken


# --------------------------------------------------------------------------- dialogs


@pytest.mark.parametrize(
    ("profile", "screen", "sign"),
    [
        pytest.param(CLAUDE, "Yes, I trust this folder", "trust this folder", id="trust"),
        pytest.param(CLAUDE, "Do you want to\n   PROCEED?", "do you want to proceed",
                     id="wrapped-and-upper-case"),
        pytest.param(CLAUDE, "Use this API key?\n  Esc to cancel", "use this api key",
                     id="first-sign-in-profile-order"),
        pytest.param(CLAUDE, "> fix it\n  (esc to interrupt)", None, id="working-is-no-dialog"),
        pytest.param(CODEX, "Hooks need review before they run", "hooks need review",
                     id="codex-hooks"),
        pytest.param(CODEX, "Do you want to proceed?", None, id="another-agent-s-sign"),
        pytest.param(OPENCODE, "Do you trust this folder?", None, id="no-signs"),
        pytest.param(CUSTOM, "trust this folder", None, id="custom"),
        pytest.param(CLAUDE, "", None, id="empty-screen"),
    ],
)  # fmt: skip
def test_dialog_signs(profile, screen: str, sign: str | None) -> None:  # type: ignore[no-untyped-def]
    assert profile.dialog_on(screen) == sign


# --------------------------------------------------------------------------- hook settings


def test_claude_hook_settings_record_four_events_and_wait_for_mail_on_stop() -> None:
    record = [
        "/opt/py bin/python",
        "-m",
        "cafleet.entrypoints.processes.hook",
        "/run/pads/1-7/events",
    ]
    wait = [
        "/opt/py bin/python",
        "-m",
        "cafleet.entrypoints.processes.hook",
        "wait",
        "/run/pads/1-7",
    ]

    text = CLAUDE.hook_settings(record, wait)

    assert text is not None
    hooks = json.loads(text)["hooks"]
    assert set(hooks) == {"SessionStart", "UserPromptSubmit", "Stop", "Notification"}
    commands = {event: entries[0]["hooks"][0] for event, entries in hooks.items()}
    assert commands["UserPromptSubmit"] == {
        "type": "command",
        "command": shlex.join([*record, "prompt"]),
    }
    assert shlex.split(commands["Stop"]["command"]) == [*record, "idle"]
    assert shlex.split(commands["SessionStart"]["command"]) == [*record, "session"]
    assert shlex.split(commands["Notification"]["command"]) == [*record, "waiting"]
    assert "'/opt/py bin/python'" in commands["Stop"]["command"]  # quoted for the hook's shell
    assert hooks["UserPromptSubmit"][1] == hooks["Stop"][1]  # a turn begun by the hook too
    [waiter] = hooks["Stop"][1]["hooks"]
    assert waiter == {
        "type": "command",
        "command": shlex.join(wait),
        "asyncRewake": True,  # runs in the background; exit 2 wakes the session
        "timeout": 86400,
    }


@pytest.mark.parametrize("profile", [CODEX, OPENCODE, CUSTOM], ids=lambda p: p.coding_agent)
def test_other_agents_take_no_hook_settings(profile) -> None:  # type: ignore[no-untyped-def]
    assert profile.hook_settings(["record"], ["wait"]) is None


def test_claude_without_the_hook_rule_or_channel_takes_no_hook_settings() -> None:
    profile = AgentProfiles.resolved(
        {CodingAgent.CLAUDE: ProfileOverrides(ready_rules=(ReadyRule.SCREEN,), channels=())}
    )[CodingAgent.CLAUDE]

    assert profile.uses_hooks is False
    assert profile.hook_settings(["record"], ["wait"]) is None


# --------------------------------------------------------------------------- the prompt on screen


@pytest.mark.parametrize(
    ("prompt", "mark"),
    [
        ("You are 17 in fleet 4; report to 9 (codex).", "youare17infleet4reportto"),
        ("- Review PR #12_then_report", "reviewpr12thenreport"),
        ("short", "short"),
        ("Prüfe café-Änderungen bitte sorgfältig", "prüfecaféänderungenbitte"),
        ("", ""),
        ("!!! ---", ""),
    ],
)
def test_prompt_mark_is_the_first_24_letters_and_digits(prompt: str, mark: str) -> None:
    assert prompt_mark(prompt) == mark
    assert len(prompt_mark(prompt)) <= 24


def test_the_mark_is_found_on_a_wrapped_framed_rendered_screen() -> None:
    mark = prompt_mark("- Review **PR 12**, then report to 9.")
    screen = (
        "╭──────────────╮\n│ • Review PR  │\n│   12, then r │\n│ eport to 9.  │\n╰──────────────╯"
    )

    assert screen_shows(screen, mark)


@pytest.mark.parametrize(
    ("screen", "mark"),
    [
        ("You are 17 in fleet 4", "youare17infleet4reportto"),  # only the start of it
        ("anything at all", ""),  # an empty mark never matches
        ("", "abc"),
    ],
)
def test_a_screen_without_the_whole_mark_does_not_show_it(screen: str, mark: str) -> None:
    assert not screen_shows(screen, mark)


# --------------------------------------------------------------------------- overrides


def test_no_overrides_keep_the_built_in_profiles() -> None:
    assert dict(AgentProfiles.resolved({}).profiles) == dict(PROFILES)
    assert dict(AgentProfiles().profiles) == dict(PROFILES)
    assert AgentProfiles()[CodingAgent.CODEX] == CODEX


def test_overrides_replace_only_what_they_set() -> None:
    profiles = AgentProfiles.resolved(
        {
            CodingAgent.CLAUDE: ProfileOverrides(
                submit_delay=0.0,
                foreground_names=("claude", "node"),
                extra_args=("--verbose",),
                ready_rules=(ReadyRule.WAIT,),
            ),
            CodingAgent.CODEX: ProfileOverrides(submit_delay=1.5),
        }
    )

    claude, codex = profiles[CodingAgent.CLAUDE], profiles[CodingAgent.CODEX]
    assert (claude.submit_delay, claude.foreground_names) == (0.0, ("claude", "node"))
    assert (claude.extra_args, claude.ready_rules) == (("--verbose",), (ReadyRule.WAIT,))
    assert (claude.dialog_signs, claude.wait_fallback_seconds) == (
        CLAUDE.dialog_signs, CLAUDE.wait_fallback_seconds,
    )  # fmt: skip
    assert (codex.submit_delay, codex.foreground_names, codex.ready_rules) == (
        1.5, CODEX.foreground_names, CODEX.ready_rules,
    )  # fmt: skip
    assert profiles[CodingAgent.OPENCODE] == OPENCODE
    assert PROFILES[CodingAgent.CLAUDE].submit_delay == 0.05  # the built-ins stay as they are


def test_a_dialog_sign_quoted_in_the_transcript_above_is_not_a_dialog() -> None:
    claude = PROFILES[CodingAgent.CLAUDE]
    quoted = ["● Read notes.txt", "  Do you want to proceed with the migration?"]
    screen = "\n".join([*quoted, *(f"line {n}" for n in range(20)), "❯ ", "  ⏵⏵ don't ask on"])

    assert claude.dialog_on(screen) is None
    assert claude.dialog_on(screen + "\n  Do you want to proceed?\n  Esc to cancel") == (
        "do you want to proceed"
    )


def test_a_typed_shell_command_waits_at_least_the_shell_delay_before_enter() -> None:
    codex = PROFILES[CodingAgent.CODEX]

    assert codex.pause_before_enter(shell=False) == codex.submit_delay == 0.05
    assert codex.pause_before_enter(shell=True) == codex.shell_submit_delay == 0.3
    slow = replace(codex, submit_delay=1.0)
    assert slow.pause_before_enter(shell=True) == 1.0  # never shorter than the submit delay


# OpenCode's screen as the pinned version draws it: transcript boxes end in a blank row; the
# composer's box sits right on its `╹▀▀▀` floor, its last row the agent and model
OPENCODE_TRANSCRIPT = """\
  ┃
  ┃  [cafleet msg 12 from 1] hello there
  ┃

     FAKE-DONE: hello there

     ▣  Cafleet · Fake model · 842ms

"""
OPENCODE_FLOOR = """\
  ┃  Cafleet · Fake model Fake
  ╹▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀
   /tmp/work                                 15  ctrl+p commands
"""


def opencode_screen(composer_rows: list[str]) -> str:
    return (
        OPENCODE_TRANSCRIPT
        + "".join(f"  ┃  {row}\n" for row in ["", *composer_rows, ""])
        + (OPENCODE_FLOOR)
    )


def test_opencode_text_still_in_its_composer_box_is_told_from_the_same_text_above() -> None:
    text = "[cafleet msg 12 from 1] hello there"

    assert OPENCODE.checks_submit
    assert not OPENCODE.composer_holds(opencode_screen([]), text)  # submitted: only above
    assert OPENCODE.composer_holds(opencode_screen([text]), text)
    wrapped = ["[cafleet msg 12 fr", "om 1] hello there"]  # a narrow pane wraps the mark
    assert OPENCODE.composer_holds(opencode_screen(wrapped), text)
    assert not OPENCODE.composer_holds(OPENCODE_TRANSCRIPT, text)  # no box: cannot tell


@pytest.mark.parametrize(
    ("profile", "waiting", "emptied"),
    [
        (CLAUDE, "❯ [cafleet msg 12 from 1] hello", "❯ "),
        (CODEX, "› [cafleet msg 12 from 1] hello", "› Ask Codex to do anything"),
    ],
)
def test_a_text_left_on_the_composer_row_is_seen_and_one_submitted_above_is_not(
    profile: object, waiting: str, emptied: str
) -> None:
    assert isinstance(profile, type(CLAUDE))
    above = ["[cafleet msg 12 from 1] hello", "● answered", ""]
    text = "[cafleet msg 12 from 1] hello"

    assert profile.checks_submit
    assert profile.composer_holds("\n".join([*above, waiting, "  status"]), text)
    assert not profile.composer_holds("\n".join([*above, emptied, "  status"]), text)


def test_an_agent_with_no_composer_knowledge_is_never_checked() -> None:
    assert not CUSTOM.checks_submit
    assert not CUSTOM.composer_holds("> [cafleet msg 12 from 1] hello", "[cafleet msg 12 from 1]")
