"""Alembic migrations of the store (run by `shoal.store.database.Database.migrate`)."""
