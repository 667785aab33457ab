"""Neutron and Octavia resources of a HOT template read into the cluster's networking, checked
by the same reader as a native document's (problems point back at the resource)."""

from __future__ import annotations

import json
from ipaddress import ip_address, ip_network

import pytest

from shoal.documents import load_cluster
from shoal.documents.export import to_document
from shoal.model import InvalidDocument, Inventory
from shoal.model.members import MemberRef
from shoal.model.networks import GroupSource, MemberSource, Protocol

TEMPLATE = """
heat_template_version: 2018-08-31
parameters:
  cidr: {type: string, default: 10.50.0.0/24}
resources:
  net: {type: OS::Neutron::Net}
  subnet:
    type: OS::Neutron::Subnet
    properties: {network: {get_resource: net}, cidr: {get_param: cidr}, dns_nameservers: [8.8.8.8]}
  router:
    type: OS::Neutron::Router
    properties: {external_gateway_info: {network: public}}
  iface:
    type: OS::Neutron::RouterInterface
    properties: {router: {get_resource: router}, subnet: {get_resource: subnet}}
  web_sg:
    type: OS::Neutron::SecurityGroup
    properties:
      rules:
        - {protocol: tcp, port_range_min: 80, port_range_max: 80, remote_ip_prefix: 0.0.0.0/0}
        - {protocol: icmp}
  db_sg: {type: OS::Neutron::SecurityGroup}
  db_rule:
    type: OS::Neutron::SecurityGroupRule
    properties:
      security_group: {get_resource: db_sg}
      protocol: tcp
      port_range_min: 5432
      port_range_max: 5432
      remote_group: {get_resource: web_sg}
  web_port:
    type: OS::Neutron::Port
    properties:
      network: {get_resource: net}
      fixed_ips: [{ip_address: 10.50.0.10}]
      security_groups: [{get_resource: web_sg}]
  web:
    type: OS::Nova::Server
    properties: {flavor: m1.small, image: cirros, networks: [{port: {get_resource: web_port}}]}
  db_port:
    type: OS::Neutron::Port
    properties: {network: {get_resource: net}, security_groups: [{get_resource: db_sg}]}
  db:
    type: OS::Nova::Server
    properties: {flavor: m1.small, image: cirros, networks: [{port: {get_resource: db_port}}]}
  fip:
    type: OS::Neutron::FloatingIP
    properties: {floating_network: public}
  fip_assoc:
    type: OS::Neutron::FloatingIPAssociation
    properties: {floatingip_id: {get_resource: fip}, port_id: {get_resource: web_port}}
  lb:
    type: OS::Octavia::LoadBalancer
    properties: {vip_subnet: {get_resource: subnet}, vip_address: 10.50.0.100}
  listener:
    type: OS::Octavia::Listener
    properties: {loadbalancer: {get_resource: lb}, protocol: HTTP, protocol_port: 80}
  pool:
    type: OS::Octavia::Pool
    properties: {listener: {get_resource: listener}, lb_algorithm: ROUND_ROBIN, protocol: HTTP}
  member:
    type: OS::Octavia::PoolMember
    properties:
      pool: {get_resource: pool}
      address: {get_attr: [web, first_address]}
      protocol_port: 8080
      subnet: {get_resource: subnet}
  monitor:
    type: OS::Octavia::HealthMonitor
    properties:
      pool: {get_resource: pool}
      type: HTTP
      delay: 5
      timeout: 3
      max_retries: 3
      url_path: /health
"""


def test_template_networking_reads_into_the_model(inventory: Inventory) -> None:
    spec = load_cluster(TEMPLATE, inventory)
    net = spec.networking
    (network,) = net.networks
    assert network.name == "net"
    assert network.subnets[0].cidr == ip_network("10.50.0.0/24")
    assert network.subnets[0].dns == (ip_address("8.8.8.8"),)
    assert network.router is not None and network.router.external_network == "public"
    web_sg = net.security_group("web_sg")
    db_sg = net.security_group("db_sg")
    assert web_sg is not None and db_sg is not None
    assert [r.protocol for r in web_sg.rules] == [Protocol.TCP, Protocol.ICMP]
    assert db_sg.rules[0].source == GroupSource("web_sg")
    assert (db_sg.rules[0].port_min, db_sg.rules[0].port_max) == (5432, 5432)
    ports = {p.name: p for p in net.ports}
    assert ports["web_port"].member == MemberRef("web")
    assert ports["web_port"].fixed_ip == ip_address("10.50.0.10")
    assert net.groups_of("db") == ("db_sg",)
    (fip,) = net.floating_ips
    assert (fip.server, fip.external_network) == ("web", "public")
    (lb,) = net.load_balancers
    assert lb.network == "net" and lb.vip_address == ip_address("10.50.0.100")
    pool = lb.pool("pool")
    assert pool is not None and pool.members == MemberRef("web") and pool.member_port == 8080
    assert pool.monitor is not None and pool.monitor.url_path == "/health"
    assert lb.listeners[0].pool == "pool"
    assert not isinstance(db_sg.rules[0].source, MemberSource)
    # stored as a native document, the networking comes back the same
    assert load_cluster(json.dumps(to_document(spec)), inventory) == spec


@pytest.mark.parametrize(
    ("before", "after", "where"),
    [
        ("default: 10.50.0.0/24", "default: 10.50.0.1/24", "/resources/net"),
        ("ip_address: 10.50.0.10", "ip_address: 10.99.0.10", "/resources/web_port"),
        ("address: {get_attr: [web, first_address]}", "address: 10.50.0.7", "/resources/pool"),
    ],
)
def test_template_problems_point_at_the_resource(
    inventory: Inventory, before: str, after: str, where: str
) -> None:
    with pytest.raises(InvalidDocument) as caught:
        load_cluster(TEMPLATE.replace(before, after), inventory)
    assert where in {p.path for p in caught.value.problems}, caught.value.problems
