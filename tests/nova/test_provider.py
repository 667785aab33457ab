"""The openstack provider against a real Nova: discovery, pinned creates, idempotency, errors.

Each call goes through openstacksdk (`auth_type: none` with a compute endpoint override) to
Nova's real API, scheduler and Placement; every answer is checked against what Nova itself
reports.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from tests.nova.conftest import Peer

from shoal.model.enums import NodeKind
from shoal.model.inventory import Flavor, Inventory
from shoal.model.profile import ServerProfile
from shoal.providers.base import ResourceState, ServerRequest
from shoal.providers.errors import PermanentError, ResourceGone
from shoal.providers.openstack.provider import OpenStackProvider
from shoal.providers.registry import make_provider


def nova_get(nova: Peer, path: str, microversion: str = "2.74") -> Any:
    r = httpx.get(
        f"{nova.url}{path}",
        headers={"OpenStack-API-Version": f"compute {microversion}"},
        timeout=30,
    )
    r.raise_for_status()
    return r.json()


@pytest.fixture
async def provider(nova: Peer, tmp_path: Any) -> AsyncIterator[OpenStackProvider]:
    p = make_provider(
        "openstack",
        home=tmp_path,
        options={
            "auth_type": "none",
            "compute_endpoint": nova.url,
            "network": "none",
            "poll_interval_s": 0.2,
            "boot_timeout_s": 120,
        },
    )
    assert isinstance(p, OpenStackProvider)
    try:
        yield p
    finally:
        await p.close()


def request(inv: Inventory, host: str, zone: str, flavor: str = "m1.tiny") -> ServerRequest:
    f = inv.flavor(flavor)
    image = inv.image("cirros")
    assert f is not None and image is not None
    key = str(uuid.uuid4())
    return ServerRequest(key, f"t-{key[:8]}", "c-test", host, zone, ServerProfile(f, image))


async def test_inventory_is_what_nova_has(provider: OpenStackProvider, nova: Peer) -> None:
    assert await provider.mode() == "admin"
    inv = await provider.inventory()
    zones = {h.name: h.zone for h in inv.hosts}
    assert zones == {
        "host001": "az1",
        "host003": "az1",
        "host005": "az1",
        "host002": "az2",
        "host004": "az2",
        "host006": "az2",
    }
    assert {(h.vcpus, h.ram_mb, h.disk_gb) for h in inv.hosts} == {(16, 65536, 1000)}
    assert inv.flavor("m1.small") == Flavor("2", "m1.small", 1, 2048, 20)
    cirros = inv.image("cirros")
    assert cirros is not None
    assert cirros.id in {i["id"] for i in nova_get(nova, "/images", "2.35")["images"]}
    # No block-storage service here: volumes get no room, so placing one fails up front.
    assert {h.volume_gb for h in inv.hosts} == {0}


async def test_a_pinned_server_lands_on_its_host_and_a_retry_finds_it(
    provider: OpenStackProvider, nova: Peer
) -> None:
    inv = await provider.inventory()
    req = request(inv, "host004", "az2")
    made = await provider.create_server(req)
    assert made.state is ResourceState.ACTIVE
    server = nova_get(nova, f"/servers/{made.id}")["server"]
    assert server["OS-EXT-SRV-ATTR:host"] == "host004"
    assert server["OS-EXT-AZ:availability_zone"] == "az2"
    assert "shoal-node:" + req.key in server["tags"]
    assert server["metadata"]["shoal_cluster"] == "c-test"

    again = await provider.create_server(req)
    assert again.id == made.id
    listed = await provider.list_resources("c-test")
    assert [r.id for r in listed if r.key == req.key] == [made.id]

    rebooted = await provider.reboot(made.id)
    assert rebooted.state is ResourceState.ACTIVE and rebooted.id == made.id

    await provider.delete(NodeKind.SERVER, made.id)
    assert (await provider.get(NodeKind.SERVER, made.id)).state is ResourceState.MISSING
    await provider.delete(NodeKind.SERVER, made.id)  # already gone: fine
    with pytest.raises(ResourceGone):
        await provider.reboot(made.id)


async def test_no_valid_host_is_permanent_with_novas_words_and_leaves_nothing(
    provider: OpenStackProvider, nova: Peer
) -> None:
    inv = await provider.inventory()
    huge = Flavor("9", "huge", 64, 1024, 1)  # more vcpus than any host has
    cirros = inv.image("cirros")
    assert cirros is not None
    # Nova has no such flavor: it says so, and Shoal reports it as permanent.
    key = str(uuid.uuid4())
    bad = ServerRequest(key, "bad", "c-test", "host001", "az1", ServerProfile(huge, cirros))
    with pytest.raises(PermanentError) as e:
        await provider.create_server(bad)
    assert "rejected (400)" in str(e.value) and e.value.fault

    # A host full for the flavor: three 8-vcpu servers on a 16-vcpu host.
    reqs = [request(inv, "host005", "az1", "m1.xlarge") for _ in range(3)]
    made = [await provider.create_server(r) for r in reqs[:2]]
    with pytest.raises(PermanentError) as e:
        await provider.create_server(reqs[2])
    assert "no valid host" in str(e.value).lower()
    assert e.value.fault and "No valid host" in e.value.fault
    left = {r.key for r in await provider.list_resources("c-test")}
    assert reqs[2].key not in left
    for m in made:
        await provider.delete(NodeKind.SERVER, m.id)
