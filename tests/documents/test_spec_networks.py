"""The document's networking (docs/networks.md): read into `NetworkSpec`, refused with pointers
(all problems at once), bounded, and written back by the exporter unchanged."""

from __future__ import annotations

import json
from ipaddress import ip_address, ip_network

import pytest

from shoal.documents import load_cluster
from shoal.documents.export import to_document
from shoal.model import Inventory
from shoal.model.members import MemberRef
from shoal.model.networks import (
    LIMITS,
    CidrSource,
    GroupSource,
    LbProtocol,
    MemberSource,
    MonitorType,
    Protocol,
)
from tests.documents.support import ProblemsOf

HEAD = """
name: shop
instances:
  - name: bastion
    profile: {type: server, flavor: m1.small, image: cirros}
  - name: disk
    profile: {type: volume, size: 1}
node_groups:
  - name: web
    profile: {type: server, flavor: m1.small, image: cirros}
    count: 2
  - name: db
    profile: {type: server, flavor: m1.small, image: cirros}
    count: 1
"""

GOOD = (
    HEAD
    + """
networks:
  - name: app
    cidr: 10.10.0.0/24
    dns: [1.1.1.1]
    router: public
  - name: data
    subnets:
      - {name: data-a, cidr: 10.20.0.0/24, gateway: 10.20.0.254}
      - {name: data-v6, cidr: "fd00:20::/64", dhcp: false}
    router: {name: edge, external: public}
security_groups:
  - name: web
    description: the front
    rules:
      - {ports: 80, from: 0.0.0.0/0}
      - {protocol: tcp, ports: "8000-8100", from: {group: db}}
      - {protocol: icmp}
  - name: db
    rules:
      - {ports: 5432, from: {member: web}}
      - {direction: egress, protocol: udp, ports: 53, from: {cidr: 10.0.0.0/8}}
ports:
  - {server: web, network: app, security_groups: [web]}
  - {server: db, network: data, security_groups: [db]}
  - {server: bastion, network: app, fixed_ip: 10.10.0.5, name: bastion-port}
floating_ips:
  - {server: web-1, external: public, network: app}
  - {name: jump, server: bastion, external: public, address: 203.0.113.9}
load_balancers:
  - name: front
    network: app
    vip: 10.10.0.100
    listeners: [{port: 80, protocol: HTTP, pool: web}, {name: raw, port: 81, pool: web}]
    pools:
      - name: web
        members: web
        port: 8080
        protocol: HTTP
        algorithm: LEAST_CONNECTIONS
        health: {type: HTTP, delay: 2, timeout: 1, url_path: /healthz}
"""
)


def test_reads_every_section(inventory: Inventory) -> None:
    net = load_cluster(GOOD, inventory).networking
    app, data = net.networks
    assert app.subnets[0].cidr == ip_network("10.10.0.0/24")
    assert app.subnets[0].dns == (ip_address("1.1.1.1"),)
    assert app.router is not None and app.router.external_network == "public"
    assert [s.name for s in data.subnets] == ["data-a", "data-v6"]
    assert data.router is not None and data.router.name == "edge"
    web = net.security_group("web")
    assert web is not None
    assert web.rules[0].source == CidrSource(ip_network("0.0.0.0/0"))
    assert (web.rules[1].port_min, web.rules[1].port_max) == (8000, 8100)
    assert web.rules[1].source == GroupSource("db")
    assert web.rules[2].protocol is Protocol.ICMP and web.rules[2].port_min is None
    db = net.security_group("db")
    assert db is not None and db.rules[0].source == MemberSource(MemberRef("web"))
    assert net.groups_of("web") == ("web",)
    assert net.ports[2].fixed_ip == ip_address("10.10.0.5")
    assert [f.name for f in net.floating_ips] == ["web-1-fip", "jump"]
    (lb,) = net.load_balancers
    assert lb.vip_address == ip_address("10.10.0.100")
    assert [x.name for x in lb.listeners] == ["http-80", "raw"]
    pool = lb.pool("web")
    assert pool is not None and pool.members == MemberRef("web") and pool.member_port == 8080
    assert pool.protocol is LbProtocol.HTTP
    assert pool.monitor is not None and pool.monitor.type is MonitorType.HTTP
    assert pool.monitor.url_path == "/healthz"


def test_export_round_trip(inventory: Inventory) -> None:
    spec = load_cluster(GOOD, inventory)
    again = load_cluster(json.dumps(to_document(spec)), inventory)
    assert again == spec
    assert again.networking == spec.networking


def test_without_networking_nothing_changes(inventory: Inventory) -> None:
    spec = load_cluster(HEAD, inventory)
    assert spec.networking.empty
    assert not {"networks", "ports", "load_balancers"} & set(to_document(spec))


BAD = (
    HEAD
    + """
networks:
  - name: app
    cidr: 10.10.0.0/24
  - name: other
    cidr: 10.10.0.128/25
  - name: bits
    cidr: 10.20.0.1/24
  - name: huge
    cidr: 16.0.0.0/4
security_groups:
  - name: web
    rules:
      - {protocol: tcp, ports: 80, from: {group: nosuch}}
      - {protocol: icmp, ports: 80}
      - {protocol: tcp, ports: 70000, from: {member: wbe}}
      - {ports: 90-80, from: {member: disk}}
      - {from: {cidr: 10.0.0.0/8, group: web}}
ports:
  - {server: web, network: nonet, security_groups: [ghost]}
  - {server: web, network: app, fixed_ip: 10.10.0.5}
  - {server: bastion, network: app, fixed_ip: 10.10.1.5}
floating_ips:
  - {server: web-7, external: public}
load_balancers:
  - name: front
    network: app
    vip: 10.99.0.1
    listeners: [{port: 80, pool: missing}, {port: 80, pool: p}]
    pools: [{name: p, members: api, port: 8080, health: {delay: 1, timeout: 5}}]
"""
)


def test_every_problem_at_once_with_pointers(problems_of: ProblemsOf) -> None:
    found = {p.path: p.message for p in problems_of(BAD)}
    expected = {
        "/networks/1/cidr": "overlaps 10.10.0.0/24",
        "/networks/2/cidr": "host bits set",
        "/networks/3/cidr": "prefix is /8 to /29",
        "/security_groups/0/rules/0/from/group": "no security group 'nosuch'",
        "/security_groups/0/rules/1/ports": "has no ports",
        "/security_groups/0/rules/2/ports": "1 to 65535",
        "/security_groups/0/rules/2/from/member": "did you mean 'web'",
        "/security_groups/0/rules/3/ports": "backwards",
        "/security_groups/0/rules/3/from/member": "is a volume",
        "/security_groups/0/rules/4/from": "exactly one of",
        "/ports/0/network": "no network 'nonet'",
        "/ports/0/security_groups/0": "no security group 'ghost'",
        "/ports/1/fixed_ip": "node group",
        "/ports/2/fixed_ip": "outside network app",
        "/floating_ips/0/server": "2 replicas",
        "/load_balancers/0/vip": "outside network app",
        "/load_balancers/0/listeners/0/pool": "no pool 'missing'",
        "/load_balancers/0/listeners/1/port": "already taken",
        "/load_balancers/0/pools/0/members": "'api', which is no node group",
        "/load_balancers/0/pools/0/health/timeout": "must not exceed the delay",
    }
    for path, words in expected.items():
        assert path in found, (path, found)
        assert words in found[path], (path, found[path])


@pytest.mark.parametrize(
    ("key", "limit", "item"),
    [
        ("networks", LIMITS.networks, "{name: n, cidr: 10.0.0.0/24}"),
        ("security_groups", LIMITS.security_groups, "{name: g}"),
        ("ports", LIMITS.ports, "{server: web, network: n}"),
        ("load_balancers", LIMITS.load_balancers, "{name: b}"),
    ],
)
def test_counts_are_bounded_before_reading(
    problems_of: ProblemsOf, key: str, limit: int, item: str
) -> None:
    body = HEAD + f"{key}:\n" + "".join(f"  - {item}\n" for _ in range(limit + 1))
    problems = problems_of(body)
    assert [p.path for p in problems] == [f"/{key}"]
    assert f"at most {limit}" in problems[0].message


def test_gateway_and_fixed_ip_edges(problems_of: ProblemsOf) -> None:
    body = (
        HEAD
        + """
networks:
  - {name: app, cidr: 10.10.0.0/24, gateway: 10.11.0.1, dns: [not-an-ip]}
  - {name: b, cidr: 10.30.0.0/24}
ports:
  - {server: bastion, network: b, fixed_ip: 10.30.0.1}
  - {server: db, network: b, fixed_ip: 10.30.0.255}
  - {server: disk, network: b}
"""
    )
    found: dict[str, str] = {}
    for p in problems_of(body):
        found[p.path] = found.get(p.path, "") + p.message + "; "
    assert "outside 10.10.0.0/24" in found["/networks/0/gateway"]
    assert "not a DNS server" in found["/networks/0/dns/0"]
    assert "gateway" in found["/ports/0/fixed_ip"]
    assert "node group" in found["/ports/1/fixed_ip"]
    assert "broadcast" in found["/ports/1/fixed_ip"]
    assert "volume" in found["/ports/2/server"]


WORKLOAD_POOLS = (
    HEAD
    + """
networks:
  - {name: app, cidr: 10.10.0.0/24}
workloads:
  api:
    replicas: 2
    containers: [{name: api, image: img, ports: [9000, {port: 8080, name: http}]}]
  quiet:
    replicas: 1
    containers: [{name: q, image: img}]
load_balancers:
  - name: front
    network: app
    listeners:
      - {port: 80, pool: named}
      - {port: 81, pool: given}
      - {port: 82, pool: wrong}
      - {port: 83, pool: none}
    pools:
      - {name: named, members: api}
      - {name: given, members: api, port: 9000}
      - {name: wrong, members: api, port: 7000}
      - {name: none, members: quiet}
"""
)


def test_pools_over_workloads(inventory: Inventory, problems_of: ProblemsOf) -> None:
    found = {p.path: p.message for p in problems_of(WORKLOAD_POOLS)}
    assert set(found) == {"/load_balancers/0/pools/2/port", "/load_balancers/0/pools/3/port"}
    assert "binds no port 7000 (its ports: 8080, 9000)" in found["/load_balancers/0/pools/2/port"]
    assert "workload quiet binds no port" in found["/load_balancers/0/pools/3/port"]
    good = WORKLOAD_POOLS.replace("      - {port: 82, pool: wrong}\n", "").replace(
        "      - {port: 83, pool: none}\n", ""
    )
    good = good.replace("      - {name: wrong, members: api, port: 7000}\n", "").replace(
        "      - {name: none, members: quiet}\n", ""
    )
    spec = load_cluster(good, inventory)
    pools = spec.networking.load_balancers[0].pools
    assert [(p.members, p.member_port) for p in pools] == [
        (MemberRef("api"), 8080),  # the named port
        (MemberRef("api"), 9000),
    ]
    again = load_cluster(json.dumps(to_document(spec)), inventory)
    assert again.networking == spec.networking
