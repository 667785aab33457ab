"""Fixtures for CLI tests: a `shoal` on a private home, with the sim or the local provider.

Without a URL the first command starts the home's background Shoal (a detached server); every
background server a test started under its tmp_path is stopped at teardown, and whatever a
local-provider test leaves running is swept.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from shoal.cli import background
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
        background.stop(home)  # first: its manager would bring swept nodes back
        sweep_local_nodes(home)
