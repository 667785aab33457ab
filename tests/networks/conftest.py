"""Fixtures for the network tests: the end-to-end ones (a real Shoal server per test), and a
sweep that stops every HAProxy and drops every nftables table a test's homes made, whatever
the test's outcome (a failed test must not leave filters on the machine's loopback)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import pg_url, start_server
from tests.networks.support import sweep

__all__ = ["pg_url", "start_server", "sweep_networking"]


@pytest.fixture(autouse=True)
def sweep_networking(tmp_path: Path) -> Iterator[None]:
    yield
    sweep(tmp_path)
