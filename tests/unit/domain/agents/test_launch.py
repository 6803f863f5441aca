"""Spawn prompts, coding-agent command lines, accepted foreground names and pane environment."""

from __future__ import annotations

import pytest

from cafleet.domain.agents.claude import CLAUDE_FLOOR
from cafleet.domain.agents.custom import (
    CustomCommand,
    Placeholder,
    SpawnIdentity,
    accepted_commands,
    check_prompt,
    custom_command_for,
    render_prompt,
)
from cafleet.domain.agents.launch import (
    LaunchSpec,
    binary_name,
    build_argv,
    check_model,
    member_environment,
)
from cafleet.domain.agents.registry import AgentProfiles, ProfileOverrides
from cafleet.domain.errors import ErrorKind, UsageProblem
from cafleet.domain.placement import CodingAgent, Multiplexer

FLOOR = ",".join(CLAUDE_FLOOR)
IDENTITY = SpawnIdentity(fleet_id=4, agent_id=17, director_agent_id=9)
VALUES = IDENTITY.placeholders(CodingAgent.CODEX)


def unknown_in_prompt(name: str) -> str:
    return (
        f"Unknown placeholder '{name}' in custom prompt. Supported placeholders: {{fleet_id}},"
        " {agent_id}, {director_agent_id}, {coding_agent}. Double literal braces ({{, }}) to"
        " keep them as text."
    )


def unknown_in_command(name: str) -> str:
    return (
        f"Unknown placeholder '{name}' in --agent-command. Supported placeholders: {{prompt}},"
        " {name}, {model}, {fleet_id}, {agent_id}, {director_agent_id}, {coding_agent}."
    )


def usage_message(excinfo: pytest.ExceptionInfo[UsageProblem]) -> str:
    assert excinfo.value.kind is ErrorKind.USAGE
    return excinfo.value.message


def custom_argv(template: str, *, prompt: str = "go", model: str | None = None) -> list[str]:
    return build_argv(
        CodingAgent.CUSTOM,
        binary="/opt/bin/fake",
        name="coder",
        model=model,
        prompt=prompt,
        identity=IDENTITY,
        custom_template=template,
    )


# --- spawn prompt placeholders -----------------------------------------------------------------


class TestRenderPrompt:
    def test_the_spec_example(self) -> None:
        template = (
            "You are worker. FLEET ID: {fleet_id}. YOUR MEMBER ID: {agent_id}."
            " DIRECTOR ID: {director_agent_id}."
        )
        assert render_prompt(template, VALUES) == (
            "You are worker. FLEET ID: 4. YOUR MEMBER ID: 17. DIRECTOR ID: 9."
        )

    def test_coding_agent_placeholder(self) -> None:
        assert render_prompt("run as {coding_agent}", VALUES) == "run as codex"

    def test_doubled_braces_are_literal(self) -> None:
        assert render_prompt("{{fleet_id}} is {fleet_id}; {{}} and }}{{", VALUES) == (
            "{fleet_id} is 4; {} and }{"
        )

    def test_repeated_placeholders_and_newlines(self) -> None:
        assert render_prompt("{agent_id}\n{agent_id}\n", VALUES) == "17\n17\n"

    def test_text_without_placeholders_is_unchanged(self) -> None:
        text = "plain % text with $HOME and \\n and 'quotes'"
        assert render_prompt(text, VALUES) == text

    def test_empty_template(self) -> None:
        assert render_prompt("", VALUES) == ""

    def test_values_are_not_rescanned(self) -> None:
        values = {**VALUES, "coding_agent": "{agent_id}"}
        assert render_prompt("{coding_agent}", values) == "{agent_id}"

    def test_check_accepts_a_valid_template(self) -> None:
        check_prompt("{fleet_id} {agent_id} {director_agent_id} {coding_agent} {{x}}")

    @pytest.mark.parametrize(
        ("template", "name"),
        [
            ("hi {nope}", "nope"),
            ("{fleet_id.real}", "fleet_id.real"),
            ("{0}", "0"),
            ("{fleet_id:>5}", "fleet_id:>5"),
            ("{fleet_id!r}", "fleet_id!r"),
            ("{}", ""),
            ("{agent_id[0]}", "agent_id[0]"),
            ("{ fleet_id }", " fleet_id "),
            ("{FLEET_ID}", "FLEET_ID"),
            ("{prompt}", "prompt"),
            ("{name}", "name"),
        ],
    )
    def test_unknown_placeholders(self, template: str, name: str) -> None:
        with pytest.raises(UsageProblem) as excinfo:
            check_prompt(template)
        assert usage_message(excinfo) == unknown_in_prompt(name)

    def test_unknown_message_is_exact(self) -> None:
        with pytest.raises(UsageProblem) as excinfo:
            render_prompt("{nope}", VALUES)
        assert usage_message(excinfo) == (
            "Unknown placeholder 'nope' in custom prompt. Supported placeholders: {fleet_id},"
            " {agent_id}, {director_agent_id}, {coding_agent}. Double literal braces ({{, }})"
            " to keep them as text."
        )

    @pytest.mark.parametrize(
        ("template", "brace"),
        [
            ("{", "{"),
            ("open { brace", "{"),
            ("{fleet_id", "{"),
            ("{a{b}", "{"),
            ("}}{", "{"),
            ("}", "}"),
            ("close } brace", "}"),
            ("{{fleet_id}", "}"),
            ("{fleet_id}}", "}"),
            ("{{{fleet_id}}}}", "}"),
        ],
    )
    def test_stray_braces(self, template: str, brace: str) -> None:
        with pytest.raises(UsageProblem) as excinfo:
            render_prompt(template, VALUES)
        assert usage_message(excinfo) == (
            f"Malformed custom prompt: Single '{brace}' encountered in format string."
            " Double literal braces ({{, }}) to keep them as text."
        )

    def test_syntax_is_checked_before_names(self) -> None:
        with pytest.raises(UsageProblem) as excinfo:
            check_prompt("{nope} }")
        assert usage_message(excinfo).startswith("Malformed custom prompt: Single '}'")

    def test_tripled_braces_around_a_placeholder(self) -> None:
        assert render_prompt("{{{fleet_id}}}", VALUES) == "{4}"

    def test_placeholder_values_for_each_agent(self) -> None:
        assert IDENTITY.placeholders(CodingAgent.CUSTOM) == {
            "fleet_id": "4",
            "agent_id": "17",
            "director_agent_id": "9",
            "coding_agent": "custom",
        }


# --- built-in backends ---------------------------------------------------------------------------


class TestBuiltInArgv:
    def argv(
        self, agent: CodingAgent, *, model: str | None = None, prompt: str = "go"
    ) -> list[str]:
        return build_argv(
            agent,
            binary=f"/usr/local/bin/{agent.value}",
            name="coder",
            model=model,
            prompt=prompt,
            identity=IDENTITY,
        )

    def test_claude(self) -> None:
        assert self.argv(CodingAgent.CLAUDE) == [
            "/usr/local/bin/claude",
            "--permission-mode",
            "dontAsk",
            "--allowedTools",
            FLOOR,
            "--name",
            "coder",
            "--",
            "go",
        ]

    def test_claude_with_model(self) -> None:
        assert self.argv(CodingAgent.CLAUDE, model="opus") == [
            "/usr/local/bin/claude",
            "--permission-mode",
            "dontAsk",
            "--allowedTools",
            FLOOR,
            "--name",
            "coder",
            "--model",
            "opus",
            "--",
            "go",
        ]

    def test_codex_does_not_get_the_name(self) -> None:
        assert self.argv(CodingAgent.CODEX) == [
            "/usr/local/bin/codex",
            "--no-daemon",
            "--ask-for-approval",
            "never",
            "--sandbox",
            "workspace-write",
            "-c",
            "allow_login_shell=false",
            "-c",
            "sandbox_workspace_write.network_access=true",
            "--",
            "go",
        ]

    def test_codex_with_model(self) -> None:
        assert self.argv(CodingAgent.CODEX, model="gpt-5 high")[-4:] == [
            "--model",
            "gpt-5 high",
            "--",
            "go",
        ]

    def test_opencode(self) -> None:
        assert self.argv(CodingAgent.OPENCODE) == [
            "/usr/local/bin/opencode",
            "--agent",
            "cafleet",
            "--prompt",
            "go",
        ]

    def test_opencode_with_model(self) -> None:
        assert self.argv(CodingAgent.OPENCODE, model="anthropic/claude-sonnet") == [
            "/usr/local/bin/opencode",
            "--agent",
            "cafleet",
            "--model",
            "anthropic/claude-sonnet",
            "--prompt",
            "go",
        ]

    @pytest.mark.parametrize("agent", [CodingAgent.CLAUDE, CodingAgent.CODEX, CodingAgent.OPENCODE])
    def test_multi_line_prompt_stays_one_element(self, agent: CodingAgent) -> None:
        prompt = "line one\nline 'two' \"three\"\n  $HOME; rm -rf / {x}"
        argv = self.argv(agent, prompt=prompt)
        assert argv[-1] == prompt
        assert argv.count(prompt) == 1

    @pytest.mark.parametrize(
        ("agent", "before"),
        [(CodingAgent.CLAUDE, "--"), (CodingAgent.CODEX, "--"), (CodingAgent.OPENCODE, "--prompt")],
    )
    def test_a_prompt_that_looks_like_an_option_is_never_read_as_one(
        self, agent: CodingAgent, before: str
    ) -> None:
        argv = self.argv(agent, prompt="--dangerously-skip-permissions")
        assert argv[-2:] == [before, "--dangerously-skip-permissions"]

    def test_the_launch_spec_passes_the_hook_settings_and_database_dir(self) -> None:
        claude = LaunchSpec.validated(CodingAgent.CLAUDE, name="coder").argv(
            binary="/b/claude",
            prompt="go",
            identity=IDENTITY,
            database_dir="/data",
            hook_settings="/run/pad/agent-settings.json",
        )
        codex = LaunchSpec.validated(CodingAgent.CODEX, name="coder").argv(
            binary="/b/codex",
            prompt="go",
            identity=IDENTITY,
            database_dir="/data",
            hook_settings="/run/pad/agent-settings.json",
        )
        assert claude[-4:] == ["--settings", "/run/pad/agent-settings.json", "--", "go"]
        assert "--add-dir" not in claude
        assert codex[-4:] == ["--add-dir", "/data", "--", "go"]
        assert "--settings" not in codex

    def test_the_launch_spec_uses_the_profile_it_is_given(self) -> None:
        profile = AgentProfiles.resolved(
            {CodingAgent.OPENCODE: ProfileOverrides(extra_args=("--log-level", "DEBUG"))}
        )[CodingAgent.OPENCODE]
        argv = LaunchSpec.validated(CodingAgent.OPENCODE, name="coder").argv(
            binary="/b/opencode", prompt="go", identity=IDENTITY, profile=profile
        )
        assert argv == [
            "/b/opencode", "--agent", "cafleet", "--log-level", "DEBUG", "--prompt", "go",
        ]  # fmt: skip

    @pytest.mark.parametrize("agent", [CodingAgent.CLAUDE, CodingAgent.CODEX, CodingAgent.OPENCODE])
    def test_empty_prompt_still_yields_several_elements(self, agent: CodingAgent) -> None:
        argv = self.argv(agent, prompt="")
        assert len(argv) >= 2
        assert argv[-1] == ""

    @pytest.mark.parametrize(
        ("agent", "expected"),
        [
            (CodingAgent.CLAUDE, "claude"),
            (CodingAgent.CODEX, "codex"),
            (CodingAgent.OPENCODE, "opencode"),
        ],
    )
    def test_binary_name(self, agent: CodingAgent, expected: str) -> None:
        assert binary_name(agent) == expected


# --- custom backend ------------------------------------------------------------------------------


class TestCustomCommandParsing:
    def test_words_follow_posix_shell_rules(self) -> None:
        command = CustomCommand.parse("""fake --say 'hello world' "a b" c\\ d --e="f g" ''""")
        assert command.program == "fake"
        assert command.arguments == (
            ("--say",),
            ("hello world",),
            ("a b",),
            ("c d",),
            ("--e=f g",),
            (),
        )

    def test_no_variable_expansion(self) -> None:
        assert custom_argv("fake $HOME ~ `id` $(id)")[1:5] == ["$HOME", "~", "`id`", "$(id)"]

    def test_hash_is_not_a_comment(self) -> None:
        assert custom_argv("fake #x")[1] == "#x"

    def test_placeholders_inside_words(self) -> None:
        command = CustomCommand.parse("fake --title=[{name}]")
        assert command.arguments == (("--title=[", Placeholder("name"), "]"),)

    def test_keeps_the_template(self) -> None:
        assert CustomCommand.parse("fake  -x").template == "fake  -x"

    @pytest.mark.parametrize(
        ("template", "reason"),
        [
            ("fake 'unclosed", "no closing quotation"),
            ('fake "unclosed', "no closing quotation"),
            ("fake \\", "no escaped character"),
            ("", "it names no program"),
            ("   \t\n ", "it names no program"),
            ("'' --flag", "the first word must be the program name, without placeholders"),
            ("{name} --flag", "the first word must be the program name, without placeholders"),
            ("bin-{model} x", "the first word must be the program name, without placeholders"),
            ("{prompt}", "the first word must be the program name, without placeholders"),
            ("fake --p={prompt}", "{prompt} must be a whole word, not part of '--p={prompt}'"),
            (
                "fake {prompt}{prompt}",
                "{prompt} must be a whole word, not part of '{prompt}{prompt}'",
            ),
            (
                "fake a{",
                "single '{' in 'a{'; double literal braces ({{, }}) to keep them as text",
            ),
            (
                "fake '}'",
                "single '}' in '}'; double literal braces ({{, }}) to keep them as text",
            ),
        ],
    )
    def test_invalid_command_lines(self, template: str, reason: str) -> None:
        with pytest.raises(UsageProblem) as excinfo:
            CustomCommand.parse(template)
        assert usage_message(excinfo) == f"--agent-command is not a valid command line: {reason}."

    @pytest.mark.parametrize(
        ("template", "name"),
        [
            ("fake {nope}", "nope"),
            ("fake --x={0}", "0"),
            ("fake {}", ""),
            ("fake {name.upper}", "name.upper"),
            ("fake {model:>3}", "model:>3"),
            ("fake {PROMPT}", "PROMPT"),
        ],
    )
    def test_unknown_placeholders(self, template: str, name: str) -> None:
        with pytest.raises(UsageProblem) as excinfo:
            CustomCommand.parse(template)
        assert usage_message(excinfo) == unknown_in_command(name)

    def test_unknown_message_is_exact(self) -> None:
        with pytest.raises(UsageProblem) as excinfo:
            CustomCommand.parse("fake {x}")
        assert usage_message(excinfo) == (
            "Unknown placeholder 'x' in --agent-command. Supported placeholders: {prompt},"
            " {name}, {model}, {fleet_id}, {agent_id}, {director_agent_id}, {coding_agent}."
        )

    def test_uses_model(self) -> None:
        assert CustomCommand.parse("fake --m={model}").uses_model
        assert not CustomCommand.parse("fake --m={{model}}").uses_model
        assert not CustomCommand.parse("fake").uses_model

    def test_has_prompt_word(self) -> None:
        assert CustomCommand.parse("fake {prompt} -x").has_prompt_word
        assert not CustomCommand.parse("fake {{prompt}}").has_prompt_word


class TestCustomArgv:
    def test_prompt_is_appended_last_without_a_prompt_word(self) -> None:
        assert custom_argv("cafleet-demo-agent --rounds 3") == [
            "/opt/bin/fake",
            "--rounds",
            "3",
            "go",
        ]

    def test_bare_program_gets_two_elements(self) -> None:
        assert custom_argv("fake", prompt="hello") == ["/opt/bin/fake", "hello"]

    def test_argv0_is_the_resolved_binary(self) -> None:
        assert custom_argv("./agents/fake -x")[0] == "/opt/bin/fake"

    def test_prompt_word_takes_the_prompt_in_place(self) -> None:
        assert custom_argv("fake --prompt {prompt} --verbose") == [
            "/opt/bin/fake",
            "--prompt",
            "go",
            "--verbose",
        ]

    def test_quoted_prompt_word_is_still_a_whole_word(self) -> None:
        assert custom_argv("fake '{prompt}' -v") == ["/opt/bin/fake", "go", "-v"]

    def test_every_prompt_word_gets_the_prompt(self) -> None:
        assert custom_argv("fake {prompt} {prompt}") == ["/opt/bin/fake", "go", "go"]

    def test_multi_line_prompt_stays_one_element(self) -> None:
        prompt = "first line\nsecond 'line' with \"quotes\" and {agent_id}\n"
        assert custom_argv("fake {prompt} -v", prompt=prompt) == ["/opt/bin/fake", prompt, "-v"]
        assert custom_argv("fake -v", prompt=prompt) == ["/opt/bin/fake", "-v", prompt]

    def test_identity_placeholders(self) -> None:
        argv = custom_argv(
            "fake --title={name}@{fleet_id} {agent_id} {director_agent_id} {coding_agent}"
        )
        assert argv == ["/opt/bin/fake", "--title=coder@4", "17", "9", "custom", "go"]

    def test_substituted_values_are_not_split_or_rescanned(self) -> None:
        argv = build_argv(
            CodingAgent.CUSTOM,
            binary="/opt/bin/fake",
            name="two words {model}",
            model=None,
            prompt="go",
            identity=IDENTITY,
            custom_template="fake --name {name}",
        )
        assert argv == ["/opt/bin/fake", "--name", "two words {model}", "go"]

    def test_doubled_braces_are_literal(self) -> None:
        assert custom_argv("fake '{{\"a\": 1}}' {{name}} x}}y") == [
            "/opt/bin/fake",
            '{"a": 1}',
            "{name}",
            "x}y",
            "go",
        ]

    def test_doubled_braces_in_the_program_name(self) -> None:
        assert CustomCommand.parse("fake{{1}}").program == "fake{1}"

    def test_model_is_substituted(self) -> None:
        assert custom_argv("fake --model={model} -m {model}", model="big") == [
            "/opt/bin/fake",
            "--model=big",
            "-m",
            "big",
            "go",
        ]

    def test_words_with_model_are_dropped_without_a_model(self) -> None:
        assert custom_argv("fake --model={model} -m {model} --x={name}-{model} -v") == [
            "/opt/bin/fake",
            "-m",
            "-v",
            "go",
        ]

    def test_literal_model_text_is_not_dropped(self) -> None:
        assert custom_argv("fake {{model}} --m={model}") == ["/opt/bin/fake", "{model}", "go"]

    def test_empty_quoted_word_is_kept(self) -> None:
        assert custom_argv("fake '' x") == ["/opt/bin/fake", "", "x", "go"]

    def test_binary_name_is_the_first_word(self) -> None:
        assert binary_name(CodingAgent.CUSTOM, "'my agent' --x {prompt}") == "my agent"
        assert binary_name(CodingAgent.CUSTOM, "./bin/fake") == "./bin/fake"

    @pytest.mark.parametrize(
        "template",
        ["fake", "fake {prompt}", "fake --m={model}", "fake --m={model} {prompt}", "fake ''"],
    )
    def test_always_at_least_two_elements(self, template: str) -> None:
        assert len(custom_argv(template, prompt="")) >= 2


# --- --agent-command and --model validation ------------------------------------------------------


class TestAgentCommandOption:
    @pytest.mark.parametrize("agent", [CodingAgent.CLAUDE, CodingAgent.CODEX, CodingAgent.OPENCODE])
    def test_only_valid_with_custom(self, agent: CodingAgent) -> None:
        with pytest.raises(UsageProblem) as excinfo:
            custom_command_for(agent, agent_command="fake", default_agent_command=None)
        assert usage_message(excinfo) == "--agent-command is only valid with --coding-agent custom."

    def test_setting_is_ignored_for_other_agents(self) -> None:
        assert (
            custom_command_for(CodingAgent.CLAUDE, agent_command=None, default_agent_command="fake")
            is None
        )

    def test_custom_needs_a_template(self) -> None:
        with pytest.raises(UsageProblem) as excinfo:
            custom_command_for(CodingAgent.CUSTOM, agent_command=None, default_agent_command=None)
        assert usage_message(excinfo) == (
            "--coding-agent custom needs --agent-command or CAFLEET_CUSTOM_AGENT_COMMAND."
        )

    def test_setting_supplies_the_template(self) -> None:
        command = custom_command_for(
            CodingAgent.CUSTOM, agent_command=None, default_agent_command="fake -v"
        )
        assert command is not None
        assert command.program == "fake"

    def test_option_wins_over_the_setting(self) -> None:
        command = custom_command_for(
            CodingAgent.CUSTOM, agent_command="mine", default_agent_command="theirs"
        )
        assert command is not None
        assert command.program == "mine"

    def test_explicit_empty_option_is_an_invalid_command_line(self) -> None:
        with pytest.raises(UsageProblem) as excinfo:
            custom_command_for(CodingAgent.CUSTOM, agent_command="", default_agent_command="fake")
        assert usage_message(excinfo) == (
            "--agent-command is not a valid command line: it names no program."
        )

    def test_unsplittable_setting_is_reported(self) -> None:
        with pytest.raises(UsageProblem) as excinfo:
            custom_command_for(CodingAgent.CUSTOM, agent_command=None, default_agent_command="'x")
        assert usage_message(excinfo) == (
            "--agent-command is not a valid command line: no closing quotation."
        )


class TestModel:
    @pytest.mark.parametrize("model", ["gpt5", "", "/gpt5", "openai/", "/"])
    def test_opencode_needs_provider_and_model(self, model: str) -> None:
        with pytest.raises(UsageProblem) as excinfo:
            check_model(CodingAgent.OPENCODE, model)
        assert usage_message(excinfo) == (
            f"--model for the opencode backend must be '<provider-id>/<model-id>' (got '{model}')."
        )

    def test_opencode_message_for_the_spec_example(self) -> None:
        with pytest.raises(UsageProblem) as excinfo:
            check_model(CodingAgent.OPENCODE, "gpt5")
        assert usage_message(excinfo) == (
            "--model for the opencode backend must be '<provider-id>/<model-id>' (got 'gpt5')."
        )

    @pytest.mark.parametrize("model", ["openai/gpt-5", "openrouter/anthropic/claude"])
    def test_opencode_accepts_provider_and_model(self, model: str) -> None:
        check_model(CodingAgent.OPENCODE, model)

    @pytest.mark.parametrize("agent", [CodingAgent.CLAUDE, CodingAgent.CODEX])
    @pytest.mark.parametrize("model", ["opus", "gpt5", "a/b", "anything at all"])
    def test_claude_and_codex_accept_any_string(self, agent: CodingAgent, model: str) -> None:
        check_model(agent, model)

    @pytest.mark.parametrize("agent", list(CodingAgent))
    def test_no_model_is_always_fine(self, agent: CodingAgent) -> None:
        check_model(agent, None, CustomCommand.parse("fake"))

    @pytest.mark.parametrize("template", ["fake", "fake {{model}}", "fake {name}"])
    def test_custom_needs_a_model_placeholder(self, template: str) -> None:
        with pytest.raises(UsageProblem) as excinfo:
            check_model(CodingAgent.CUSTOM, "big", CustomCommand.parse(template))
        assert usage_message(excinfo) == (
            "--model needs a {model} placeholder in the custom agent command."
        )

    def test_custom_accepts_a_model_with_the_placeholder(self) -> None:
        check_model(CodingAgent.CUSTOM, "big", CustomCommand.parse("fake --m={model}"))


class TestLaunchSpec:
    def test_validated_then_rendered(self) -> None:
        spec = LaunchSpec.validated(
            CodingAgent.CUSTOM,
            name="coder",
            model="big",
            agent_command=None,
            default_agent_command="fake --m={model}",
        )
        assert spec.binary_name == "fake"
        assert spec.argv(binary="/opt/bin/fake", prompt="p", identity=IDENTITY) == [
            "/opt/bin/fake",
            "--m=big",
            "p",
        ]

    def test_agent_command_is_checked_before_the_model(self) -> None:
        with pytest.raises(UsageProblem) as excinfo:
            LaunchSpec.validated(CodingAgent.OPENCODE, name="n", model="bad", agent_command="x")
        assert usage_message(excinfo) == "--agent-command is only valid with --coding-agent custom."

    def test_custom_template_is_checked_before_the_model(self) -> None:
        with pytest.raises(UsageProblem) as excinfo:
            LaunchSpec.validated(CodingAgent.CUSTOM, name="n", model="big", agent_command="'x")
        assert usage_message(excinfo).startswith("--agent-command is not a valid command line")

    def test_model_is_checked(self) -> None:
        with pytest.raises(UsageProblem) as excinfo:
            LaunchSpec.validated(CodingAgent.CUSTOM, name="n", model="big", agent_command="x")
        assert usage_message(excinfo) == (
            "--model needs a {model} placeholder in the custom agent command."
        )

    def test_built_in_binary_name(self) -> None:
        spec = LaunchSpec.validated(CodingAgent.CODEX, name="n")
        assert spec.binary_name == "codex"
        assert spec.custom is None

    def test_custom_without_its_template_cannot_render(self) -> None:
        with pytest.raises(ValueError, match="command template"):
            LaunchSpec(CodingAgent.CUSTOM, "n").argv(binary="/b", prompt="p", identity=IDENTITY)

    def test_build_argv_validates_the_model(self) -> None:
        with pytest.raises(UsageProblem):
            build_argv(
                CodingAgent.OPENCODE,
                binary="/b",
                name="n",
                model="gpt5",
                prompt="p",
                identity=IDENTITY,
            )


# --- accepted foreground names ------------------------------------------------------------------


class TestAcceptedCommands:
    def test_binary_without_shebang(self) -> None:
        assert accepted_commands("/opt/bin/fake-agent", None) == ("fake-agent",)
        assert accepted_commands("/opt/bin/fake-agent", "\x7fELF\x02\x01") == ("fake-agent",)

    @pytest.mark.parametrize(
        ("line", "expected"),
        [
            ("#!/bin/sh", ("agent", "sh")),
            ("#! /usr/bin/python3 -u", ("agent", "python3")),
            ("#!/usr/bin/env node", ("agent", "node")),
            ("#!/usr/bin/env python3\n", ("agent", "python3")),
            ("#!/usr/bin/env python3\r\n", ("agent", "python3")),
            ("#!/usr/bin/env -S python3 -u", ("agent", "python3")),
            ("#!/usr/bin/env -S uv run --script", ("agent", "uv")),
            ("#!/usr/bin/env -Spython3 -u", ("agent", "python3")),
            ("#!/usr/bin/env --split-string=python3 -u", ("agent", "python3")),
            ("#!/usr/bin/env -S PYTHONUNBUFFERED=1 python3 -u", ("agent", "python3")),
            ("#!/usr/bin/env -i -u HOME python3", ("agent", "python3")),
            ("#!/usr/bin/env -- /opt/py/bin/python3", ("agent", "python3")),
            ("#!/bin/env bun", ("agent", "bun")),
            ("#!/usr/bin/env", ("agent",)),
            ("#!", ("agent",)),
            ("#!   ", ("agent",)),
            ("# not a shebang", ("agent",)),
            (" #!/bin/sh", ("agent",)),
            ("#!/usr/local/bin/agent", ("agent",)),
        ],
    )
    def test_shebang_interpreters(self, line: str, expected: tuple[str, ...]) -> None:
        assert accepted_commands("/home/me/bin/agent", line) == expected

    @pytest.mark.parametrize(
        ("program", "words", "expected"),
        [
            ("/usr/bin/node", ("./agent.js",), ("node", "agent.js")),
            ("/usr/bin/node", ("--no-warnings", "/srv/agent.mjs"), ("node", "agent.mjs")),
            ("/v/bin/python", ("-m", "cafleet.demo.agent"), ("python", "cafleet.demo.agent")),
            ("/usr/bin/python3.11", ("-u", "bot.py"), ("python3.11", "bot.py")),
            ("/usr/bin/deno", ("run", "agent.ts"), ("deno", "agent.ts")),
            ("/usr/bin/node", ("-e", "code"), ("node",)),  # inline code: no script to find
            ("/usr/bin/node", (), ("node",)),
            ("/opt/bin/agent", ("run", "x.js"), ("agent",)),  # not a runtime: words ignored
        ],
    )
    def test_a_runtime_adds_the_script_it_runs(
        self, program: str, words: tuple[str, ...], expected: tuple[str, ...]
    ) -> None:
        assert accepted_commands(program, None, words) == expected

    def test_the_script_comes_from_the_words_before_the_first_placeholder(self) -> None:
        command = CustomCommand.parse("node --trace agent.js --name {name} {prompt}")

        assert command.leading_words == ("--trace", "agent.js", "--name")


# --- member pane environment ---------------------------------------------------------------------


IDENTITY_ENV = {
    "CAFLEET_FLEET_ID": "4",
    "CAFLEET_AGENT_ID": "17",
    "CAFLEET_MEMBER_SECRET": "the-members-secret",
    "CAFLEET_DATABASE_URL": "sqlite:////data/cafleet.db",
    "CAFLEET_MULTIPLEXER": "herdr",
}


class TestMemberEnvironment:
    def environment(
        self,
        caller: dict[str, str],
        multiplexer: Multiplexer = Multiplexer.HERDR,
        herdr_agent: str | None = None,
    ) -> dict[str, str]:
        return member_environment(
            caller,
            fleet_id=4,
            agent_id=17,
            database_url="sqlite:////data/cafleet.db",
            multiplexer=multiplexer,
            member_secret="the-members-secret",
            herdr_agent=herdr_agent,
        )

    def test_the_whole_caller_environment_is_handed_on(self) -> None:
        caller = {
            "PATH": "/usr/bin:/bin",
            "HOME": "/home/me",
            "ANTHROPIC_API_KEY": "sk-x",
            "OPENAI_API_KEY": "sk-y",
            "CLAUDE_CONFIG_DIR": "/home/me/.claude-work",
            "CODEX_HOME": "/home/me/.codex-work",
            "XDG_CONFIG_HOME": "/home/me/.config",
            "HTTPS_PROXY": "http://proxy:3128",
            "LANG": "en_US.UTF-8",
            "cafleet_lower": "x",
        }
        assert self.environment(caller) == {**caller, **IDENTITY_ENV}

    def test_other_cafleet_settings_are_forwarded(self) -> None:
        env = self.environment({"CAFLEET_MAX_TEXT_LEN": "50", "CAFLEET_SUBMIT_DELAY_CUSTOM": "0"})
        assert env["CAFLEET_MAX_TEXT_LEN"] == "50"
        assert env["CAFLEET_SUBMIT_DELAY_CUSTOM"] == "0"

    def test_identity_variables_win(self) -> None:
        env = self.environment(
            {
                "CAFLEET_FLEET_ID": "1",
                "CAFLEET_AGENT_ID": "2",
                "CAFLEET_MEMBER_SECRET": "the-directors-own-or-an-older-members",
                "CAFLEET_DATABASE_URL": "sqlite:///rel.db",
                "CAFLEET_MULTIPLEXER": "tmux",
            }
        )
        assert env == IDENTITY_ENV

    def test_the_webui_token_and_the_callers_pane_are_withheld(self) -> None:
        env = self.environment(
            {
                "CAFLEET_WEBUI_TOKEN": "0123456789abcdef",
                "TMUX": "/tmp/x,1,0",
                "TMUX_PANE": "%3",
                "HERDR_ENV": "1",
                "HERDR_PANE_ID": "w1:p1",
                "HERDR_SOCKET_PATH": "/run/herdr.sock",
                "HOME": "/h",
            }
        )
        assert env == {"HOME": "/h", **IDENTITY_ENV}

    def test_tmux_multiplexer(self) -> None:
        env = member_environment(
            {},
            fleet_id=1,
            agent_id=2,
            database_url="sqlite:////x.db",
            multiplexer=Multiplexer.TMUX,
            member_secret="s",
        )
        assert env["CAFLEET_MULTIPLEXER"] == "tmux"

    def test_herdr_gets_the_agents_herdr_name_as_its_detection_hint(self) -> None:
        env = self.environment({"HERDR_AGENT": "the-directors-own"}, herdr_agent="codex")
        assert env == {**IDENTITY_ENV, "HERDR_AGENT": "codex"}

    def test_tmux_gets_no_herdr_hint(self) -> None:
        env = self.environment({}, multiplexer=Multiplexer.TMUX, herdr_agent="claude")
        assert env["CAFLEET_MULTIPLEXER"] == "tmux"
        assert "HERDR_AGENT" not in env
