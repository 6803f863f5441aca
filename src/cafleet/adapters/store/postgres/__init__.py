"""The store on PostgreSQL (psycopg 3): the SQLAlchemy repositories and units of work of the
SQLite adapter, with PostgreSQL's own rules for transactions and errors."""
