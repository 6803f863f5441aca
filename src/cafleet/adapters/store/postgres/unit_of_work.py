"""Units of work on PostgreSQL: the shared SQLAlchemy ones, with PostgreSQL's rules."""

from __future__ import annotations

from sqlalchemy import Engine

from cafleet.adapters.store.postgres.engine import begin_options, open_engine
from cafleet.adapters.store.postgres.errors import as_cafleet_error
from cafleet.adapters.store.postgres.notifications import notify_relay
from cafleet.adapters.store.postgres.search import search
from cafleet.adapters.store.sqlalchemy.unit_of_work import SqlEngineRules, SqlUnitOfWorkFactory


def postgres_rules(url: str) -> SqlEngineRules:
    return SqlEngineRules(
        begin_options=begin_options,
        error=lambda e: as_cafleet_error(e, url),
        wake=notify_relay,
        search=search,
    )


class PostgresUnitOfWorkFactory(SqlUnitOfWorkFactory):
    """Opens its own engine; close() releases its connections."""

    def __init__(self, url: str, *, check_revision: bool = True) -> None:
        self.engine: Engine = open_engine(url)
        super().__init__(self.engine, postgres_rules(url), check_revision=check_revision)

    def close(self) -> None:
        self.engine.dispose()
