"""Persistence: SQLAlchemy Core tables, Alembic migrations, and small repositories.

SQLite (WAL) is the embedded default; PostgreSQL is the shared store for several Shoal
processes. Everything above this layer goes through the repositories, never raw SQL.
"""
