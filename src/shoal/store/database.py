"""Opening the store: engine, SQLite pragmas, migrations, and transactions.

SQLite gets WAL (readers never wait for the writer), a busy timeout (several processes may
share the file) and `BEGIN IMMEDIATE` for writes, so a read-then-write transaction cannot lose a
race halfway through. PostgreSQL gets a pool and row locks (`FOR UPDATE SKIP LOCKED`) where
engines compete for work.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from sqlalchemy import Connection, create_engine, event, insert, select
from sqlalchemy.engine import Engine

from shoal.files import narrow, private_dir, private_file
from shoal.store.tables import placement_lock

__all__ = ["MIGRATIONS", "Connection", "Database"]
# `Connection` is the handle of an open transaction that the repositories take: the layers above
# the store name it from here, and never import SQLAlchemy themselves.

MIGRATIONS = str(Path(__file__).parent / "migrations")


class Database:
    """One store, by SQLAlchemy URL."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.is_sqlite = url.startswith("sqlite")
        if self.is_sqlite:
            path = url.split("///", 1)[1] if "///" in url else ""
            if path and path != ":memory:" and not path.startswith("file:"):
                _private_sqlite(Path(path))
            self.engine: Engine = create_engine(
                url, connect_args={"timeout": 30, "check_same_thread": False}
            )
            event.listen(self.engine, "connect", _sqlite_on_connect)
            event.listen(self.engine, "begin", _sqlite_on_begin)
        else:
            self.engine = create_engine(url, pool_size=10, max_overflow=20, pool_pre_ping=True)

    def migrate(self) -> None:
        """Bring the schema to the newest revision (idempotent)."""
        cfg = Config()
        cfg.set_main_option("script_location", MIGRATIONS)
        with self.engine.begin() as conn:
            cfg.attributes["connection"] = conn
            command.upgrade(cfg, "head")
        with self.transaction() as conn:
            if conn.execute(select(placement_lock.c.id)).first() is None:
                conn.execute(insert(placement_lock).values(id=1, holder=None, updated_at=0.0))

    @contextmanager
    def transaction(self) -> Iterator[Connection]:
        """A read-write transaction, committed on success, rolled back on any exception."""
        with self.engine.begin() as conn:
            yield conn

    @contextmanager
    def reading(self) -> Iterator[Connection]:
        """A read-only view; on SQLite it takes no write lock."""
        with self.engine.connect() as conn:
            if self.is_sqlite:
                conn = conn.execution_options(shoal_read_only=True)
            yield conn
            conn.rollback()

    def dispose(self) -> None:
        self.engine.dispose()


def _private_sqlite(path: Path) -> None:
    """The database file (and so its WAL and SHM, which SQLite creates with the database's
    mode) readable by its owner only, made before SQLite would make it 0644."""
    private_dir(path.parent, ours=False)
    private_file(path)
    for suffix in ("-wal", "-shm", "-journal"):
        narrow(path.with_name(path.name + suffix))


def _sqlite_on_connect(dbapi_conn: Any, _record: Any) -> None:
    # Let SQLAlchemy, not the driver, decide when transactions begin (see _sqlite_on_begin).
    dbapi_conn.isolation_level = None
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.execute("PRAGMA busy_timeout=30000")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.close()


def _sqlite_on_begin(conn: Connection) -> None:
    if conn.get_execution_options().get("shoal_read_only"):
        conn.exec_driver_sql("BEGIN")
    else:
        conn.exec_driver_sql("BEGIN IMMEDIATE")
