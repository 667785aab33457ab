"""Real databases for tests: a SQLite file, or a fresh PostgreSQL database dropped afterwards.

PostgreSQL runs at 127.0.0.1:5432 (trust auth) on developers' machines and in CI; these
fixtures use it, never skip it.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg

PG_ADMIN = "postgresql://postgres@127.0.0.1:5432/test"


@contextmanager
def fresh_postgres() -> Iterator[str]:
    name = f"shoal_t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}"
    finally:
        with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextmanager
def database_url(kind: str, tmp: Path) -> Iterator[str]:
    if kind == "sqlite":
        yield f"sqlite:///{tmp / 'shoal.db'}"
    else:
        with fresh_postgres() as url:
            yield url
