"""Fixtures: one real Neutron + Octavia pair for the whole session (see peers.py): starting
them is most of what these tests cost, and every test works in a cluster of its own."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.netpeers.peers import NetCloud, net_cloud


@pytest.fixture(scope="session")
def netcloud(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NetCloud]:
    with net_cloud(tmp_path_factory.mktemp("netcloud")) as cloud:
        yield cloud
