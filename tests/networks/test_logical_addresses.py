"""Addresses a document leaves to the cloud are assigned on `sim` too (issue 26, gap 1): a
named port's fixed IP, a floating IP's address and a balancer's VIP, picked deterministically
from the document's ranges (`providers/netassign.py`), recorded by the engine's networking sync,
so a deployment taking them runs and the outputs resolve, as on `openstack`. (`local` is
covered end to end by tests/networks/test_local_addresses.py.)"""

from __future__ import annotations

import asyncio
from ipaddress import ip_address, ip_network

from shoal.clock import ManualClock
from shoal.documents import load_cluster
from shoal.model.catalogs import default_inventory
from shoal.model.enums import ActionStatus
from shoal.model.outputs import NetAttr, NetworkFact
from shoal.model.software import DeploymentStatus
from shoal.providers import netassign
from shoal.providers.networking import ClusterNetworks, ServerAddress
from shoal.providers.sim.networking import SimNetworking
from shoal.providers.sim.provider import SimProvider
from shoal.service.queries import Queries
from shoal.store.database import Database
from tests.engine.support import ADMIN, make_rig, managed_at
from tests.engine.test_deployments import rows, runs_of
from tests.support.polling import until

DOC = """
name: addrs
node_groups:
  - {name: web, profile: {type: server, flavor: m1.tiny, image: cirros}, count: 2, max: 4}
networks:
  - {name: app, cidr: 10.81.0.0/29, router: public}
ports:
  - {name: wp, server: web, network: app}
floating_ips:
  - {name: pub, server: web-1, external: public, network: app}
load_balancers:
  - name: front
    network: app
    listeners: [{port: 80, pool: web}]
    pools: [{name: web, members: web, port: 8080}]
software:
  configs:
    cfg: {group: script, config: "echo", inputs: [me, vip, pub]}
  deployments:
    d:
      config: cfg
      target: web
      inputs:
        me: {network_address: wp, of: port}
        vip: {network_address: front, of: load_balancer}
        pub: {network_address: pub, of: floating_ip}
outputs:
  vip: {value: {network_address: front, of: load_balancer}}
  port: {value: {network_address: wp, of: port}}
  fip: {value: {network_address: pub, of: floating_ip}}
"""

PORT = NetworkFact(NetAttr.PORT_ADDRESS, "wp")
FIP = NetworkFact(NetAttr.FLOATING_IP_ADDRESS, "pub")
VIP = NetworkFact(NetAttr.VIP_ADDRESS, "front")


def _cluster(servers: int, doc: str = DOC) -> ClusterNetworks:
    spec = load_cluster(doc, default_inventory()).networking
    return ClusterNetworks(
        "c-1",
        "addrs",
        spec,
        tuple(
            ServerAddress(f"web-{i}", "web", None, f"10.1.1.{i + 1}") for i in range(1, 1 + servers)
        ),
    )


async def test_sim_picks_are_deterministic_inside_the_ranges_and_never_taken() -> None:
    found = await SimNetworking().addresses(_cluster(2))
    assert found == await SimNetworking().addresses(_cluster(2))  # another process: the same
    subnet = ip_network("10.81.0.0/29")
    gateway, broadcast = "10.81.0.1", "10.81.0.7"
    assert {found[PORT], found[VIP]} <= {str(a) for a in subnet.hosts()} - {gateway}
    assert found[PORT] != found[VIP] and broadcast not in found.values()
    assert ip_address(found[FIP]) in netassign.FLOATING_POOL
    # No server yet: the VIP is known at once, a port's and a floating IP's once one exists.
    assert set(await SimNetworking().addresses(_cluster(0))) == {VIP}
    # An address the document gives is never picked for another.
    for address in ("10.81.0.2", "10.81.0.3", "10.81.0.4", "10.81.0.5", "10.81.0.6"):
        vip = f"- name: front\n    network: app\n    vip: {address}"
        given = DOC.replace("- name: front\n    network: app", vip)
        others = await SimNetworking().addresses(_cluster(2, given))
        assert VIP not in others and others[PORT] != address


def test_a_full_range_assigns_nothing_rather_than_a_taken_address() -> None:
    taken = {str(a) for a in ip_network("10.0.0.0/29").hosts()}
    assert netassign.pick(ip_network("10.0.0.0/29"), "k", set(taken)) is None
    assert netassign.floating_range("public").subnet_of(netassign.FLOATING_POOL)
    assert netassign.floating_range("public") == netassign.floating_range("public")


async def test_on_sim_the_deployment_runs_and_the_outputs_resolve(db: Database) -> None:
    clock = ManualClock()
    provider = SimProvider(default_inventory(), clock_sleep=clock.sleep)
    rig = make_rig(db, provider=provider, clock=clock, lease_s=60.0)
    rig.engine.deployer.tick_s = 0.02
    queries = Queries(db, lambda: rig.inventory)
    await rig.engine.start()
    try:
        sub = await asyncio.to_thread(rig.service.create, ADMIN, DOC)
        done = await rig.wait(sub.action.id)
        assert done.status is ActionStatus.SUCCEEDED, done.status_reason
        cid = sub.cluster.id
        manager = rig.engine.manager
        assert manager is not None

        def outputs() -> dict[str, object]:
            got = queries.cluster(ADMIN, cid).outputs
            return {o.name: o.value for o in got if o.status == "ready"}

        # Manager passes (each on the manual clock) until the sync applied and recorded.
        async def recorded_three() -> bool:
            if len(await asyncio.to_thread(outputs)) >= 3:
                return True
            clock.advance(manager.tick_s)
            await managed_at(rig, clock, clock.now())
            return False

        await until(recorded_three, lambda: f"three outputs ready: {outputs()}")
        recorded = await provider.networking.addresses(
            ClusterNetworks(
                cid,
                "addrs",
                load_cluster(DOC, rig.inventory).networking,
                tuple(ServerAddress(n, "web", None, "x") for n in ("web-1", "web-2")),
            )
        )
        assert outputs() == {
            "vip": recorded[VIP],
            "port": recorded[PORT],
            "fip": recorded[FIP],
        }
        rig.engine.deployer.wake()

        def complete() -> bool:
            found = rows(rig, cid)
            return len(found) == 2 and all(
                r.status is DeploymentStatus.COMPLETE for r in found.values()
            )

        await until(complete, lambda: f"not run: {rows(rig, cid)}")
        inputs = {dict(r.inputs)["me"] for r in runs_of(rig).runs}
        assert inputs == {recorded[PORT]}
        assert {dict(r.inputs)["vip"] for r in runs_of(rig).runs} == {recorded[VIP]}
    finally:
        await rig.engine.stop()
