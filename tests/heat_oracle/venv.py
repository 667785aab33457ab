"""Heat 27 in its own cached venv: the oracle the differential test reads templates with.

openstack-heat pins its own half of OpenStack (oslo.*, the clients, eventlet), so it cannot
share Shoal's venv; it is built once under the test cache and reused, like the other peers'.
"""

from __future__ import annotations

from pathlib import Path

from tests.support.venvs import cache_root, cached_venv

HEAT_PINS = ("openstack-heat==27.0.1",)


def heat_venv() -> Path:
    return cached_venv(cache_root() / "heat-27", HEAT_PINS)
