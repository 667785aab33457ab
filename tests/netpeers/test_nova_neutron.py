"""End to end through Shoal's engine on a real Nova, a real Neutron and a real Octavia together.

A Shoal server process on the `openstack` provider creates a cluster that declares a routed
network, a security group with a rule, a port for every server of its node group, a floating
IP for one of them and a load balancer over the group. Nova (tests/nova/cloud.py `--neutron`,
its fake virt driver) boots each server on the port Shoal made, asking Neutron to bind it to
its compute host (the test Neutron's binding driver, neutron_bind.py, binds it); the servers go
ACTIVE with Neutron's addresses, Shoal records them, the pool's members are the servers' fixed
IPs, a scale-in takes one out, and the cluster's delete leaves nothing in Nova, Neutron or
Octavia, each listed from the service itself. What is not real in the peers: docs/openstack.md.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from tests.e2e.conftest import StartServer, start_server
from tests.e2e.flows import MANAGED, get_cluster, node_list, scale
from tests.netpeers.books import books
from tests.netpeers.peers import NetCloud
from tests.nova.conftest import Peer, start_nova
from tests.support.server import eventually, wait_ok

__all__ = ["start_server"]  # a fixture, imported for pytest

DOCUMENT: dict[str, Any] = {
    "name": "nova-net",
    "node_groups": [
        {
            "name": "web",
            "profile": {"type": "server", "flavor": "m1.tiny", "image": "cirros"},
            "count": 2,
            "min": 0,
            "max": 3,
        }
    ],
    "networks": [{"name": "app", "cidr": "10.90.0.0/24", "router": "public"}],
    "security_groups": [
        {"name": "web", "rules": [{"protocol": "tcp", "ports": 8080, "from": "10.0.0.0/8"}]}
    ],
    "ports": [{"name": "web-app", "server": "web", "network": "app", "security_groups": ["web"]}],
    "floating_ips": [
        {"name": "web-1-public", "server": "web-1", "external": "public", "network": "app"}
    ],
    "load_balancers": [
        {
            "name": "front",
            "network": "app",
            "listeners": [{"port": 80, "pool": "web"}],
            "pools": [{"name": "web", "members": "web", "port": 8080}],
        }
    ],
    "outputs": {
        "port": {"value": {"network_address": "web-app", "of": "port"}},
        "public": {"value": {"network_address": "web-1-public", "of": "floating_ip"}},
        "vip": {"value": {"network_address": "front", "of": "load_balancer"}},
    },
}


@pytest.fixture(scope="module")
def nova(netcloud: NetCloud, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Peer]:
    """The Nova harness (one fake-virt host) on the session's real Neutron."""
    tmp: Path = tmp_path_factory.mktemp("nova-neutron")
    peer = start_nova(tmp, hosts=1, zones=1, extra=["--neutron", netcloud.neutron.url])
    try:
        yield peer
    finally:
        peer.stop()


def _get(base: str, path: str, **headers: str) -> Any:
    r = httpx.get(base + path, headers=headers, timeout=60)
    assert r.status_code == 200, r.text
    return r.json()


def nova_servers(nova: Peer, cluster: str) -> dict[str, dict[str, Any]]:
    found = _get(
        nova.url,
        f"/servers/detail?tags={quote(f'shoal-cluster:{cluster}')}",
        **{"OpenStack-API-Version": "compute 2.74"},
    )["servers"]
    return {s["id"]: s for s in found}


def neutron(cloud: NetCloud, path: str) -> Any:
    return _get(cloud.neutron.url, "/v2.0" + path)


def pool_members(cloud: NetCloud, cluster: str) -> set[str]:
    """The addresses of the members of the cluster's balancer's pools, as Octavia lists them."""
    tag = quote(f"shoal-cluster:{cluster}")
    lbs = _get(cloud.octavia.url, f"/v2/lbaas/loadbalancers?tags={tag}")["loadbalancers"]
    addresses: set[str] = set()
    for lb in lbs:
        for pool in _get(cloud.octavia.url, f"/v2/lbaas/pools?loadbalancer_id={lb['id']}")["pools"]:
            members = _get(cloud.octavia.url, f"/v2/lbaas/pools/{pool['id']}/members")["members"]
            addresses |= {m["address"] for m in members}
    return addresses


def test_a_cluster_with_networks_boots_on_real_nova_and_neutron_and_goes_whole(
    netcloud: NetCloud, nova: Peer, start_server: StartServer
) -> None:
    options = {
        **netcloud.provider_options(),
        "compute_endpoint": nova.url,
        "network": "none",
        "mode": "admin",
        "boot_timeout_s": 120,
    }
    server = start_server(provider="openstack", provider_options=options, extra=MANAGED)
    with server.client() as client:
        r = client.post("/v1/clusters", json=DOCUMENT)
        wait_ok(client, r)
        cid = r.json()["cluster"]["id"]
        assert get_cluster(client, cid)["status"] == "ACTIVE"
        nodes = {n["name"]: n for n in node_list(client, cid)}
        assert set(nodes) == {"web-1", "web-2"}

        # Nova booted each server on the port Shoal made for its node, bound to its host.
        servers = nova_servers(nova, cid)
        ports = {
            p["device_id"]: p
            for p in neutron(netcloud, f"/ports?tags=shoal-cluster:{cid}")["ports"]
        }
        made = books(cid, netcloud.neutron.url, netcloud.octavia.url)
        assert (made.duplicates, made.unkeyed) == (0, 0), made
        groups = neutron(netcloud, f"/security-groups?tags=shoal-cluster:{cid}")["security_groups"]
        assert len(groups) == 1, [(g["name"], g["tags"], g["created_at"]) for g in groups]
        group = groups[0]
        fixed: dict[str, str] = {}
        floating: dict[str, list[str]] = {}
        for name, node in nodes.items():
            s = servers[node["physical_id"]]
            assert s["status"] == "ACTIVE", s
            port = ports[s["id"]]
            assert port["binding:host_id"] == s["OS-EXT-SRV-ATTR:host"] == node["host"]
            assert port["binding:vif_type"] == "ovs" and port["status"] == "ACTIVE"
            assert port["security_groups"] == [group["id"]]
            address = port["fixed_ips"][0]["ip_address"]
            assert address.startswith("10.90.0.")
            # Nova's view of the server is Neutron's port, and Shoal recorded the address.
            (nova_ips,) = s["addresses"].values()
            by_type = {
                kind: [a["addr"] for a in nova_ips if a["OS-EXT-IPS:type"] == kind]
                for kind in ("fixed", "floating")
            }
            assert by_type["fixed"] == [address]
            floating[name] = by_type["floating"]
            assert node["address"] == address
            fixed[name] = address
        (fip,) = neutron(netcloud, f"/floatingips?tags=shoal-cluster:{cid}")["floatingips"]
        assert fip["port_id"] == ports[nodes["web-1"]["physical_id"]]["id"]
        # Nova lists the floating IP beside the fixed one (Neutron's port, in its cache).
        assert floating == {"web-1": [fip["floating_ip_address"]], "web-2": []}

        # The pool follows the group: its members are the servers' fixed IPs.
        eventually(lambda: pool_members(netcloud, cid) == set(fixed.values()), timeout_s=120)

        # What the cloud assigned is recorded and resolves the outputs.
        def outputs() -> dict[str, Any] | None:
            out = {o["name"]: o for o in get_cluster(client, cid)["outputs"]}
            return out if all(o["status"] == "ready" for o in out.values()) else None

        out = eventually(outputs, timeout_s=120)
        assert out["port"]["value"] == fixed["web-1"]
        assert out["public"]["value"] == fip["floating_ip_address"]
        assert out["vip"]["value"]

        # A scale-in removes a server, its port and its member.
        scale(client, cid, "scale_in", 1, "web")
        left = {n["name"]: n for n in node_list(client, cid)}
        assert len(left) == 1
        assert len(set(fixed) - set(left)) == 1
        expected = {fixed[name] for name in left}
        eventually(lambda: pool_members(netcloud, cid) == expected, timeout_s=120)
        assert set(nova_servers(nova, cid)) == {n["physical_id"] for n in left.values()}
        # The removed server's port (and floating IP, if it had it) went after it.
        held = neutron(netcloud, f"/ports?tags=shoal-cluster:{cid}")["ports"]
        assert {p["fixed_ips"][0]["ip_address"] for p in held} == expected
        fips = neutron(netcloud, f"/floatingips?tags=shoal-cluster:{cid}")["floatingips"]
        assert [f["floating_ip_address"] for f in fips] == floating[next(iter(left))]

        r = client.delete(f"/v1/clusters/{cid}")
        wait_ok(client, r)
        # The cluster's networks go on the engine's next pass over clusters gone from the store.
        eventually(
            lambda: books(cid, netcloud.neutron.url, netcloud.octavia.url).resources == 0,
            timeout_s=120,
        )

    # Nothing left in any of the three services, each listed on its own.
    assert nova_servers(nova, cid) == {}
    server_ids = {n["physical_id"] for n in nodes.values()}
    assert not [p for p in neutron(netcloud, "/ports")["ports"] if p["device_id"] in server_ids]
    for kind in ("networks", "subnets", "routers", "security-groups", "ports", "floatingips"):
        assert neutron(netcloud, f"/{kind}?tags=shoal-cluster:{cid}")[kind.replace("-", "_")] == []
    tag = quote(f"shoal-cluster:{cid}")
    lbs = _get(netcloud.octavia.url, f"/v2/lbaas/loadbalancers?tags={tag}")["loadbalancers"]
    assert [lb for lb in lbs if lb["provisioning_status"] != "DELETED"] == []
