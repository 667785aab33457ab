"""Real databases for tests: a SQLite file, or a fresh PostgreSQL database dropped afterwards.

PostgreSQL runs at 127.0.0.1:5432 (trust auth) on developers' machines and in CI; these
fixtures use it, never skip it.

Most tests want a store already at the newest schema (the `db` fixture). Running every
migration for each of them cost about 0.5 s on PostgreSQL and 0.2 s on SQLite, some 3 minutes
of the suite; `migrated_database_url` instead copies a template migrated once per test session
(`CREATE DATABASE ... TEMPLATE`, or a copy of the SQLite file), which is the same schema, made by
the same migrations. Every PostgreSQL database made here is dropped on a background thread, so
a test does not wait for its database's removal (up to a second on a loaded machine);
`finish()` (at the end of the session, tests/conftest.py) waits for them and drops the
template.

Under pytest-xdist every worker is a process of its own with its own templates (named after the
worker, `shoal_t_tmpl_gw0_...`): `CREATE DATABASE ... TEMPLATE` refuses a template another
session is connected to or copying from, so a template shared between workers would fail their
copies at random. Every name carries a uuid, so workers, and other runs of the suite on the
same PostgreSQL, never meet; each worker's `finish()` drops only what that worker made.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import psycopg

from shoal.store.database import Database

PG_ADMIN = "postgresql://postgres@127.0.0.1:5432/test"


def _pg_url(name: str) -> str:
    return f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}"


def _drop(name: str) -> None:
    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextmanager
def fresh_postgres(template: str | None = None) -> Iterator[str]:
    """An empty database (no schema), or a copy of `template`; dropped after the test, in the
    background."""
    name = f"shoal_t_{uuid.uuid4().hex[:12]}"
    copied = f' TEMPLATE "{template}"' if template else ""
    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"{copied}')
    try:
        yield _pg_url(name)
    finally:
        _templates.drop_later(name)


@contextmanager
def database_url(kind: str, tmp: Path) -> Iterator[str]:
    if kind == "sqlite":
        yield f"sqlite:///{tmp / 'shoal.db'}"
    else:
        with fresh_postgres() as url:
            yield url


class _Templates:
    """The session's migrated templates, made on first use, and its pending drops."""

    def __init__(self) -> None:
        self.postgres: str | None = None
        self.sqlite_dir: Path | None = None
        self.drops: ThreadPoolExecutor | None = None
        self.pending: list[Future[None]] = []

    def postgres_template(self) -> str:
        if self.postgres is None:
            worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
            name = f"shoal_t_tmpl_{worker}_{uuid.uuid4().hex[:12]}"
            with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
                conn.execute(f'CREATE DATABASE "{name}"')
            self.postgres = name  # dropped by finish() even if migrating fails
            _migrate(_pg_url(name))
        return self.postgres

    def sqlite_template(self) -> Path:
        if self.sqlite_dir is None:
            self.sqlite_dir = Path(tempfile.mkdtemp(prefix="shoal-t-tmpl-"))  # per process
            _migrate(f"sqlite:///{self.sqlite_dir / 'shoal.db'}")
        path = self.sqlite_dir / "shoal.db"
        # Closing the last connection checkpointed the WAL into the file; a leftover WAL would
        # hold part of the schema and the copy below would miss it.
        assert not path.with_name("shoal.db-wal").exists(), "template's WAL not checkpointed"
        return path

    def drop_later(self, name: str) -> None:
        if self.drops is None:
            self.drops = ThreadPoolExecutor(max_workers=1, thread_name_prefix="drop-db")
        self.pending.append(self.drops.submit(_drop, name))

    def finish(self) -> None:
        pending, self.pending = self.pending, []
        if self.drops is not None:
            self.drops.shutdown(wait=True)
            self.drops = None
        if self.postgres is not None:
            _drop(self.postgres)
            self.postgres = None
        if self.sqlite_dir is not None:
            shutil.rmtree(self.sqlite_dir, ignore_errors=True)
            self.sqlite_dir = None
        for done in pending:
            done.result()  # a drop that failed is reported, not hidden


def _migrate(url: str) -> None:
    database = Database(url)
    try:
        database.migrate()
    finally:
        database.dispose()


_templates = _Templates()


@contextmanager
def migrated_database_url(kind: str, tmp: Path) -> Iterator[str]:
    """A store at the newest schema: `tmp/shoal.db` for "sqlite", else a fresh PostgreSQL
    database (dropped afterwards, in the background); copied from the session's template."""
    if kind == "sqlite":
        path = tmp / "shoal.db"
        shutil.copyfile(_templates.sqlite_template(), path)
        os.chmod(path, 0o600)
        yield f"sqlite:///{path}"
        return
    with fresh_postgres(_templates.postgres_template()) as url:
        yield url


def finish() -> None:
    """Wait for the background drops and remove the templates (the session's end)."""
    _templates.finish()
