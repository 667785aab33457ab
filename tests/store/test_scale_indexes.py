"""Migration 0015 (issue 23) on SQLite and PostgreSQL: it makes exactly the indexes the tables
declare, and goes down and up again."""

from __future__ import annotations

from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.migration import MigrationContext
from sqlalchemy import inspect

from shoal.store.database import MIGRATIONS, Database
from shoal.store.tables import metadata

MINE = {
    "ix_actions_runnable": "actions",
    "ix_deployments_cluster_status": "deployments",
    "ix_deployments_cluster_order": "deployments",
}


def _indexes(db: Database) -> set[str]:
    with db.engine.connect() as conn:
        found = inspect(conn)
        return {i["name"] or "" for t in set(MINE.values()) for i in found.get_indexes(t)}


def _alembic(db: Database, step: str) -> None:
    cfg = Config()
    cfg.set_main_option("script_location", MIGRATIONS)
    with db.engine.begin() as conn:
        cfg.attributes["connection"] = conn
        if step == "down":
            command.downgrade(cfg, "0015-1")
        else:
            command.upgrade(cfg, "head")


def test_the_migration_makes_the_declared_indexes_and_reverses(db: Database) -> None:
    with db.engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), metadata)
    assert [d for d in diff if any(name in repr(d) for name in MINE)] == []
    assert set(MINE) <= _indexes(db)
    _alembic(db, "down")
    assert not set(MINE) & _indexes(db)
    _alembic(db, "up")
    assert set(MINE) <= _indexes(db)
