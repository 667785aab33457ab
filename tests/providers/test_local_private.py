"""The local provider keeps its records, slots, logs and volume metadata private (0600 files,
0700 directories), whatever the umask (issue 9, point 7)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from shoal.providers.local import LocalProvider
from tests.store.test_private_files import exposed

from .support import server_request, volume_request


@pytest.fixture(autouse=True)
def open_umask() -> Iterator[None]:
    old = os.umask(0o022)
    yield
    os.umask(old)


async def test_nothing_under_the_local_home_is_readable_by_others(
    local: LocalProvider, local_home: Path
) -> None:
    server = await local.create_server(server_request("p", "az1-host1"))
    volume = await local.create_volume(volume_request("p-data", "az1-host1"))
    await local.attach_volume(volume.id, server.id)
    await local.fail_host("az2-host3")
    await local.recover_host("az2-host3")
    assert (local_home / "resources").is_dir()
    assert exposed(local_home) == []
