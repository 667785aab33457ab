"""Security groups and load balancers on `local` are real: nftables refuses a connect from a
server outside the allowed source, HAProxy on its own loopback address serves the pool's
members as they come and go, and removing the cluster's networking leaves nothing behind."""

from __future__ import annotations

import asyncio
import os
import uuid
from pathlib import Path

import pytest

from shoal.documents import load_cluster
from shoal.engine.networks import replicas_of, servers_of
from shoal.model.catalogs import default_inventory
from shoal.providers.local import netfilter
from shoal.providers.local.networking import LocalNetworking
from shoal.providers.networking import ClusterNetworks, MemberHealth
from shoal.store.workloads import ReplicaRow
from tests.networks.support import (
    Serving,
    addresses,
    cluster,
    connect,
    free_port,
    http_get,
    networking,
    server_node,
)
from tests.support.polling import until

pytestmark = pytest.mark.asyncio

HEAD = """
name: shop
node_groups:
  - {name: web, profile: {type: server, flavor: m1.small, image: cirros}, count: 2}
  - {name: db, profile: {type: server, flavor: m1.small, image: cirros}, count: 1}
  - {name: other, profile: {type: server, flavor: m1.small, image: cirros}, count: 1}
networks:
  - {name: app, cidr: 10.10.0.0/24}
"""


async def test_security_group_refuses_outside_source(tmp_path: Path) -> None:
    web, db, other = addresses(3)
    port = free_port(db)
    spec = networking(
        HEAD
        + f"""
security_groups:
  - name: db
    rules:
      - {{protocol: tcp, ports: {port}, from: {{member: web}}}}
ports:
  - {{server: db, network: app, security_groups: [db]}}
  - {{server: web, network: app}}
"""
    )
    net = LocalNetworking(tmp_path)
    cid = uuid.uuid4().hex
    c = cluster(spec, [("web-1", "web", web), ("db-1", "db", db), ("other-1", "other", other)], cid)
    servers = [
        await Serving("db-1", db, port).start(),
        await Serving("other-1", other, port).start(),
    ]
    try:
        assert (await connect(other, db, port)).startswith("ok:")  # nothing applied yet
        await net.apply(c)
        assert net.table(cid) in await netfilter.tables("shoal_")
        assert await connect(web, db, port) == "ok:db-1"
        assert await connect(other, db, port) == "refused"
        # the other way: `other` is in no group, so db (and anyone) reaches it
        assert await connect(db, other, port) == "ok:other-1"
        # a member that joins the allowed group is let in at the next apply
        grown = [*((s.name, s.group, s.address) for s in c.servers), ("web-2", "web", other)]
        c2 = cluster(spec, grown, cid)
        await net.apply(c2)
        assert await connect(other, db, port) == "ok:db-1"
        await net.apply(c)
        assert await connect(other, db, port) == "refused"
        await net.remove(cid)
        assert net.table(cid) not in await netfilter.tables("shoal_")
        assert await net.clusters() == set()
        assert await connect(other, db, port) == "ok:db-1"  # the filter went with the table
    finally:
        await net.remove(cid)
        for s in servers:
            await s.stop()


async def _bodies(vip: str, port: int, n: int) -> set[str]:
    seen: set[str] = set()
    for _ in range(n):
        body = await http_get(vip, port)
        if body is not None:
            seen.add(body)
    return seen


async def _until(vip: str, port: int, wanted: set[str]) -> set[str]:
    """Ask through the VIP until the answers are exactly `wanted` (a bounded wait)."""
    last: set[str] = set()

    async def answered() -> set[str] | None:
        nonlocal last
        last = await _bodies(vip, port, 8)
        return last if last == wanted else None

    found = await until(answered, lambda: f"answers {wanted} (last {last})", every_s=0.05)
    return found


async def test_balancer_follows_members_and_checks_health(tmp_path: Path) -> None:
    a, b = addresses(2)
    port = free_port(a)
    listen = free_port("127.0.0.1")
    spec = networking(
        HEAD
        + f"""
load_balancers:
  - name: front
    network: app
    listeners: [{{port: {listen}, protocol: HTTP, pool: web}}]
    pools:
      - name: web
        members: web
        port: {port}
        protocol: HTTP
        health: {{type: HTTP, delay: 1, timeout: 1, max_retries: 1}}
"""
    )
    net = LocalNetworking(tmp_path)
    cid = uuid.uuid4().hex
    one = cluster(spec, [("web-1", "web", a)], cid)
    both = cluster(spec, [("web-1", "web", a), ("web-2", "web", b)], cid)
    servers = [await Serving("web-1", a, port).start(), await Serving("web-2", b, port).start()]
    try:
        await net.apply(one)
        vip = net.vips(one)["front"]
        assert vip.startswith("127.253.")
        assert await _until(vip, listen, {"web-1"}) == {"web-1"}
        await net.apply(both)
        assert await _until(vip, listen, {"web-1", "web-2"}) == {"web-1", "web-2"}
        # a member that stops answering is marked DOWN by the health check and taken out
        await servers[0].stop()
        assert await _until(vip, listen, {"web-2"}) == {"web-2"}
        states = await net.balancers(both)
        loop = asyncio.get_running_loop()
        end = loop.time() + 30
        while loop.time() < end:
            health = {m.server: m.health for m in states[0].members}
            if health == {"web-1": MemberHealth.DOWN, "web-2": MemberHealth.UP}:
                break
            await asyncio.sleep(0.1)
            states = await net.balancers(both)
        assert {m.server: m.health for m in states[0].members} == {
            "web-1": MemberHealth.DOWN,
            "web-2": MemberHealth.UP,
        }
        pidfile = tmp_path / "networking" / cid / "lb-front.pid"
        pid = int(pidfile.read_text().split()[0])
    finally:
        await net.remove(cid)
        for s in servers:
            await s.stop()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert await http_get(vip, listen, timeout=2) is None
    assert not (tmp_path / "networking" / cid).exists()


async def test_a_pool_over_a_workload_serves_its_ready_replicas(tmp_path: Path) -> None:
    """Issue 22: `members: api` (a workload) — the ready replicas, each on its server's address
    and the workload's named port, as engine/networks.py feeds them; a replica not ready
    leaves the pool at the next apply."""
    a, b = addresses(2)
    port = free_port(a)
    listen = free_port("127.0.0.1")
    spec = load_cluster(
        HEAD
        + f"""
workloads:
  api:
    replicas: 2
    containers: [{{name: api, image: img, ports: [9, {{port: {port}, name: http}}]}}]
load_balancers:
  - name: front
    network: app
    listeners: [{{port: {listen}, protocol: HTTP, pool: api}}]
    pools: [{{name: api, members: api, protocol: HTTP}}]
""",
        default_inventory(),
    )
    assert spec.networking.load_balancers[0].pools[0].member_port == port
    nodes = [server_node("web-1", a), server_node("web-2", b)]
    net = LocalNetworking(tmp_path)
    cid = uuid.uuid4().hex

    def rows(*ready: str) -> list[ReplicaRow]:
        where = {"api-1": "web-1", "api-2": "web-2"}
        return [ReplicaRow(cid, r, "api", n, r in ready) for r, n in where.items()]

    def wanted(*ready: str) -> ClusterNetworks:
        replicas = replicas_of(spec, nodes, rows(*ready))
        return ClusterNetworks(cid, "net-test", spec.networking, servers_of(nodes), replicas)

    servers = [await Serving("api-1", a, port).start(), await Serving("api-2", b, port).start()]
    try:
        await net.apply(wanted("api-1", "api-2"))
        vip = net.vips(wanted())["front"]
        assert await _until(vip, listen, {"api-1", "api-2"}) == {"api-1", "api-2"}
        await net.apply(wanted("api-2"))
        assert await _until(vip, listen, {"api-2"}) == {"api-2"}
        states = await net.balancers(wanted("api-2"))
        assert [(m.server, m.port) for m in states[0].members] == [("api-2", port)]
    finally:
        await net.remove(cid)
        for s in servers:
            await s.stop()
