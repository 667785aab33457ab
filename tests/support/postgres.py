"""A fresh PostgreSQL database per test, on the developers' server at 127.0.0.1:5432."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg

ADMIN_URL = "postgresql://postgres@127.0.0.1:5432/test"


@contextmanager
def fresh_database() -> Iterator[str]:
    """Create `shoal_t_<uuid>`; yield its SQLAlchemy URL; drop it (WITH (FORCE)) afterwards."""
    name = f"shoal_t_{uuid.uuid4().hex}"
    with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}"
    finally:
        with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
