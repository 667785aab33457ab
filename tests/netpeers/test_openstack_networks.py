"""The openstack provider's networks, security groups, ports, floating IPs and load balancers
against a real Neutron 29 and a real Octavia 19 (peers.py): made, found again by key after an
interrupted attempt, kept in step, deleted without leftovers (counted from the services' own
listings), refused with the service's reason and nothing left.

The `kill -9` drill at random moments lives in benchmarks/networks.py's `openstack-create-delete`;
here the interruption is deterministic: the attempt dies exactly in the window that matters
(Neutron made the resource, it is not tagged yet), so the retry must find it by its mark."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import urllib.parse
import urllib.request
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from shoal.documents import load_cluster
from shoal.model.catalogs import default_inventory
from shoal.model.enums import NodeKind
from shoal.model.outputs import NetAttr, NetworkFact
from shoal.model.profile import ServerProfile
from shoal.providers.base import ServerRequest
from shoal.providers.errors import PermanentError
from shoal.providers.networking import (
    ClusterNetworks,
    NetworkDriver,
    ServerAddress,
    server_networking,
)
from shoal.providers.openstack.netspec import (
    LbProtocol,
    ListenerSpec,
    LoadBalancerRequest,
    Member,
    NetworkSpec,
    NetworksRequest,
    PoolSpec,
)
from shoal.providers.openstack.options import OpenStackOptions
from shoal.providers.openstack.provider import OpenStackProvider
from shoal.providers.openstack.rest import Json, Rest
from shoal.providers.registry import make_provider
from tests.netpeers import drive
from tests.netpeers.books import Books, books
from tests.netpeers.peers import NetCloud
from tests.networks.support import cluster, networking

COMPLETE = 12
"""What drive.py's create makes: 2 networks, 2 subnets, a router, 2 security groups, 3 ports,
a floating IP and a load balancer (its listener, pool, monitor and members live inside it)."""


class Died(BaseException):
    """The attempt's process ends here (BaseException: no `except Exception` may survive it)."""


class DiesAt:
    """A Rest that stops the attempt at the first call `fatal` picks, before it is sent: what
    Neutron made before that stays made, as after a `kill -9`."""

    def __init__(self, real: Rest, fatal: Any) -> None:
        self.real = real
        self.fatal = fatal

    async def call(self, method: str, path: str, what: str, **kw: Any) -> tuple[Json, Any]:
        if self.fatal(method, path):
            raise Died(f"{method} {path}")
        return await self.real.call(method, path, what, **kw)


def neutron_get(cloud: NetCloud, path: str) -> Any:
    with urllib.request.urlopen(f"{cloud.neutron.url}/v2.0{path}", timeout=60) as resp:
        return json.loads(resp.read())


def octavia_post(cloud: NetCloud, path: str, body: Json) -> Any:
    req = urllib.request.Request(
        f"{cloud.octavia.url}/v2/lbaas{path}",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(req, timeout=60) as resp:
        return json.loads(resp.read())


def octavia_get(cloud: NetCloud, path: str) -> Any:
    with urllib.request.urlopen(f"{cloud.octavia.url}/v2/lbaas{path}", timeout=60) as resp:
        return json.loads(resp.read())


def held(c: str, cloud: NetCloud) -> Books:
    return books(c, cloud.neutron.url, cloud.octavia.url)


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


def tagging(collection: str) -> Any:
    return lambda method, path: method == "PUT" and path.startswith(f"/{collection}/")


async def test_a_cluster_network_side_survives_interruptions_is_kept_in_step_and_deleted_whole(
    provider: OpenStackProvider, netcloud: NetCloud
) -> None:
    c = cluster_id()
    real = provider.neutron.api
    # Dies right after Neutron made the first network, then right after the floating IP: each
    # time the resource exists unmarked by tags, found only by its description and name/port.
    for collection in ("networks", "floatingips"):
        provider.neutron.api = DiesAt(real, tagging(collection))  # type: ignore[assignment]
        with pytest.raises(Died):
            await drive.create(provider, c)
        assert held(c, netcloud).unkeyed == 1
    provider.neutron.api = real
    out = await drive.create(provider, c)
    assert out == {"ports": 3, "members": 3, "lb": "ACTIVE"}
    made = held(c, netcloud)
    assert (made.resources, made.duplicates, made.unkeyed) == (COMPLETE, 0, 0), made

    again = await provider.ensure_networks(drive.networks_request(c))
    subnet = neutron_get(netcloud, f"/subnets/{again.subnets['front']}")["subnet"]
    assert subnet["cidr"] == "10.10.0.0/24" and subnet["dns_nameservers"] == ["192.0.2.53"]
    rules = neutron_get(
        netcloud, f"/security-group-rules?security_group_id={again.security_groups['db']}"
    )["security_group_rules"]
    ingress = [r for r in rules if r["direction"] == "ingress"]
    assert [(r["protocol"], r["port_range_min"], r["remote_group_id"]) for r in ingress] == [
        ("tcp", 5432, again.security_groups["web"])
    ]
    n0_port = f"/ports?tags=shoal-cluster:{c},shoal-key:port:n0:front"
    (port,) = neutron_get(netcloud, n0_port)["ports"]
    assert port["security_groups"] == [again.security_groups["web"]]
    assert port["fixed_ips"][0]["ip_address"] == "10.10.0.10"
    # No agent binds it: Neutron without agents keeps every port DOWN (docs/openstack.md).
    assert port["status"] == "DOWN"
    (fip,) = neutron_get(netcloud, f"/floatingips?tags=shoal-cluster:{c}")["floatingips"]
    assert fip["floating_ip_address"].startswith("203.0.113.") and fip["port_id"] == port["id"]

    # Scale in and a replacement (n1 gone, n3 in its place) in one step.
    three = [Member(f"n{i}", drive.member_address(i), 8080) for i in range(3)]
    lb = await provider.set_members(
        c, "lb:web", [three[0], three[2], Member("n3", "10.10.0.13", 8080)]
    )
    assert {(m.key, m.address) for m in lb.members} == {
        ("n0", "10.10.0.10"),
        ("n2", "10.10.0.12"),
        ("n3", "10.10.0.13"),
    }
    assert (await provider.ensure_load_balancer(drive.lb_request(c))).id == lb.id

    # Octavia refuses a listener on port 0: its reason, and no second balancer left.
    bad = LoadBalancerRequest(
        "lb:bad", c, "bad", "front", (ListenerSpec(LbProtocol.TCP, 0),), (PoolSpec(80),)
    )
    with pytest.raises(PermanentError) as refused:
        await provider.ensure_load_balancer(bad)
    assert refused.value.fault and "protocol_port" in refused.value.fault
    assert held(c, netcloud).by_kind["loadbalancers"] == 1

    # A balancer asked for directly, not waited for: still PENDING_CREATE when the delete
    # comes, which Octavia refuses (409) until its worker is done; the delete waits.
    early = {
        "loadbalancer": {
            "name": "early",
            "vip_subnet_id": again.subnets["front"],
            "tags": ["shoal", f"shoal-cluster:{c}", "shoal-key:lb:early"],
        }
    }
    answer = octavia_post(netcloud, "/loadbalancers", early)
    assert answer["loadbalancer"]["provisioning_status"] == "PENDING_CREATE"

    # A delete that dies after its first deletion, then one that finishes.
    deletes = 0

    def second_delete(method: str, path: str) -> bool:
        nonlocal deletes
        deletes += method == "DELETE"
        return deletes == 2

    provider.neutron.api = DiesAt(real, second_delete)  # type: ignore[assignment]
    with pytest.raises(Died):
        await provider.delete_networks(c)
    assert 0 < held(c, netcloud).resources < COMPLETE + 1
    provider.neutron.api = real
    await provider.delete_networks(c)
    assert held(c, netcloud).resources == 0
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
            NetworkSpec.single("ok", "10.30.0.0/24"),
            NetworkSpec.single("clash", "203.0.113.0/25", external="public"),
        ),
    )
    with pytest.raises(PermanentError) as refused:
        await provider.ensure_networks(request)
    assert refused.value.fault and "overlap" in refused.value.fault.lower()
    assert held(c, netcloud).resources == 0


DOCUMENT = """
name: os-net
node_groups:
  - {name: web, profile: {type: server, flavor: m1.small, image: cirros}, count: 3}
  - {name: db, profile: {type: server, flavor: m1.small, image: cirros}, count: 1}
networks:
  - name: app
    subnets: [{name: app-a, cidr: 10.60.0.0/24}, {name: app-b, cidr: 10.61.0.0/24}]
    router: public
security_groups:
  - name: db
    rules:
      - {protocol: tcp, ports: 5432, from: {member: web}}
      - {direction: egress, protocol: udp, ports: 53, from: 10.0.0.0/8}
load_balancers:
  - name: front
    network: app
    listeners: [{port: 80, protocol: HTTP, pool: web}, {port: 5432, pool: db}]
    pools:
      - name: web
        members: web
        port: 8080
        protocol: HTTP
      - {name: db, members: db, port: 5432}
"""


async def test_the_engine_driver_keeps_pool_and_rules_in_step_with_the_node_group(
    provider: OpenStackProvider, netcloud: NetCloud
) -> None:
    spec = networking(DOCUMENT)
    c = cluster_id()
    web = [(f"web-{i}", "web", f"10.60.0.{10 + i}") for i in (1, 2, 3)]
    db = ("db-1", "db", "10.60.0.20")
    driver = provider.networking
    assert isinstance(driver, NetworkDriver)

    await driver.apply(cluster(spec, [*web, db], c))
    (state,) = await driver.balancers(cluster(spec, web, c))
    assert {m.server for m in state.members} == {"web-1", "web-2", "web-3", "db-1"}
    assert state.listeners == (80, 5432)
    # Every subnet of the network, each joined to the router.
    subnets = neutron_get(netcloud, f"/subnets?tags=shoal-cluster:{c}")["subnets"]
    assert sorted(s["cidr"] for s in subnets) == ["10.60.0.0/24", "10.61.0.0/24"]
    (router,) = neutron_get(netcloud, f"/routers?tags=shoal-cluster:{c}")["routers"]
    joined = neutron_get(
        netcloud, f"/ports?device_id={router['id']}&device_owner=network%3Arouter_interface"
    )["ports"]
    assert {ip["subnet_id"] for p in joined for ip in p["fixed_ips"]} == {s["id"] for s in subnets}

    # web-2's host failed and web-4 replaced it; the scale-in of web-3 in the same step.
    now = [web[0], ("web-4", "web", "10.60.0.14")]
    await driver.apply(cluster(spec, [*now, db], c))
    (state,) = await driver.balancers(cluster(spec, now, c))
    assert {(m.server, m.address) for m in state.members} == {
        ("web-1", "10.60.0.11"),
        ("web-4", "10.60.0.14"),
        ("db-1", "10.60.0.20"),
    }
    group = neutron_get(netcloud, f"/security-groups?tags=shoal-cluster:{c}")["security_groups"]
    rules = neutron_get(netcloud, f"/security-group-rules?security_group_id={group[0]['id']}")[
        "security_group_rules"
    ]
    ingress = [r for r in rules if r["direction"] == "ingress"]
    assert sorted(r["remote_ip_prefix"] for r in ingress) == ["10.60.0.11/32", "10.60.0.14/32"]
    # Its egress is exactly the declared rule: Neutron's allow-all egress rules are gone.
    egress = [r for r in rules if r["direction"] == "egress"]
    assert [(r["protocol"], r["port_range_min"], r["remote_ip_prefix"]) for r in egress] == [
        ("udp", 53, "10.0.0.0/8")
    ]
    assert c in await driver.clusters()

    # Listeners changed alone (80 gone, 8080 new, 5432 sent to another pool): the same
    # balancer (its id and VIP kept), its listeners made what the document says.
    before = octavia_get(netcloud, f"/loadbalancers?tags=shoal-cluster:{c}")["loadbalancers"]
    moved = DOCUMENT.replace(
        "listeners: [{port: 80, protocol: HTTP, pool: web}, {port: 5432, pool: db}]",
        "listeners: [{port: 8080, protocol: HTTP, pool: web}, {port: 5432, pool: web}]",
    )
    await driver.apply(cluster(networking(moved), [*now, db], c))
    after = octavia_get(netcloud, f"/loadbalancers?tags=shoal-cluster:{c}")["loadbalancers"]
    assert [(b["id"], b["vip_address"]) for b in after] == [
        (b["id"], b["vip_address"]) for b in before
    ]
    lb_id = after[0]["id"]
    pools = {
        p["id"]: p["name"]
        for p in octavia_get(netcloud, f"/pools?loadbalancer_id={lb_id}")["pools"]
    }
    listeners = octavia_get(netcloud, f"/listeners?loadbalancer_id={lb_id}")["listeners"]
    assert sorted(
        (x["protocol"], x["protocol_port"], pools[x["default_pool_id"]]) for x in listeners
    ) == [("HTTP", 8080, "web"), ("TCP", 5432, "web")]
    await driver.apply(cluster(networking(moved), [*now, db], c))  # again: nothing changes
    again = octavia_get(netcloud, f"/listeners?loadbalancer_id={lb_id}")["listeners"]
    assert sorted(x["id"] for x in again) == sorted(x["id"] for x in listeners)

    await driver.remove(c)
    assert held(c, netcloud).resources == 0
    assert c not in await driver.clusters()


class _Answer:
    def __init__(self, status: int, body: Json | None) -> None:
        self.status_code = status
        self.content = json.dumps(body).encode() if body is not None else b""
        self.headers: dict[str, str] = {}


class StubNova:
    """Nova's compute API as far as the provider's server create and delete use it, recording
    each boot's body: Nova here is not the point (tests/nova runs the real one, without
    Neutron behind it); which ports the server boots on is."""

    def __init__(self) -> None:
        self.servers: dict[str, Json] = {}
        self.boots: list[Json] = []

    def request(self, path: str, method: str, **kw: Any) -> _Answer:
        url = urllib.parse.urlsplit(path)
        query = urllib.parse.parse_qs(url.query)
        if method == "GET" and url.path in ("/servers", "/servers/detail"):
            tags = set(",".join(query.get("tags", [])).split(",")) - {""}
            found = [s for s in self.servers.values() if tags <= set(s["tags"])]
            return _Answer(200, {"servers": [] if query.get("status") else found})
        if method == "POST" and url.path == "/servers":
            boot = kw["json"]["server"]
            self.boots.append(boot)
            sid = str(uuid.uuid4())
            self.servers[sid] = {**boot, "id": sid, "status": "ACTIVE", "addresses": {}}
            return _Answer(202, {"server": {"id": sid}})
        sid = url.path.rsplit("/", 1)[-1]
        if sid not in self.servers:
            return _Answer(404, {"itemNotFound": {"message": "no such server"}})
        if method == "DELETE":
            del self.servers[sid]
            return _Answer(204, None)
        return _Answer(200, {"server": self.servers[sid]})


class _Cloud:
    def __init__(self, real: Any, compute: StubNova) -> None:
        self.network, self.load_balancer, self.compute = real.network, real.load_balancer, compute

    def close(self) -> None:
        pass


PORTS = """
name: os-ports
node_groups:
  - {name: web, profile: {type: server, flavor: m1.small, image: cirros}, count: 2}
networks:
  - {name: app, cidr: 10.70.0.0/24, router: public}
security_groups:
  - {name: web, rules: [{protocol: tcp, ports: 80}]}
ports:
  - {name: web-app, server: web, network: app, security_groups: [web]}
floating_ips:
  - {name: web-1-public, server: web-1, external: public, network: app}
"""


async def test_a_server_boots_on_its_ports_made_first_and_they_go_with_it(
    provider: OpenStackProvider, netcloud: NetCloud
) -> None:
    nova = StubNova()
    real = provider._conn()
    p = OpenStackProvider(
        lambda: _Cloud(real, nova), OpenStackOptions(mode="tenant", poll_interval_s=0.01)
    )
    try:
        await _ports_before_boot(p, nova, netcloud)
    finally:
        await p.close()


async def _ports_before_boot(p: OpenStackProvider, nova: StubNova, netcloud: NetCloud) -> None:
    c = cluster_id()
    doc = load_cluster(PORTS, default_inventory())
    profile = doc.node_groups[0].parts[0].profile
    assert isinstance(profile, ServerProfile)
    whole = ClusterNetworks(c, "os-ports", doc.networking, ())
    nodes = {name: uuid.uuid4().hex for name in ("web-1", "web-2")}

    def request(name: str) -> ServerRequest:
        return ServerRequest(
            nodes[name],
            f"os-ports-{name}",
            c,
            "",
            "nova",
            profile,
            networking=server_networking(whole, name, "web", None),
        )

    # The first attempt dies right after Neutron made web-1's port, before it is tagged.
    neutron_api = p.neutron.api
    p.neutron.api = DiesAt(neutron_api, tagging("ports"))  # type: ignore[assignment]
    with pytest.raises(Died):
        await p.create_server(request("web-1"))
    assert not nova.boots
    p.neutron.api = neutron_api
    made = {name: await p.create_server(request(name)) for name in nodes}

    ports = neutron_get(netcloud, f"/ports?tags=shoal-cluster:{c}")["ports"]
    assert len(ports) == 2  # the dead attempt's port adopted, not made twice
    by_node = {
        t.removeprefix("shoal-node:"): port
        for port in ports
        for t in port["tags"]
        if t.startswith("shoal-node:")
    }
    (group,) = neutron_get(netcloud, f"/security-groups?tags=shoal-cluster:{c}")["security_groups"]
    for boot in nova.boots:
        port = by_node[boot["metadata"]["shoal_node"]]
        assert boot["networks"] == [{"port": port["id"]}]
        assert port["security_groups"] == [group["id"]]
        assert port["fixed_ips"][0]["ip_address"].startswith("10.70.0.")
    (fip,) = neutron_get(netcloud, f"/floatingips?tags=shoal-cluster:{c}")["floatingips"]
    assert fip["port_id"] == by_node[nodes["web-1"]]["id"]
    books = held(c, netcloud)
    assert (books.duplicates, books.unkeyed) == (0, 0), books
    # What Neutron assigned, as the engine records it for outputs.
    serving = ClusterNetworks(
        c,
        "os-ports",
        doc.networking,
        tuple(
            ServerAddress(name, "web", None, by_node[nodes[name]]["fixed_ips"][0]["ip_address"])
            for name in nodes
        ),
    )
    assert await p.networking.addresses(serving) == {
        NetworkFact(NetAttr.PORT_ADDRESS, "web-app"): serving.servers[0].address,
        NetworkFact(NetAttr.FLOATING_IP_ADDRESS, "web-1-public"): fip["floating_ip_address"],
    }

    # Deleting web-1 deletes its port and floating IP after the server; web-2's stay.
    await p.delete(NodeKind.SERVER, made["web-1"].id)
    left = neutron_get(netcloud, f"/ports?tags=shoal-cluster:{c}")["ports"]
    assert [port["id"] for port in left] == [by_node[nodes["web-2"]]["id"]]
    assert not neutron_get(netcloud, f"/floatingips?tags=shoal-cluster:{c}")["floatingips"]

    # What the engine does after any server's delete (a create that died before its server
    # existed leaves ports no server points to): the node's ports and floating IPs go.
    await p.release_ports(nodes["web-2"])
    assert not neutron_get(netcloud, f"/ports?tags=shoal-cluster:{c}")["ports"]
    await p.delete(NodeKind.SERVER, made["web-2"].id)
    await p.networking.remove(c)
    assert held(c, netcloud).resources == 0


async def test_servers_booting_together_make_their_cluster_networks_once(
    provider: OpenStackProvider, netcloud: NetCloud
) -> None:
    # A cluster's servers are created concurrently, each making sure of the networks its ports
    # need first: one network, subnet, router and group, not one per server.
    c = cluster_id()
    doc = load_cluster(PORTS, default_inventory())
    whole = ClusterNetworks(c, "os-ports", doc.networking, ())
    await asyncio.gather(*(provider.networking.prepare(whole) for _ in range(3)))
    made = held(c, netcloud)
    assert made.by_kind == {"networks": 1, "subnets": 1, "routers": 1, "security-groups": 1}, made
    await provider.networking.remove(c)


def neutron_call(cloud: NetCloud, method: str, path: str, body: Json | None = None) -> Any:
    req = urllib.request.Request(
        f"{cloud.neutron.url}/v2.0{path}",
        data=json.dumps(body).encode() if body is not None else None,
        headers={"Content-Type": "application/json"},
        method=method,
    )
    with urllib.request.urlopen(req, timeout=60) as resp:
        raw = resp.read()
    return json.loads(raw) if raw else None


class PortingNova(StubNova):
    """As StubNova, and like Nova makes a real Neutron port for each network a boot names (and
    deletes it with the server), which is where a profile's floating IPs go."""

    def __init__(self, cloud: NetCloud) -> None:
        super().__init__()
        self.cloud = cloud

    def request(self, path: str, method: str, **kw: Any) -> _Answer:
        answer = super().request(path, method, **kw)
        url = urllib.parse.urlsplit(path)
        if method == "POST" and url.path == "/servers":
            sid = json.loads(answer.content)["server"]["id"]
            for ref in kw["json"]["server"]["networks"]:
                port = {"network_id": ref["uuid"], "device_id": sid, "device_owner": "compute:nova"}
                neutron_call(self.cloud, "POST", "/ports", {"port": port})
        elif method == "DELETE" and answer.status_code == 204:
            sid = url.path.rsplit("/", 1)[-1]
            for port in neutron_get(self.cloud, f"/ports?device_id={sid}")["ports"]:
                neutron_call(self.cloud, "DELETE", f"/ports/{port['id']}")
        return answer


async def test_a_profiles_floating_network_gives_each_server_its_own_floating_ip(
    provider: OpenStackProvider, netcloud: NetCloud
) -> None:
    """Senlin's `floating_network` (the profile's `floating_networks`): each server gets its
    own floating IP on the port Nova made on that network, after its boot; a retried create
    finds it; it goes with its server."""
    c = cluster_id()
    net_doc = "name: fipnet\nnetworks:\n  - {name: ext, cidr: 10.72.0.0/24, router: public}\n"
    existing = ClusterNetworks(c, "fipnet", networking(net_doc), ())
    await provider.networking.apply(existing)  # an existing network routed to `public`
    (net,) = neutron_get(netcloud, f"/networks?tags=shoal-cluster:{c}")["networks"]
    nova = PortingNova(netcloud)
    real = provider._conn()
    p = OpenStackProvider(
        lambda: _Cloud(real, nova), OpenStackOptions(mode="tenant", poll_interval_s=0.01)
    )
    try:
        base = load_cluster(PORTS, default_inventory()).node_groups[0].parts[0].profile
        assert isinstance(base, ServerProfile)
        profile = dataclasses.replace(
            base, networks=(net["name"],), floating_networks=((net["name"], "public"),)
        )
        nodes = {name: uuid.uuid4().hex for name in ("web-1", "web-2")}

        def request(name: str) -> ServerRequest:
            return ServerRequest(nodes[name], f"fip-{name}", c, "", "nova", profile)

        made = {name: await p.create_server(request(name)) for name in nodes}
        again = await p.create_server(request("web-1"))  # a retry finds server and IP
        assert again.id == made["web-1"].id and len(nova.boots) == 2

        fips = neutron_get(netcloud, f"/floatingips?tags=shoal-cluster:{c}")["floatingips"]
        owner = {
            t.removeprefix("shoal-node:"): f["port_id"]
            for f in fips
            for t in f["tags"]
            if t.startswith("shoal-node:")
        }
        assert len(fips) == 2 and set(owner) == set(nodes.values())
        for name, key in nodes.items():
            (port,) = neutron_get(netcloud, f"/ports?device_id={made[name].id}")["ports"]
            assert owner[key] == port["id"]

        await p.delete(NodeKind.SERVER, made["web-1"].id)  # scale-in: its IP goes with it
        (left,) = neutron_get(netcloud, f"/floatingips?tags=shoal-cluster:{c}")["floatingips"]
        assert f"shoal-node:{nodes['web-2']}" in left["tags"]
        await p.delete(NodeKind.SERVER, made["web-2"].id)
        assert not neutron_get(netcloud, f"/floatingips?tags=shoal-cluster:{c}")["floatingips"]
    finally:
        await p.close()
        await provider.networking.remove(c)
    assert held(c, netcloud).resources == 0
