"""`cafleet setup`: the database half, the skills half, or both."""

from __future__ import annotations

import click

from cafleet.entrypoints.cli.app import CafleetCommand, CafleetGroup, app_of, fail

AGENTS = click.Choice(["claude", "codex", "opencode", "agents"])


@click.group(
    cls=CafleetGroup,
    invoke_without_command=True,
    help="Prepare the database and install the bundled skills (both halves when run bare).",
)
@click.pass_context
def setup(ctx: click.Context) -> None:
    if ctx.invoked_subcommand is not None:
        return
    from cafleet.domain.errors import CafleetError

    try:
        app_of(ctx).components  # noqa: B018 - settings are validated before either half
    except CafleetError as exc:
        fail(exc.message)
    from cafleet.adapters.system.path_problems import os_error_line

    failed = []
    for half, run in (("db", _setup_db), ("skills", lambda: _setup_skills(ctx, ()))):
        try:
            run()
        except CafleetError as exc:
            click.echo(f"{half} half failed: {exc.message}")
            failed.append(half)
        except OSError as exc:
            click.echo(f"{half} half failed: {os_error_line(exc)}")
            failed.append(half)
    if failed:
        fail(f"{' and '.join(failed)} half failed")
    _director_hints(ctx)


def _setup_db() -> None:
    from cafleet.adapters.store.select import migrate_store, store_name
    from cafleet.adapters.store.sqlite.schema import MigrationOutcome
    from cafleet.settings import Settings

    settings = Settings.from_environ()
    report = migrate_store(settings)
    if report.outcome is MigrationOutcome.CREATED:
        click.echo(
            f"Created {store_name(settings)} and applied migrations to head ({report.to_revision})."
        )
    elif report.outcome is MigrationOutcome.UPGRADED:
        click.echo(f"Upgraded from {report.from_revision} to {report.to_revision}.")
    else:
        click.echo(f"Already at head ({report.to_revision}); nothing to do.")
    if settings.on_postgres:  # a store several machines may share
        click.echo(
            "On each host with member panes, run `cafleet relay` in a pane of its own"
            " (docs/multi-host.md)."
        )


def _setup_skills(ctx: click.Context, agents: tuple[str, ...]) -> None:
    from pathlib import Path

    from cafleet.application.setup import InstalledSkills
    from cafleet.domain.skills import SkillHome
    from cafleet.domain.terminal import escaped

    components = app_of(ctx).components
    home = Path(components.env.get("HOME") or Path.home())

    def report(done: InstalledSkills) -> None:
        click.echo(done.line(home))
        for note in done.notes():
            click.echo(escaped(note))

    components.skills.install([SkillHome(a) for a in agents], on_installed=report)


def _director_hints(ctx: click.Context) -> None:
    """What an installed Claude Code or Codex still needs in its own settings to be the
    Director: the user adds it (CAFleet never edits an agent's settings)."""
    from cafleet.domain.skills import SkillHome

    components = app_of(ctx).components
    grants = components.director_grants()
    homes = components.agent_homes
    missing = [
        g
        for g in grants
        if not g.granted and homes.config_home(SkillHome(g.coding_agent.value)).is_dir()
    ]
    if missing:
        click.echo("To run a coding agent as the Director (docs/agents.md):")
    for grant in missing:
        click.echo(f"  {grant.coding_agent.value}: {grant.line}")


@setup.command(
    "db", cls=CafleetCommand, help="Create the database or migrate it to the head revision."
)
def setup_db() -> None:
    _setup_db()


@setup.command(
    "skill", cls=CafleetCommand, help="Install the bundled skills into coding-agent homes."
)
@click.option(
    "--agent",
    "agents",
    type=AGENTS,
    multiple=True,
    help="Install for this agent (repeatable; 'agents' is the shared ~/.agents/skills);"
    " default: every agent home found, else ~/.agents/skills.",
)
@click.pass_context
def setup_skill(ctx: click.Context, agents: tuple[str, ...]) -> None:
    _setup_skills(ctx, agents)
