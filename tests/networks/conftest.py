"""Fixtures for the network tests: the end-to-end ones (a real Shoal server per test), and a
sweep that stops every HAProxy and drops every nftables table a test's homes made, whatever
the test's outcome (a failed test must not leave filters on the machine's loopback)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from shoal.providers.local import netfilter
from tests.e2e.conftest import pg_url, start_server

__all__ = ["pg_url", "start_server", "sweep_networking"]


@pytest.fixture(autouse=True)
def sweep_networking(tmp_path: Path) -> Iterator[None]:
    yield
    clusters: set[str] = set()
    for directory in tmp_path.rglob("networking"):
        for pidfile in directory.glob("*/lb-*.pid"):
            with contextlib.suppress(OSError, ValueError, IndexError):
                os.kill(int(pidfile.read_text().split()[0]), signal.SIGKILL)
        clusters.update(d.name.lower().replace("-", "_") for d in directory.iterdir())
    if clusters:
        for table in asyncio.run(netfilter.tables("shoal_")):
            if any(table.endswith("_" + c) for c in clusters):
                asyncio.run(netfilter.delete(table))
