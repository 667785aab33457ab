"""Fixtures for `shoal import senlin`: a fresh Senlin 16 database on MariaDB (Senlin's own
schema and DB API, tests/senlin_import/harness.py) and a Shoal over sim whose servers are the
ones Senlin's rows name."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.senlin_import.harness import SenlinDb, fresh_senlin_db


@pytest.fixture
def senlin_db(tmp_path: Path) -> Iterator[SenlinDb]:
    db = fresh_senlin_db(tmp_path)
    try:
        yield db
    finally:
        db.drop()
