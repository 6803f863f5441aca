"""What every command shares: the --json flag, the lazily built components, error mapping."""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click
from click.core import ParameterSource

from cafleet.domain.errors import CafleetError, ErrorKind, Invalid
from cafleet.domain.identity import AGENT_VARIABLE
from cafleet.domain.terminal import escaped
from cafleet.entrypoints.cli import numbers

FC = TypeVar("FC", bound=Callable[..., Any])

if TYPE_CHECKING:
    from cafleet.composition.components import Adapters, Components
    from cafleet.domain.identity import MemberCredential


@dataclass
class App:
    json: bool = False
    adapters: Adapters | None = None  # None: this host's (the tests pass fakes as click's obj)
    _components: Components | None = field(default=None, repr=False)

    @property
    def components(self) -> Components:
        """Validates every setting on first use; --help and --version never get here."""
        if self._components is None:
            from cafleet.composition.components import Components
            from cafleet.settings import Settings

            self._components = Components(Settings.from_environ(), adapters=self.adapters)
        return self._components

    @property
    def caller(self) -> MemberCredential | None:
        """The member whose pane runs this command (None: the Director, a user's shell)."""
        return self.components.settings.member

    def acting(self, agent_id: int | None) -> int:
        """--agent-id (else CAFLEET_AGENT_ID), which in a member's pane defaults to the
        member itself."""
        if agent_id is not None:
            return agent_id
        if self.caller is not None:
            return self.caller.agent_id
        raise Invalid(AGENT_ID_REQUIRED)

    def emit(self, text: str | None, payload: Callable[[], Any]) -> None:
        """Print the JSON payload under --json (exact), else the text with its controls
        shown escaped (None prints nothing)."""
        if self.json:
            from cafleet.entrypoints.cli.rendering import dumps

            click.echo(dumps(payload()))
        elif text is not None:
            click.echo(escaped(text))


def app_of(ctx: click.Context) -> App:
    app = ctx.find_object(App)
    if app is None:
        app = ctx.ensure_object(App)
    return app


FLEET_VARIABLE = "CAFLEET_FLEET_ID"
FLEET_ID_REQUIRED = (
    f"--fleet-id <int> is required for this subcommand unless {FLEET_VARIABLE} is set."
    " Create a fleet with 'cafleet fleet create' and pass its id."
)
AGENT_ID_REQUIRED = (
    f"--agent-id <int> is required for this subcommand unless {AGENT_VARIABLE} is set"
    " (your own agent id)."
)


def require_fleet_id(fleet_id: int | None) -> int:
    if fleet_id is None:
        fail(FLEET_ID_REQUIRED)
    return fleet_id


def warn(line: str) -> None:
    """One line on stderr; what it quotes cannot steer the terminal."""
    click.echo(escaped(line), err=True)


def fail(message: str) -> NoReturn:
    warn(f"Error: {message}")
    sys.exit(1)


class CafleetCommand(click.Command):
    """Maps errors to one line each: usage problems exit 2, others `Error: ...` exit 1.
    Every command also takes `--json` after its name, as the root does before it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.params.append(
            click.Option(["--json", LOCAL_JSON], is_flag=True, help="Print machine-readable JSON.")
        )

    def invoke(self, ctx: click.Context) -> Any:
        if ctx.params.pop(LOCAL_JSON, False):
            app_of(ctx).json = True
        try:
            components = app_of(ctx).components  # settings are validated before anything else
            if ctx.parent is not None and isinstance(ctx.parent.command, GatedGroup):
                components.require_current_skills()
            return super().invoke(ctx)
        except CafleetError as exc:
            if exc.kind is ErrorKind.USAGE:
                raise click.UsageError(escaped(exc.message), ctx) from None
            fail(exc.message)
        except (click.ClickException, click.exceptions.Exit, click.Abort, SystemExit):
            raise
        except OSError as exc:  # a path we may not read or write: name it, no traceback
            from cafleet.adapters.system.path_problems import os_error_line

            fail(os_error_line(exc))
        except Exception as exc:  # the one place an unexpected error becomes one line
            text = str(exc).strip()
            first = text.splitlines()[0] if text else ""
            warn(f"Error: internal error: {type(exc).__name__}: {first}")
            if os.environ.get("CAFLEET_DEBUG", "") not in ("", "0"):
                traceback.print_exc()
            sys.exit(1)


LOCAL_JSON = "local_json"


class CafleetGroup(click.Group):
    command_class = CafleetCommand


class GatedGroup(CafleetGroup):
    """Team commands (fleet, member, message, monitor): they refuse to run until the bundled
    skills are installed at this version, so agents never follow outdated instructions."""


CafleetGroup.group_class = CafleetGroup


class EnvironmentDefaultOption(click.Option):
    """An option whose value may come from a variable: a bad value names the variable."""

    def get_error_hint(self, ctx: click.Context | None) -> str:
        hint = super().get_error_hint(ctx)
        source = None if ctx is None else ctx.get_parameter_source(self.name or "")
        from_variable = source is ParameterSource.ENVIRONMENT
        return f"{hint} (from {self.envvar})" if from_variable else hint


fleet_id_option = click.option(
    "--fleet-id",
    "fleet_id",
    cls=EnvironmentDefaultOption,
    type=numbers.ID,
    default=None,
    envvar=FLEET_VARIABLE,
    help=f"The fleet to act in; required unless {FLEET_VARIABLE} is set (a member's pane has it).",
)


def acting_agent_option(
    dest: str = "agent_id", role: str = "The acting agent (you)."
) -> Callable[[FC], FC]:
    """--agent-id naming who acts, else CAFLEET_AGENT_ID: in a member's pane it defaults to
    that member, and no other id is accepted there (see domain/identity.py)."""
    return click.option(
        "--agent-id",
        dest,
        cls=EnvironmentDefaultOption,
        type=numbers.ID,
        default=None,
        envvar=AGENT_VARIABLE,
        help=f"{role} Required unless {AGENT_VARIABLE} is set (a member's pane has it).",
    )
