"""The openstack provider's networks, security groups, ports, floating IPs and load balancers
against a real Neutron 29 and a real Octavia 19 (peers.py): made, found again by key, kept in
step, deleted without leftovers (counted from the services' own listings), refused with the
service's reason and nothing left, and made and deleted through `kill -9`s."""

from __future__ import annotations

import json
import urllib.request
import uuid
from collections.abc import AsyncIterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from shoal.providers.errors import PermanentError
from shoal.providers.networking import NetworkDriver
from shoal.providers.openstack.netspec import (
    FloatingIpRequest,
    LbProtocol,
    ListenerSpec,
    LoadBalancerRequest,
    Member,
    NetworkSpec,
    NetworksRequest,
    PortRequest,
)
from shoal.providers.openstack.provider import OpenStackProvider
from shoal.providers.registry import make_provider
from tests.netpeers import drive
from tests.netpeers.books import books
from tests.netpeers.chaos import at_least, drive_process, finish, kill_when
from tests.netpeers.peers import NetCloud
from tests.networks.support import cluster, networking

ROOT = Path(__file__).resolve().parents[2]
COMPLETE = 12
"""What drive.py's create makes: 2 networks, 2 subnets, a router, 2 security groups, 3 ports,
a floating IP and a load balancer (its listener, pool, monitor and members live inside it)."""


def neutron_get(cloud: NetCloud, path: str) -> Any:
    with urllib.request.urlopen(f"{cloud.neutron.url}/v2.0{path}", timeout=60) as resp:
        return json.loads(resp.read())


@pytest.fixture
async def provider(netcloud: NetCloud, tmp_path: Path) -> AsyncIterator[OpenStackProvider]:
    p = make_provider("openstack", home=tmp_path, options=netcloud.provider_options())
    assert isinstance(p, OpenStackProvider)
    try:
        yield p
    finally:
        await p.close()


def cluster_id() -> str:
    return uuid.uuid4().hex[:12]


async def test_a_cluster_network_side_is_made_once_kept_in_step_and_deleted_whole(
    provider: OpenStackProvider, netcloud: NetCloud
) -> None:
    c = cluster_id()
    made = await provider.ensure_networks(drive.networks_request(c))
    assert set(made.networks) == {"front", "back"} and set(made.routers) == {"front"}
    assert await provider.ensure_networks(drive.networks_request(c)) == made

    subnet = neutron_get(netcloud, f"/subnets/{made.subnets['front']}")["subnet"]
    assert subnet["cidr"] == "10.10.0.0/24" and subnet["dns_nameservers"] == ["192.0.2.53"]
    rules = neutron_get(
        netcloud, f"/security-group-rules?security_group_id={made.security_groups['db']}"
    )["security_group_rules"]
    ingress = [r for r in rules if r["direction"] == "ingress"]
    assert [(r["protocol"], r["port_range_min"], r["remote_group_id"]) for r in ingress] == [
        ("tcp", 5432, made.security_groups["web"])
    ]

    port = await provider.ensure_port(
        PortRequest("port:n0:front", c, "n0-front", "front", "10.10.0.10", ("web",))
    )
    again = await provider.ensure_port(
        PortRequest("port:n0:front", c, "n0-front", "front", "10.10.0.10", ("web",))
    )
    assert again.id == port.id and port.address == "10.10.0.10"
    shown = neutron_get(netcloud, f"/ports/{port.id}")["port"]
    assert shown["security_groups"] == [made.security_groups["web"]]
    # No agent binds it: Neutron without agents keeps every port DOWN (docs/openstack.md).
    assert shown["status"] == "DOWN"
    fip = await provider.ensure_floating_ip(FloatingIpRequest("fip:n0", c, "public", port.id))
    assert fip.address.startswith("203.0.113.") and fip.port_id == port.id

    lb = await provider.ensure_load_balancer(drive.lb_request(c))
    assert lb.status == "ACTIVE" and lb.members == ()
    three = [Member(f"n{i}", drive.member_address(i), 8080) for i in range(3)]
    lb = await provider.set_members(c, "lb:web", three)
    assert {m.address for m in lb.members} == {"10.10.0.10", "10.10.0.11", "10.10.0.12"}
    # Scale in and a replacement (n1 gone, n3 in its place) in one step.
    lb = await provider.set_members(
        c, "lb:web", [three[0], three[2], Member("n3", "10.10.0.13", 8080)]
    )
    assert {(m.key, m.address) for m in lb.members} == {
        ("n0", "10.10.0.10"),
        ("n2", "10.10.0.12"),
        ("n3", "10.10.0.13"),
    }
    assert (await provider.ensure_load_balancer(drive.lb_request(c))).id == lb.id

    before = books(c, netcloud.neutron.url, netcloud.octavia.url)
    assert (before.resources, before.duplicates, before.unkeyed) == (10, 0, 0)
    await provider.delete_networks(c)
    assert books(c, netcloud.neutron.url, netcloud.octavia.url).resources == 0
    await provider.delete_networks(c)  # already gone: still fine


async def test_a_neutron_refusal_mid_create_is_permanent_with_its_reason_and_leaves_nothing(
    provider: OpenStackProvider, netcloud: NetCloud
) -> None:
    c = cluster_id()
    # The network, its subnet and its router are made; joining the router to a subnet that
    # overlaps the external network's 203.0.113.0/24 is refused by Neutron itself.
    request = NetworksRequest(
        c,
        networks=(
            NetworkSpec("ok", "10.30.0.0/24"),
            NetworkSpec("clash", "203.0.113.0/25", external="public"),
        ),
    )
    with pytest.raises(PermanentError) as refused:
        await provider.ensure_networks(request)
    assert refused.value.fault and "overlap" in refused.value.fault.lower()
    assert books(c, netcloud.neutron.url, netcloud.octavia.url).resources == 0


async def test_an_octavia_refusal_is_permanent_with_its_reason_and_leaves_no_balancer(
    provider: OpenStackProvider, netcloud: NetCloud
) -> None:
    c = cluster_id()
    await provider.ensure_networks(NetworksRequest(c, (NetworkSpec("front", "10.40.0.0/24"),)))
    bad = LoadBalancerRequest(
        "lb:bad", c, "bad", "front", (ListenerSpec(LbProtocol.TCP, 0),), member_port=80
    )
    with pytest.raises(PermanentError) as refused:
        await provider.ensure_load_balancer(bad)
    assert refused.value.fault and "protocol_port" in refused.value.fault
    assert books(c, netcloud.neutron.url, netcloud.octavia.url).by_kind.get("loadbalancers", 0) == 0
    await provider.delete_networks(c)
    assert books(c, netcloud.neutron.url, netcloud.octavia.url).resources == 0


async def test_deleting_while_the_balancer_is_still_provisioning_waits_and_leaks_nothing(
    provider: OpenStackProvider, netcloud: NetCloud
) -> None:
    c = cluster_id()
    made = await provider.ensure_networks(
        NetworksRequest(c, (NetworkSpec("front", "10.50.0.0/24"),))
    )
    # Ask Octavia directly, without waiting: the balancer is PENDING_CREATE when the delete
    # comes, and Octavia refuses to delete it (409) until its worker is done.
    body = {
        "loadbalancer": {
            "name": "early",
            "vip_subnet_id": made.subnets["front"],
            "tags": ["shoal", f"shoal-cluster:{c}", "shoal-key:lb:early"],
        }
    }
    req = urllib.request.Request(
        f"{netcloud.octavia.url}/v2/lbaas/loadbalancers",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(req, timeout=60) as resp:
        assert json.loads(resp.read())["loadbalancer"]["provisioning_status"] == "PENDING_CREATE"
    await provider.delete_networks(c)
    assert books(c, netcloud.neutron.url, netcloud.octavia.url).resources == 0


def test_kill_9_during_create_and_delete_leaves_no_duplicate_and_no_orphan(
    netcloud: NetCloud,
) -> None:
    c = cluster_id()

    def count() -> int:
        return books(c, netcloud.neutron.url, netcloud.octavia.url).resources

    # Killed once the first network exists, again once ports are being made; the third run
    # adopts everything the dead ones made.
    kills = 0
    for n in (1, 8):
        kills += kill_when(drive_process("create", c, netcloud), partial(at_least, count, n))
    finish(drive_process("create", c, netcloud))
    made = books(c, netcloud.neutron.url, netcloud.octavia.url)
    assert (made.resources, made.duplicates, made.unkeyed) == (COMPLETE, 0, 0), made
    assert kills >= 1

    # Killed once the delete has removed something but not everything.
    kill_when(drive_process("delete", c, netcloud), lambda: 0 < count() < COMPLETE)
    finish(drive_process("delete", c, netcloud))
    assert count() == 0


DOCUMENT = """
name: os-net
node_groups:
  - {name: web, profile: {type: server, flavor: m1.small, image: cirros}, count: 3}
  - {name: db, profile: {type: server, flavor: m1.small, image: cirros}, count: 1}
networks:
  - {name: app, cidr: 10.60.0.0/24}
security_groups:
  - name: db
    rules:
      - {protocol: tcp, ports: 5432, from: {member: web}}
load_balancers:
  - name: front
    network: app
    listeners: [{port: 80, protocol: HTTP, pool: web}]
    pools:
      - name: web
        members: web
        port: 8080
        protocol: HTTP
"""


async def test_the_engine_driver_keeps_pool_and_rules_in_step_with_the_node_group(
    provider: OpenStackProvider, netcloud: NetCloud
) -> None:
    spec = networking(DOCUMENT)
    c = cluster_id()
    web = [(f"web-{i}", "web", f"10.60.0.{10 + i}") for i in (1, 2, 3)]
    driver = provider.networking
    assert isinstance(driver, NetworkDriver)

    await driver.apply(cluster(spec, [*web, ("db-1", "db", "10.60.0.20")], c))
    (state,) = await driver.balancers(cluster(spec, web, c))
    assert {m.server for m in state.members} == {"web-1", "web-2", "web-3"}
    assert state.listeners == (80,)

    # web-2's host failed and web-4 replaced it; the scale-in of web-3 in the same step.
    now = [web[0], ("web-4", "web", "10.60.0.14")]
    await driver.apply(cluster(spec, now, c))
    (state,) = await driver.balancers(cluster(spec, now, c))
    assert {(m.server, m.address) for m in state.members} == {
        ("web-1", "10.60.0.11"),
        ("web-4", "10.60.0.14"),
    }
    group = neutron_get(netcloud, f"/security-groups?tags=shoal-cluster:{c}")["security_groups"]
    rules = neutron_get(
        netcloud, f"/security-group-rules?security_group_id={group[0]['id']}&direction=ingress"
    )["security_group_rules"]
    assert sorted(r["remote_ip_prefix"] for r in rules) == ["10.60.0.11/32", "10.60.0.14/32"]
    assert c in await driver.clusters()

    await driver.remove(c)
    assert books(c, netcloud.neutron.url, netcloud.octavia.url).resources == 0
    assert c not in await driver.clusters()
