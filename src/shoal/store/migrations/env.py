"""Alembic environment: migrates the database named by the caller's configuration."""

from __future__ import annotations

from alembic import context
from sqlalchemy import engine_from_config, pool

from shoal.store.tables import metadata

config = context.config


def run_migrations() -> None:
    connectable = config.attributes.get("connection")
    if connectable is not None:
        context.configure(connection=connectable, target_metadata=metadata, render_as_batch=True)
        with context.begin_transaction():
            context.run_migrations()
        return
    engine = engine_from_config(
        config.get_section(config.config_ini_section) or {},
        prefix="sqlalchemy.",
        poolclass=pool.NullPool,
    )
    with engine.connect() as connection:
        context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
        with context.begin_transaction():
            context.run_migrations()


run_migrations()
