"""Fixtures for provider tests: a local provider on a private home and port, always cleaned up.

Every process a test starts under `local_home` is stopped at teardown, even when the test failed
halfway and even when it made its own providers on that home: a provider's own `purge`, then a
sweep that SIGKILLs any recorded process still carrying its key.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from shoal.providers.local import LocalProvider
from shoal.providers.local.options import LocalOptions

from .support import free_port, sweep


@pytest_asyncio.fixture
async def local_home(tmp_path: Path) -> AsyncIterator[Path]:
    home = tmp_path / "local"
    try:
        yield home
    finally:
        try:
            if (home / "resources").is_dir():
                await LocalProvider(home).purge()
        finally:
            sweep(home)


@pytest.fixture
def port() -> int:
    return free_port()


@pytest_asyncio.fixture
async def local(local_home: Path, port: int) -> AsyncIterator[LocalProvider]:
    yield LocalProvider(
        local_home, None, LocalOptions(port=port, boot_timeout_s=30.0, stop_grace_s=2.0)
    )
