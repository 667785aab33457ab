"""Fixtures: one real Neutron + Octavia pair per test module (see peers.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.netpeers.peers import NetCloud, net_cloud


@pytest.fixture(scope="module")
def netcloud(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NetCloud]:
    with net_cloud(tmp_path_factory.mktemp("netcloud")) as cloud:
        yield cloud
