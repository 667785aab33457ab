"""Active management on the sim provider: reboot, rebuild and host loss, on a fake clock."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from shoal.model.catalogs import CIRROS, CLASSIC_FLAVORS, default_inventory
from shoal.model.enums import NodeKind
from shoal.model.inventory import Host, Image, Inventory
from shoal.providers.base import HostAdmin, HostState, ResourceState
from shoal.providers.errors import PermanentError, ResourceGone, TemporaryError
from shoal.providers.sim import SimProvider

from .support import profile, server_request, volume_request
from .test_sim import FakeSleep, one_host, tiny

pytestmark = pytest.mark.asyncio

UBUNTU = Image("img-ubuntu", "ubuntu", min_disk_gb=2)
TINY, SMALL, MEDIUM = CLASSIC_FLAVORS[0], CLASSIC_FLAVORS[1], CLASSIC_FLAVORS[2]


def big_hosts(n: int, vcpus: int) -> Inventory:
    """`n` hosts in one zone where only vcpus can run short."""
    hosts = tuple(
        Host(f"h{i}", "az1", vcpus=vcpus, ram_mb=vcpus * 8192, disk_gb=vcpus * 200, volume_gb=100)
        for i in range(1, n + 1)
    )
    return Inventory(hosts=hosts, flavors=CLASSIC_FLAVORS, images=(CIRROS, UBUNTU))


async def test_reboot_takes_the_create_latency_and_keeps_the_address() -> None:
    sleep = FakeSleep(gated=True)
    sim = SimProvider(default_inventory(), create_latency_s=3.0, clock_sleep=sleep)
    sleep.gate.set()
    server = await sim.create_server(server_request("r", "az1-host1"))
    sleep.gate.clear()

    reboot = asyncio.create_task(sim.reboot(server.id))
    while len(sleep.calls) < 2:
        await asyncio.sleep(0)
    assert (await sim.get(NodeKind.SERVER, server.id)).state is ResourceState.BUILDING
    same_key = asyncio.create_task(sim.create_server(server_request("r", "az1-host1")))
    await asyncio.sleep(0)
    assert not same_key.done()  # a create with its key waits for the reboot
    sleep.gate.set()
    rebooted, created = await asyncio.gather(reboot, same_key)
    assert (rebooted.id, rebooted.address) == (server.id, server.address)
    assert rebooted.state is created.state is ResourceState.ACTIVE
    assert sleep.calls == [3.0, 3.0]


async def test_reboot_recovers_a_crashed_server_and_refuses_a_lost_one() -> None:
    sim = SimProvider(default_inventory())
    server = await sim.create_server(server_request("s", "az1-host1"))
    volume = await sim.create_volume(volume_request("v", "az1-host1"))
    await sim.kill_node_process(server.id)
    assert (await sim.reboot(server.id)).state is ResourceState.ACTIVE
    with pytest.raises(ResourceGone):
        await sim.reboot("nope")
    with pytest.raises(ResourceGone):
        await sim.reboot(volume.id)
    await sim.fail_host("az1-host1")
    with pytest.raises(ResourceGone, match="down"):
        await sim.reboot(server.id)
    with pytest.raises(ResourceGone, match="down"):
        await sim.rebuild(server.id, profile())


async def test_a_failed_reboot_leaves_the_server_in_error() -> None:
    sim = SimProvider(default_inventory())
    server = await sim.create_server(server_request("s", "az1-host1"))
    sim.failure_rate = 1.0
    with pytest.raises(TemporaryError, match="simulated failure"):
        await sim.reboot(server.id)
    assert (await sim.get(NodeKind.SERVER, server.id)).state is ResourceState.ERROR
    sim.failure_rate = 0.0
    assert (await sim.reboot(server.id)).state is ResourceState.ACTIVE


async def test_a_delete_during_a_reboot_wins() -> None:
    sleep = FakeSleep(gated=True)
    sim = SimProvider(default_inventory(), create_latency_s=1.0, clock_sleep=sleep)
    sleep.gate.set()
    server = await sim.create_server(server_request("s", "az1-host1"))
    sleep.gate.clear()
    reboot = asyncio.create_task(sim.reboot(server.id))
    while len(sleep.calls) < 2:
        await asyncio.sleep(0)
    await sim.delete(NodeKind.SERVER, server.id)
    sleep.gate.set()
    with pytest.raises(ResourceGone, match="deleted"):
        await reboot


async def test_rebuild_changes_flavor_and_image_in_place() -> None:
    sim = SimProvider(big_hosts(1, vcpus=4))
    server = await sim.create_server(tiny("s"))
    volume = await sim.create_volume(volume_request("v", "h1"))
    await sim.attach_volume(volume.id, server.id)
    await sim.create_server(tiny("other"))

    rebuilt = await sim.rebuild(server.id, profile(UBUNTU, MEDIUM))

    assert (rebuilt.id, rebuilt.address, rebuilt.state) == (
        server.id,
        server.address,
        ResourceState.ACTIVE,
    )
    assert rebuilt.details == {"flavor": "m1.medium", "image": "ubuntu"}
    assert (await sim.get(NodeKind.VOLUME, volume.id)).attached_to == server.id
    # 2 + 1 of 4 vcpus are taken: a third tiny fits, a large rebuild does not.
    with pytest.raises(PermanentError, match=r"no valid host.*vcpus"):
        await sim.rebuild(server.id, profile(UBUNTU, CLASSIC_FLAVORS[3]))
    assert (await sim.get(NodeKind.SERVER, server.id)).details["flavor"] == "m1.medium"
    await sim.create_server(tiny("third"))
    with pytest.raises(PermanentError, match="vcpus"):
        await sim.create_server(tiny("fourth"))
    # Back to a small flavor frees the difference.
    await sim.rebuild(server.id, profile(CIRROS, SMALL))
    await sim.create_server(tiny("fourth"))

    with pytest.raises(PermanentError, match="ghost"):
        await sim.rebuild(server.id, profile(Image("x", "ghost")))
    with pytest.raises(ResourceGone):
        await sim.rebuild("nope", profile())


async def test_reboot_and_rebuild_many_at_once() -> None:
    sleep = FakeSleep()
    sim = SimProvider(big_hosts(4, vcpus=64), create_latency_s=2.0, clock_sleep=sleep)
    servers = [await sim.create_server(tiny(f"n{i}", host=f"h{i % 4 + 1}")) for i in range(40)]
    results = await asyncio.gather(
        *(sim.reboot(s.id) for s in servers[:20]),
        *(sim.rebuild(s.id, profile(UBUNTU, TINY)) for s in servers[20:]),
        *(sim.reboot(s.id) for s in servers[:5]),
    )
    assert all(r.state is ResourceState.ACTIVE for r in results)
    assert [r.address for r in results[:40]] == [s.address for s in servers]
    assert len(sleep.calls) == 40 + 45


async def test_fail_host_returns_its_resources_and_hosts_reports_it() -> None:
    sim = SimProvider(default_inventory())
    assert isinstance(sim, HostAdmin)
    lost = await sim.create_server(server_request("l", "az1-host2"))
    volume = await sim.create_volume(volume_request("v", "az1-host2"))
    kept = await sim.create_server(server_request("k", "az2-host2"))

    assert await sim.fail_host("az1-host2") == [lost.id, volume.id]
    assert await sim.fail_host("az1-host2") == [lost.id, volume.id]
    listed = {r.id: r.state for r in await sim.list_resources("c1")}
    assert listed == {
        lost.id: ResourceState.MISSING,
        volume.id: ResourceState.MISSING,
        kept.id: ResourceState.ACTIVE,
    }
    states = {h.name: h for h in await sim.hosts()}
    assert states["az1-host2"] == HostState("az1-host2", "az1", True, 2)
    assert states["az2-host2"] == HostState("az2-host2", "az2", False, 1)
    assert states["az1-host1"].resources == 0
    with pytest.raises(PermanentError, match="no host"):
        await sim.fail_host("nowhere")

    await sim.recover_host("az1-host2")
    assert "az1-host2" in [h.name for h in (await sim.inventory()).hosts]
    assert (await sim.get(NodeKind.SERVER, lost.id)).state is ResourceState.ERROR
    assert (await sim.get(NodeKind.VOLUME, volume.id)).state is ResourceState.ACTIVE
    assert (await sim.reboot(lost.id)).state is ResourceState.ACTIVE


@pytest.mark.parametrize("stored", ["memory", "sqlite"])
async def test_failing_half_the_hosts_of_five_thousand_resources(
    tmp_path: Path, stored: str
) -> None:
    """What failing ten of twenty busy hosts at once does; how fast is benchmarks/sim_hosts.py."""
    sim = SimProvider(
        big_hosts(20, vcpus=250), state_path=tmp_path / "sim.db" if stored == "sqlite" else None
    )
    try:
        servers = await asyncio.gather(
            *(sim.create_server(tiny(f"n{i}", host=f"h{i % 20 + 1}")) for i in range(5000))
        )
        failing = [f"h{i}" for i in range(1, 11)]
        expected = {s.id for s in servers if s.host in failing}

        lost = await asyncio.gather(*(sim.fail_host(h) for h in failing))

        assert {i for ids in lost for i in ids} == expected and len(expected) == 2500
        states = [r.state for r in await sim.list_resources("c1")]
        assert states.count(ResourceState.MISSING) == states.count(ResourceState.ACTIVE) == 2500
        assert [h.name for h in (await sim.inventory()).hosts] == [f"h{i}" for i in range(11, 21)]
        hosts = await sim.hosts()
        assert [h.failed for h in hosts] == [True] * 10 + [False] * 10
        assert {h.resources for h in hosts} == {250}
        await asyncio.gather(*(sim.recover_host(h) for h in failing))
        states = [r.state for r in await sim.list_resources("c1")]
        assert states.count(ResourceState.ERROR) == states.count(ResourceState.ACTIVE) == 2500
    finally:
        await sim.close()


async def test_reboot_and_rebuild_through_the_state_file(tmp_path: Path) -> None:
    path = tmp_path / "sim.db"
    a = SimProvider(one_host(vcpus=4), state_path=path)
    b = SimProvider(one_host(vcpus=4), state_path=path)
    try:
        server = await a.create_server(tiny("s"))
        await b.kill_node_process(server.id)
        assert (await a.get(NodeKind.SERVER, server.id)).state is ResourceState.ERROR
        assert (await a.reboot(server.id)).state is ResourceState.ACTIVE
        rebuilt = await b.rebuild(server.id, profile(CIRROS, MEDIUM))
        assert rebuilt.address == server.address
        assert (await a.get(NodeKind.SERVER, server.id)).details["flavor"] == "m1.medium"
        other = await a.create_server(tiny("t"))  # 2 + 1 of 4
        with pytest.raises(PermanentError, match="vcpus"):
            await b.rebuild(server.id, profile(CIRROS, CLASSIC_FLAVORS[3]))
        assert await a.fail_host("h1") == [server.id, other.id]
        assert [h.failed for h in await b.hosts()] == [True]
    finally:
        await a.close()
        await b.close()


async def test_the_state_file_reuses_the_lowest_free_address(tmp_path: Path) -> None:
    sim = SimProvider(one_host(vcpus=8), state_path=tmp_path / "sim.db")
    try:
        a, b, c = [await sim.create_server(tiny(k)) for k in "abc"]
        assert [a.address, b.address, c.address] == ["10.1.1.2", "10.1.1.3", "10.1.1.4"]
        await sim.delete(NodeKind.SERVER, b.id)
        assert (await sim.create_server(tiny("d"))).address == "10.1.1.3"  # the gap
        await sim.delete(NodeKind.SERVER, a.id)
        assert (await sim.create_server(tiny("e"))).address == "10.1.1.2"  # below the rest
        assert (await sim.create_server(tiny("f"))).address == "10.1.1.5"  # after the rest
    finally:
        await sim.close()
