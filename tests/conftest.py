"""Fixtures shared by every test package: databases on both backends."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from shoal.cli import background
from shoal.store.database import Database
from tests import databases
from tests.support.server import release_local_homes


@pytest.fixture(params=["sqlite", "postgresql"])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Database]:
    """A migrated, empty store on SQLite and on PostgreSQL (a copy of the session's migrated
    template; `migrate()` runs again, as a server's start would, and finds nothing to do)."""
    with databases.migrated_database_url(request.param, tmp_path) as url:
        database = Database(url)
        database.migrate()
        try:
            yield database
        finally:
            database.dispose()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    databases.finish()


@pytest.fixture(autouse=True)
def _stop_background_servers(tmp_path: Path) -> Iterator[None]:
    """Stop each background Shoal a test's commands started (one per home under tmp_path):
    any test that runs `shoal` without `--url` starts one, and it must not outlive the test.
    Then every local provider's home under tmp_path is swept and gives its loopback addresses
    back to the machine (tests in other workers take them next)."""
    yield
    for state in tmp_path.rglob(background.STATE_FILE):
        background.stop(state.parent)
    release_local_homes(tmp_path)
