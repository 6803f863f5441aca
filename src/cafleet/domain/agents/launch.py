"""How a member's coding agent is launched: the checked launch, its command line and the
pane's environment (the spawn prompt and its placeholders are in custom.py).

Everything here is pure. Resolving the binary on PATH, reading a script's first line and
writing files happen in adapters; this module only decides what to run and with what.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from cafleet.domain.agents.custom import CustomCommand, SpawnIdentity, custom_command_for
from cafleet.domain.agents.profile import AgentProfile, LaunchContext
from cafleet.domain.agents.registry import PROFILES
from cafleet.domain.errors import UsageProblem
from cafleet.domain.identity import AGENT_VARIABLE, SECRET_VARIABLE
from cafleet.domain.placement import CodingAgent, Multiplexer

# --- model -----------------------------------------------------------------------------------


def check_model(
    coding_agent: CodingAgent, model: str | None, custom: CustomCommand | None = None
) -> None:
    """Reject a model the backend cannot be given; claude and codex take any string."""
    if model is None:
        return
    if coding_agent is CodingAgent.OPENCODE:
        provider, slash, name = model.partition("/")
        if not (provider and slash and name):
            raise UsageProblem(
                "--model for the opencode backend must be '<provider-id>/<model-id>'"
                f" (got '{model}')."
            )
    elif coding_agent is CodingAgent.CUSTOM and not (custom is not None and custom.uses_model):
        raise UsageProblem("--model needs a {model} placeholder in the custom agent command.")


# --- the launch ------------------------------------------------------------------------------


@dataclass(frozen=True)
class LaunchSpec:
    """What to start in a member pane, validated before anything is registered."""

    coding_agent: CodingAgent
    name: str
    model: str | None = None
    custom: CustomCommand | None = None

    @staticmethod
    def validated(
        coding_agent: CodingAgent,
        *,
        name: str,
        model: str | None = None,
        agent_command: str | None = None,
        default_agent_command: str | None = None,
    ) -> LaunchSpec:
        """Steps 2 and 3 of `member create`, in that order."""
        custom = custom_command_for(
            coding_agent, agent_command=agent_command, default_agent_command=default_agent_command
        )
        check_model(coding_agent, model, custom)
        return LaunchSpec(coding_agent, name, model, custom)

    @property
    def binary_name(self) -> str:
        """The program to resolve on PATH."""
        if self.custom is not None:
            return self.custom.program
        return self.coding_agent.value

    def argv(
        self,
        *,
        binary: str,
        prompt: str,
        identity: SpawnIdentity,
        profile: AgentProfile | None = None,
        database_dir: str | None = None,
        runtime_dir: str | None = None,
        git_dirs: tuple[str, ...] = (),
        hook_settings: str | None = None,
        http_port: int | None = None,
    ) -> list[str]:
        """The pane's command line; `binary` is the resolved absolute path of `binary_name`.

        Always two or more elements: tmux runs a single-element command through a shell, which
        would re-split the prompt. `profile` defaults to the built-in one of the agent.
        """
        if self.coding_agent is CodingAgent.CUSTOM:
            if self.custom is None:
                raise ValueError("a custom launch needs its command template")
            values = {"name": self.name, **identity.placeholders(self.coding_agent)}
            return self.custom.render(binary=binary, prompt=prompt, model=self.model, values=values)
        profile = profile or PROFILES[self.coding_agent]
        launch = LaunchContext(
            binary=binary,
            name=self.name,
            prompt=prompt,
            model=self.model,
            database_dir=database_dir,
            runtime_dir=runtime_dir,
            git_dirs=git_dirs,
            hook_settings=hook_settings,
            http_port=http_port,
        )
        return profile.argv(launch)


def binary_name(coding_agent: CodingAgent, custom_template: str | None = None) -> str:
    """The program `member create` must find on PATH for this backend."""
    return LaunchSpec.validated(coding_agent, name="", agent_command=custom_template).binary_name


def build_argv(
    coding_agent: CodingAgent,
    *,
    binary: str,
    name: str,
    model: str | None,
    prompt: str,
    identity: SpawnIdentity,
    custom_template: str | None = None,
) -> list[str]:
    """One-shot form of `LaunchSpec.validated(...).argv(...)`."""
    spec = LaunchSpec.validated(coding_agent, name=name, model=model, agent_command=custom_template)
    return spec.argv(binary=binary, prompt=prompt, identity=identity)


# --- pane environment ------------------------------------------------------------------------

# Never handed to a member: the WebUI token would let any agent drive the admin API, and the
# multiplexer's own variables belong to the pane the member gets.
WITHHELD_VARIABLES = frozenset({"CAFLEET_WEBUI_TOKEN", "TMUX", "TMUX_PANE"})
WITHHELD_PREFIXES = ("HERDR_",)
HERDR_AGENT_VARIABLE = "HERDR_AGENT"  # read by herdr from the process's environment


def member_environment(
    caller_env: Mapping[str, str],
    *,
    fleet_id: int,
    agent_id: int,
    database_url: str,
    multiplexer: Multiplexer,
    member_secret: str,
    herdr_agent: str | None = None,
) -> dict[str, str]:
    """The whole environment of a new member: the Director's (API keys, agent homes, XDG
    directories, proxies, PATH), less what must not leak, plus the member's identity and
    the secret that proves it (domain/identity.py).

    `caller_env` is already without what the agents the caller runs under set for their
    tools (`SessionVariables.handed_on`); the
    caller's CAFLEET_* settings travel so the member talks to the same broker the same way;
    `database_url` must already carry an absolute path. On herdr, `herdr_agent` (the
    profile's name for the agent) becomes HERDR_AGENT, herdr's agent-identity hint.
    """
    env = {
        key: value
        for key, value in caller_env.items()
        if key not in WITHHELD_VARIABLES and not key.startswith(WITHHELD_PREFIXES)
    }
    env |= {
        "CAFLEET_FLEET_ID": str(fleet_id),
        AGENT_VARIABLE: str(agent_id),
        SECRET_VARIABLE: member_secret,
        "CAFLEET_DATABASE_URL": database_url,
        "CAFLEET_MULTIPLEXER": multiplexer.value,
    }
    if multiplexer is Multiplexer.HERDR and herdr_agent is not None:
        env[HERDR_AGENT_VARIABLE] = herdr_agent
    return env
