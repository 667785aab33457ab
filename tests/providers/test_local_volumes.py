"""The local provider's volumes: directories with a budget, visible in the server that has them."""

from __future__ import annotations

from pathlib import Path

import pytest

from shoal.model.enums import NodeKind
from shoal.providers.base import ResourceState
from shoal.providers.errors import PermanentError, ResourceGone
from shoal.providers.local import LocalProvider

from .support import get_json, server_request, volume_request

pytestmark = pytest.mark.asyncio


async def test_an_attached_volume_shows_in_the_server(local: LocalProvider) -> None:
    server = await local.create_server(server_request("web-1", "az1-host1"))
    volume = await local.create_volume(volume_request("data-1", "az1-host1", size_gb=2))
    assert volume.state is ResourceState.ACTIVE
    path = Path(volume.details["path"])
    assert path.is_dir() and path.parent == local.home / "volumes"
    assert volume.details["size_gb"] == "2" and volume.details["used_bytes"] == "0"

    await local.attach_volume(volume.id, server.id)
    await local.attach_volume(volume.id, server.id)  # again: a no-op
    (path / "blob").write_bytes(b"x" * 1234)

    view = await get_json(server.address or "")
    assert view["volumes"] == [
        {"name": "data-1", "path": str(path), "size_gb": 2, "used_bytes": 1234}
    ]
    now = await local.get(NodeKind.VOLUME, volume.id)
    assert now.attached_to == server.id
    assert now.details["used_bytes"] == "1234"


async def test_volume_create_is_idempotent(local: LocalProvider) -> None:
    a = await local.create_volume(volume_request("v", "az2-host1"))
    b = await local.create_volume(volume_request("v", "az2-host1"))
    assert a.id == b.id
    assert len(list((local.home / "volumes").iterdir())) == 1


async def test_a_volume_in_use_cannot_go_to_another_server(local: LocalProvider) -> None:
    s1 = await local.create_server(server_request("s1", "az1-host1"))
    s2 = await local.create_server(server_request("s2", "az1-host2"))
    volume = await local.create_volume(volume_request("v", "az1-host1"))
    await local.attach_volume(volume.id, s1.id)
    with pytest.raises(PermanentError, match="in use"):
        await local.attach_volume(volume.id, s2.id)
    with pytest.raises(ResourceGone):
        await local.attach_volume("vol-nope", s1.id)


async def test_deleting_a_volume_removes_its_directory_and_link(local: LocalProvider) -> None:
    server = await local.create_server(server_request("s", "az1-host1"))
    volume = await local.create_volume(volume_request("v", "az1-host1"))
    await local.attach_volume(volume.id, server.id)
    await local.delete(NodeKind.VOLUME, volume.id)
    assert not Path(volume.details["path"]).exists()
    assert (await get_json(server.address or ""))["volumes"] == []
    assert (await local.get(NodeKind.VOLUME, volume.id)).state is ResourceState.MISSING
    await local.delete(NodeKind.VOLUME, volume.id)


async def test_deleting_a_server_detaches_its_volumes(local: LocalProvider) -> None:
    server = await local.create_server(server_request("s", "az1-host1"))
    volume = await local.create_volume(volume_request("v", "az1-host1"))
    await local.attach_volume(volume.id, server.id)
    await local.delete(NodeKind.SERVER, server.id)
    now = await local.get(NodeKind.VOLUME, volume.id)
    assert now.state is ResourceState.ACTIVE and now.attached_to is None
    assert Path(volume.details["path"]).is_dir()
