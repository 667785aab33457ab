"""Fixtures for CLI tests: a `shoal` on a private home, with the sim or the local provider.

The sim provider keeps its cloud in a SQLite file under the home, so the simulated resources
outlive each command (every embedded command is its own process). Whatever a local-provider
test leaves running is swept at teardown.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.support import Shoal
from tests.support.server import free_port, sweep_local_nodes


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def shoal(home: Path) -> Shoal:
    """Embedded Shoal on the sim provider: fast, and the provider does not matter."""
    return Shoal(home, provider="sim", provider_options={"state_path": "sim.db"})


@pytest.fixture
def local_shoal(home: Path) -> Iterator[Shoal]:
    """Embedded Shoal on the default local provider, on a free port; nodes swept afterwards."""
    try:
        yield Shoal(home, provider="local", provider_options={"port": free_port()})
    finally:
        sweep_local_nodes(home)
