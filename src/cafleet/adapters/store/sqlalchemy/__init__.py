"""The portable SQLAlchemy Core store: the Alembic target, and PostgreSQL's repositories."""
