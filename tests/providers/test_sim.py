"""The sim provider: a simulated cloud with real books, driven by a fake clock in tests."""

from __future__ import annotations

import asyncio
import sys
from collections import Counter
from pathlib import Path

import pytest
from prometheus_client import generate_latest

from shoal.model.catalogs import CIRROS, CLASSIC_FLAVORS, default_inventory, synthetic_inventory
from shoal.model.enums import NodeKind
from shoal.model.inventory import Host, Image, Inventory
from shoal.model.profile import ServerProfile
from shoal.providers.base import Provider, ResourceState, ServerRequest
from shoal.providers.errors import PermanentError, ResourceGone, TemporaryError
from shoal.providers.sim import SimProvider
from shoal.providers.sim.metered import spent_seconds
from shoal.telemetry.metrics import PROCESS

from .support import server_request, volume_request

pytestmark = pytest.mark.asyncio


class FakeSleep:
    """Records every sleep; returns at once, or waits for `release` when gated."""

    def __init__(self, gated: bool = False) -> None:
        self.calls: list[float] = []
        self.gate = asyncio.Event()
        if not gated:
            self.gate.set()

    async def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)
        await self.gate.wait()


def one_host(vcpus: int = 2, volume_gb: int = 10) -> Inventory:
    host = Host("h1", "az1", vcpus=vcpus, ram_mb=65536, disk_gb=1000, volume_gb=volume_gb)
    return Inventory(hosts=(host,), flavors=CLASSIC_FLAVORS, images=(CIRROS,))


def tiny(key: str, host: str = "h1", cluster: str = "c1") -> ServerRequest:
    return server_request(key, host, cluster=cluster)


async def test_is_a_provider_with_placement_in_its_addresses() -> None:
    sim = SimProvider(default_inventory())
    assert isinstance(sim, Provider)
    a = await sim.create_server(server_request("a", "az1-host1"))
    b = await sim.create_server(server_request("b", "az1-host1"))
    c = await sim.create_server(server_request("c", "az2-host3"))
    assert [a.address, b.address, c.address] == ["10.1.1.2", "10.1.1.3", "10.2.3.2"]
    assert a.state is ResourceState.ACTIVE and (a.host, a.zone) == ("az1-host1", "az1")


async def test_latency_is_taken_on_the_injected_clock() -> None:
    sleep = FakeSleep(gated=True)
    sim = SimProvider(
        default_inventory(), create_latency_s=5.0, delete_latency_s=2.0, clock_sleep=sleep
    )
    build = asyncio.create_task(sim.create_server(server_request("a", "az1-host1")))
    same = asyncio.create_task(sim.create_server(server_request("a", "az1-host1")))
    while not sleep.calls:
        await asyncio.sleep(0)
    (building,) = await sim.list_resources()
    assert building.state is ResourceState.BUILDING
    assert not build.done() and not same.done()
    sleep.gate.set()
    first, second = await asyncio.gather(build, same)
    assert first.id == second.id and first.state is ResourceState.ACTIVE
    assert sleep.calls == [5.0]
    await sim.delete(NodeKind.SERVER, first.id)
    assert sleep.calls == [5.0, 2.0]
    assert (await sim.get(NodeKind.SERVER, first.id)).state is ResourceState.MISSING


async def test_failures_follow_the_seed() -> None:
    async def outcomes(seed: int) -> list[str]:
        sim = SimProvider(synthetic_inventory(20, 2), failure_rate=0.3, seed=seed)
        out = []
        for i in range(200):
            try:
                await sim.create_server(server_request(f"n{i}", f"h{i % 20 + 1:02d}"))
                out.append("ok")
            except TemporaryError as e:
                assert "simulated failure" in str(e)
                out.append("failed")
        assert len(await sim.list_resources()) == out.count("ok")  # failures leave nothing
        return out

    first, again, other = await outcomes(7), await outcomes(7), await outcomes(8)
    assert first == again
    assert first != other
    assert 30 < Counter(first)["failed"] < 90


async def test_a_failed_create_can_be_retried_with_its_key() -> None:
    sim = SimProvider(one_host(vcpus=1), failure_rate=0.5, seed=1)
    for _ in range(50):
        try:
            server = await sim.create_server(tiny("k"))
            break
        except TemporaryError:
            continue
    else:
        pytest.fail("never succeeded")
    assert server.state is ResourceState.ACTIVE
    assert [r.id for r in await sim.list_resources()] == [server.id]


async def test_creates_are_idempotent_by_key() -> None:
    sim = SimProvider(one_host())
    a, b = await asyncio.gather(sim.create_server(tiny("k")), sim.create_server(tiny("k")))
    c = await sim.create_server(tiny("k"))
    assert a.id == b.id == c.id
    v1 = await sim.create_volume(volume_request("k", "h1"))  # same key, other kind: its own
    v2 = await sim.create_volume(volume_request("k", "h1"))
    assert v1.id == v2.id != a.id
    assert len(await sim.list_resources()) == 2


async def test_capacity_is_accounted_per_host() -> None:
    sim = SimProvider(one_host(vcpus=2, volume_gb=10))
    first = await sim.create_server(tiny("a"))
    await sim.create_server(tiny("b"))
    with pytest.raises(PermanentError, match=r"no valid host.*vcpus"):
        await sim.create_server(tiny("c"))
    await sim.delete(NodeKind.SERVER, first.id)
    await sim.create_server(tiny("c"))

    await sim.create_volume(volume_request("v1", "h1", size_gb=8))
    with pytest.raises(PermanentError, match=r"no valid host.*volume storage"):
        await sim.create_volume(volume_request("v2", "h1", size_gb=3))
    with pytest.raises(PermanentError, match="no valid host"):
        await sim.create_server(tiny("x", host="nowhere"))


async def test_unknown_image_is_permanent() -> None:
    sim = SimProvider(one_host())
    bad = ServerRequest("k", "k", "c1", "h1", "az1", ServerProfile(CLASSIC_FLAVORS[0], CIRROS))
    ghost = ServerProfile(CLASSIC_FLAVORS[0], Image("nope", "ghost"))
    with pytest.raises(PermanentError, match="ghost"):
        await sim.create_server(ServerRequest("k", "k", "c1", "h1", "az1", ghost))
    assert (await sim.create_server(bad)).state is ResourceState.ACTIVE


async def test_ten_thousand_creates() -> None:
    inventory = synthetic_inventory(400, 4, seed=3)
    sim = SimProvider(inventory)
    hosts = [h.name for h in inventory.hosts]
    servers = await asyncio.gather(
        *(sim.create_server(tiny(f"n{i}", host=hosts[i % 400])) for i in range(10_000))
    )
    assert all(s.state is ResourceState.ACTIVE for s in servers)
    assert len({s.id for s in servers}) == 10_000
    assert len({s.address for s in servers}) == 10_000
    assert len(await sim.list_resources("c1")) == 10_000
    per_host = Counter(s.host for s in servers)
    assert all(per_host[h.name] <= h.vcpus for h in inventory.hosts)


async def test_attach_and_detach_on_delete() -> None:
    sim = SimProvider(default_inventory())
    s1 = await sim.create_server(server_request("s1", "az1-host1"))
    s2 = await sim.create_server(server_request("s2", "az1-host1"))
    v = await sim.create_volume(volume_request("v", "az1-host1"))
    assert v.address is None
    await sim.attach_volume(v.id, s1.id)
    await sim.attach_volume(v.id, s1.id)
    with pytest.raises(PermanentError, match="in use"):
        await sim.attach_volume(v.id, s2.id)
    with pytest.raises(ResourceGone):
        await sim.attach_volume("nope", s1.id)
    assert (await sim.get(NodeKind.VOLUME, v.id)).attached_to == s1.id
    await sim.delete(NodeKind.SERVER, s1.id)
    assert (await sim.get(NodeKind.VOLUME, v.id)).attached_to is None
    await sim.attach_volume(v.id, s2.id)


async def test_fail_and_recover_a_host() -> None:
    sim = SimProvider(default_inventory())
    lost = await sim.create_server(server_request("l", "az1-host2"))
    kept = await sim.create_server(server_request("k", "az2-host2"))
    await sim.fail_host("az1-host2")
    assert (await sim.get(NodeKind.SERVER, lost.id)).state is ResourceState.MISSING
    assert (await sim.get(NodeKind.SERVER, kept.id)).state is ResourceState.ACTIVE
    assert "az1-host2" not in [h.name for h in (await sim.inventory()).hosts]
    with pytest.raises(PermanentError, match="no valid host"):
        await sim.create_server(server_request("n", "az1-host2"))
    await sim.recover_host("az1-host2")
    assert (await sim.get(NodeKind.SERVER, lost.id)).state is ResourceState.ERROR
    again = await sim.create_server(server_request("l", "az1-host2"))
    assert again.id == lost.id and again.state is ResourceState.ACTIVE


async def test_persistence_is_shared_through_the_state_file(tmp_path: Path) -> None:
    path = tmp_path / "sim.db"
    a = SimProvider(one_host(vcpus=2), state_path=path)
    b = SimProvider(one_host(vcpus=2), state_path=path)
    try:
        s1 = await a.create_server(tiny("s1"))
        assert (await b.get(NodeKind.SERVER, s1.id)).state is ResourceState.ACTIVE
        assert (await b.create_server(tiny("s1"))).id == s1.id
        s2 = await b.create_server(tiny("s2"))
        assert s2.address == "10.1.1.3"
        with pytest.raises(PermanentError, match="no valid host"):
            await a.create_server(tiny("s3"))
        v = await a.create_volume(volume_request("v", "h1"))
        await b.attach_volume(v.id, s2.id)
        await a.fail_host("h1")
        assert (await b.get(NodeKind.SERVER, s1.id)).state is ResourceState.MISSING
        await b.recover_host("h1")
        await b.delete(NodeKind.SERVER, s2.id)
        assert (await a.get(NodeKind.VOLUME, v.id)).attached_to is None
    finally:
        await a.close()
        await b.close()
    reopened = SimProvider(one_host(vcpus=2), state_path=path)
    try:
        listed = {r.key: r.state for r in await reopened.list_resources()}
        assert listed == {"s1": ResourceState.ERROR, "v": ResourceState.ACTIVE}
        assert (await reopened.create_server(tiny("s3"))).address == "10.1.1.3"
    finally:
        await reopened.close()


async def test_another_process_sees_the_same_cloud(tmp_path: Path) -> None:
    path = tmp_path / "sim.db"
    sim = SimProvider(default_inventory(), state_path=path)
    mine = await sim.create_server(server_request("mine", "az1-host1"))
    script = (
        "import asyncio, sys\n"
        "from pathlib import Path\n"
        "from shoal.model.catalogs import CIRROS, CLASSIC_FLAVORS, default_inventory\n"
        "from shoal.model.profile import ServerProfile\n"
        "from shoal.providers.base import ServerRequest\n"
        "from shoal.providers.sim import SimProvider\n"
        "async def main():\n"
        "    sim = SimProvider(default_inventory(), state_path=Path(sys.argv[1]))\n"
        "    p = ServerProfile(CLASSIC_FLAVORS[0], CIRROS)\n"
        "    req = ServerRequest('theirs', 't', 'c1', 'az1-host1', 'az1', p)\n"
        "    r = await sim.create_server(req)\n"
        "    print(r.address, len(await sim.list_resources()))\n"
        "asyncio.run(main())\n"
    )
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", script, str(path), stdout=asyncio.subprocess.PIPE
    )
    out, _ = await proc.communicate()
    assert proc.returncode == 0
    assert out.decode().split() == ["10.1.1.3", "2"]
    assert {r.key for r in await sim.list_resources()} == {"mine", "theirs"}
    assert mine.address == "10.1.1.2"
    await sim.close()


async def test_concurrent_creates_on_a_shared_file_keep_the_books(tmp_path: Path) -> None:
    """One process's creates in the same turn are reserved in one transaction (batch.py): the
    same answers as one by one: capacity, slots, one resource per key, a cancelled create
    reserves nothing."""
    sim = SimProvider(one_host(vcpus=3), state_path=tmp_path / "sim.db")
    try:
        cancelled = asyncio.ensure_future(sim.create_server(tiny("gone")))
        creates = [sim.create_server(tiny(k)) for k in ("a", "b", "a", "c", "d")]
        await asyncio.sleep(0)
        cancelled.cancel()
        out = await asyncio.gather(*creates, return_exceptions=True)
        refused = [o for o in out if isinstance(o, PermanentError)]
        made = {o.key: o for o in out if not isinstance(o, BaseException)}
        assert [str(e) for e in refused] == [
            "no valid host: host h1 has not enough vcpus (4 needed of 3)"
        ]
        assert sorted(made) == ["a", "b", "c"]
        assert out[0].id == out[2].id  # type: ignore[union-attr]
        assert sorted(r.address or "" for r in made.values()) == [
            "10.1.1.2",
            "10.1.1.3",
            "10.1.1.4",
        ]
        assert sorted(r.key for r in await sim.list_resources()) == ["a", "b", "c"]
    finally:
        await sim.close()


async def test_builds_on_a_shared_file_end_together_in_real_time(tmp_path: Path) -> None:
    """Builds ending in the same tick are marked ACTIVE together (batch.py's `Builds`): not
    before their latency; a cancelled build marks nothing and leaves no record; a record
    deleted while building makes its create fail."""
    sim = SimProvider(one_host(vcpus=4), create_latency_s=0.05, state_path=tmp_path / "sim.db")
    try:
        loop = asyncio.get_running_loop()
        started = loop.time()
        cancelled = asyncio.ensure_future(sim.create_server(tiny("gone")))
        deleted = asyncio.ensure_future(sim.create_server(tiny("deleted")))
        creates = [sim.create_server(tiny(k)) for k in ("a", "b")]
        made = asyncio.gather(*creates)
        while len(await sim.list_resources()) < 4:
            await asyncio.sleep(0.001)
        cancelled.cancel()
        (victim,) = [r for r in await sim.list_resources() if r.key == "deleted"]
        await sim.delete(NodeKind.SERVER, victim.id)
        a, b = await made
        assert loop.time() - started >= 0.05
        assert a.state is ResourceState.ACTIVE and b.state is ResourceState.ACTIVE
        with pytest.raises(TemporaryError, match="deleted while building"):
            await deleted
        with pytest.raises(asyncio.CancelledError):
            await cancelled
        listed = {r.key: r.state for r in await sim.list_resources()}
        assert listed == {"a": ResourceState.ACTIVE, "b": ResourceState.ACTIVE}
    finally:
        await sim.close()


async def test_the_simulated_clouds_cpu_is_counted_apart(tmp_path: Path) -> None:
    """Its CPU is Shoal's to subtract (benchmarks/scale.py's `shoal_cpu_ms_per_node`)."""
    before = spent_seconds("reserve")
    sim = SimProvider(default_inventory(), state_path=tmp_path / "sim.db")
    try:
        await sim.create_server(server_request("a", "az1-host1"))
    finally:
        await sim.close()
    assert spent_seconds("reserve") > before
    assert "shoal_sim_cpu_seconds_total" in generate_latest(PROCESS).decode()


async def test_a_crashed_server_reads_error_until_created_again() -> None:
    sim = SimProvider(default_inventory())
    server = await sim.create_server(server_request("s", "az1-host1"))
    await sim.kill_node_process(server.id)
    assert (await sim.get(NodeKind.SERVER, server.id)).state is ResourceState.ERROR
    again = await sim.create_server(server_request("s", "az1-host1"))
    assert again.id == server.id and again.state is ResourceState.ACTIVE


async def test_a_delete_during_the_build_wins() -> None:
    sleep = FakeSleep(gated=True)
    sim = SimProvider(default_inventory(), create_latency_s=1.0, clock_sleep=sleep)
    build = asyncio.create_task(sim.create_server(server_request("s", "az1-host1")))
    while not sleep.calls:
        await asyncio.sleep(0)
    (building,) = await sim.list_resources()
    await sim.delete(NodeKind.SERVER, building.id)
    sleep.gate.set()
    with pytest.raises(TemporaryError, match="deleted while building"):
        await build
    assert await sim.list_resources() == []
