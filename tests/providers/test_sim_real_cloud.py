"""The sim's real-cloud mode: a create the cloud sees twice makes two servers unless the
client finds the first, a failed build stays behind in ERROR, and the key is only metadata —
so a duplicate in the chaos suite is Shoal's own, not impossible by construction."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from shoal.model.catalogs import CIRROS, CLASSIC_FLAVORS
from shoal.model.inventory import Host, Inventory
from shoal.providers.base import ResourceState
from shoal.providers.errors import TemporaryError
from shoal.providers.sim import SimProvider

from .support import server_request


def inventory() -> Inventory:
    host = Host("h1", "az1", vcpus=8, ram_mb=65536, disk_gb=1000, volume_gb=100)
    return Inventory(hosts=(host,), flavors=CLASSIC_FLAVORS, images=(CIRROS,))


@pytest.mark.parametrize("shared", [False, True])
async def test_a_fresh_retry_makes_a_second_server_and_a_search_finds_the_first(
    tmp_path: Path, shared: bool
) -> None:
    sim = SimProvider(
        inventory(), real_cloud=True, state_path=tmp_path / "cloud.db" if shared else None
    )
    req = server_request("node-1", "h1")
    first = await sim.create_server(dataclasses.replace(req, fresh=True))
    again = await sim.create_server(req)  # not fresh: the client searches by key first
    assert again.id == first.id and again.key == "node-1"
    await sim.create_server(dataclasses.replace(req, fresh=True))  # a client that did not look
    found = await sim.list_resources("c1")
    assert [r.key for r in found] == ["node-1", "node-1"]
    assert len({r.id for r in found}) == 2
    await sim.close()


@pytest.mark.parametrize("shared", [False, True])
async def test_the_search_by_key_finds_only_that_keys_copies(tmp_path: Path, shared: bool) -> None:
    """The search is an index range on the stored key: `node-1`'s copies, not `node-10`'s (a
    key that merely starts with it) and not another cluster's."""
    sim = SimProvider(
        inventory(), real_cloud=True, state_path=tmp_path / "cloud.db" if shared else None
    )
    ten = await sim.create_server(dataclasses.replace(server_request("node-10", "h1"), fresh=True))
    one = await sim.create_server(server_request("node-1", "h1"))
    assert one.id != ten.id
    assert (await sim.create_server(server_request("node-1", "h1"))).id == one.id
    assert (await sim.create_server(server_request("node-10", "h1"))).id == ten.id
    assert sorted(r.key for r in await sim.list_resources("c1")) == ["node-1", "node-10"]
    await sim.close()


async def test_a_failed_build_stays_in_error_and_a_retry_restarts_it() -> None:
    sim = SimProvider(inventory(), real_cloud=True, failure_rate=1.0)
    req = server_request("node-1", "h1")
    with pytest.raises(TemporaryError):
        await sim.create_server(dataclasses.replace(req, fresh=True))
    (left,) = await sim.list_resources("c1")
    assert left.state is ResourceState.ERROR
    sim.failure_rate = 0.0
    again = await sim.create_server(req)
    assert again.id == left.id and again.state is ResourceState.ACTIVE
    assert len(await sim.list_resources("c1")) == 1
