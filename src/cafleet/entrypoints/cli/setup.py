"""`cafleet setup`: bring the database schema to head."""

from __future__ import annotations

import click

from cafleet.entrypoints.cli.app import CafleetGroup


@click.group(cls=CafleetGroup, help="Prepare the database.")
def setup() -> None:
    pass


@setup.command("db", help="Create the database or migrate it to the head revision.")
def setup_db() -> None:
    from cafleet.adapters.sqlite.schema import MigrationOutcome, migrate
    from cafleet.settings import Settings

    settings = Settings.from_environ()
    path = settings.require_database_path()
    report = migrate(path)
    if report.outcome is MigrationOutcome.CREATED:
        click.echo(f"Created {path} and applied migrations to head ({report.to_revision}).")
    elif report.outcome is MigrationOutcome.UPGRADED:
        click.echo(f"Upgraded from {report.from_revision} to {report.to_revision}.")
    else:
        click.echo(f"Already at head ({report.to_revision}); nothing to do.")
