"""The stores: stdlib sqlite3, the portable SQLAlchemy Core store, PostgreSQL."""
