"""Senlin 16 in its own cached venv, for writing rows through Senlin's own DB API.

Senlin pins its own half of OpenStack (oslo.db, SQLAlchemy 1.4), so it cannot share Shoal's
venv; it is built once under the test cache and reused, like the other peers' venvs.
"""

from __future__ import annotations

from pathlib import Path

from tests.support.venvs import cache_root, cached_venv

SENLIN_PINS = ("senlin==16.0.0", "PyMySQL")


def senlin_venv() -> Path:
    return cached_venv(cache_root() / "senlin-16", SENLIN_PINS)
