"""A fresh PostgreSQL database per test, on the developers' server at 127.0.0.1:5432."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from tests.databases import PG_ADMIN, fresh_postgres

ADMIN_URL = PG_ADMIN


@contextmanager
def fresh_database() -> Iterator[str]:
    """Create `shoal_t_<uuid>` (empty: the server migrates it); yield its SQLAlchemy URL; drop
    it (WITH (FORCE)) afterwards, in the background (tests/databases.py)."""
    with fresh_postgres() as url:
        yield url
