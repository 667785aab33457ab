"""Neutron and Octavia resource types in HOT: checked and recorded, then mapped onto the
cluster's networking (`documents/hot/netmap.py`) once every resource of the template is known.

The handlers only check each resource's properties (unknown ones are problems, as Heat's own
validation makes them) and keep the evaluated properties on the shape: a subnet names its
network, a port its network and groups, a listener its load balancer, all through
`get_resource`, which is resolved when the whole template has been read.
"""

from __future__ import annotations

from shoal.documents.hot.context import Resource, StackView, check_props
from shoal.documents.hot.shapes import NetResource

_COMMON = frozenset({"name", "description", "tags", "value_specs", "admin_state_up"})

PROPERTIES: dict[str, frozenset[str]] = {
    "OS::Neutron::Net": _COMMON
    | {
        "shared",
        "tenant_id",
        "port_security_enabled",
        "dns_domain",
        "qos_policy",
        "dhcp_agent_ids",
    },
    "OS::Neutron::Subnet": _COMMON
    | {
        "network",
        "network_id",
        "cidr",
        "ip_version",
        "dns_nameservers",
        "gateway_ip",
        "enable_dhcp",
        "allocation_pools",
        "host_routes",
        "tenant_id",
        "ipv6_address_mode",
        "ipv6_ra_mode",
        "subnetpool",
        "prefixlen",
        "segment",
    },
    "OS::Neutron::Router": _COMMON | {"external_gateway_info", "l3_agent_ids", "distributed", "ha"},
    "OS::Neutron::RouterInterface": frozenset(
        {"router", "router_id", "subnet", "subnet_id", "port", "port_id"}
    ),
    "OS::Neutron::Port": _COMMON
    | {
        "network",
        "network_id",
        "fixed_ips",
        "security_groups",
        "mac_address",
        "device_id",
        "device_owner",
        "allowed_address_pairs",
        "binding:vnic_type",
        "port_security_enabled",
        "replacement_policy",
        "qos_policy",
        "dns_name",
    },
    "OS::Neutron::SecurityGroup": frozenset({"name", "description", "rules", "tags"}),
    "OS::Neutron::SecurityGroupRule": frozenset(
        {
            "security_group",
            "description",
            "direction",
            "ethertype",
            "port_range_min",
            "port_range_max",
            "protocol",
            "remote_group",
            "remote_ip_prefix",
        }
    ),
    "OS::Neutron::FloatingIP": frozenset(
        {
            "floating_network",
            "floating_network_id",
            "port_id",
            "fixed_ip_address",
            "floating_ip_address",
            "value_specs",
            "dns_name",
            "dns_domain",
            "floating_subnet",
        }
    ),
    "OS::Neutron::FloatingIPAssociation": frozenset(
        {"floatingip_id", "port_id", "fixed_ip_address"}
    ),
    "OS::Octavia::LoadBalancer": frozenset(
        {
            "name",
            "description",
            "vip_subnet",
            "vip_address",
            "vip_network",
            "provider",
            "admin_state_up",
            "tenant_id",
            "flavor",
            "availability_zone",
        }
    ),
    "OS::Octavia::Listener": frozenset(
        {
            "name",
            "description",
            "loadbalancer",
            "protocol",
            "protocol_port",
            "default_pool",
            "connection_limit",
            "admin_state_up",
            "default_tls_container_ref",
            "sni_container_refs",
            "tenant_id",
            "allowed_cidrs",
        }
    ),
    "OS::Octavia::Pool": frozenset(
        {
            "name",
            "description",
            "listener",
            "loadbalancer",
            "protocol",
            "lb_algorithm",
            "session_persistence",
            "admin_state_up",
            "tls_enabled",
        }
    ),
    "OS::Octavia::PoolMember": frozenset(
        {
            "pool",
            "address",
            "protocol_port",
            "subnet",
            "weight",
            "admin_state_up",
            "monitor_address",
            "monitor_port",
            "backup",
        }
    ),
    "OS::Octavia::HealthMonitor": frozenset(
        {
            "pool",
            "type",
            "delay",
            "timeout",
            "max_retries",
            "max_retries_down",
            "url_path",
            "expected_codes",
            "http_method",
            "admin_state_up",
            "tenant_id",
        }
    ),
}

_REQUIRED: dict[str, tuple[str, ...]] = {
    "OS::Neutron::SecurityGroupRule": ("security_group",),
    "OS::Neutron::FloatingIPAssociation": ("floatingip_id", "port_id"),
    "OS::Octavia::Listener": ("protocol", "protocol_port"),
    "OS::Octavia::Pool": ("lb_algorithm", "protocol"),
    "OS::Octavia::PoolMember": ("pool", "address", "protocol_port"),
    "OS::Octavia::HealthMonitor": ("pool", "type", "delay", "timeout", "max_retries"),
}


def record(stack: StackView, res: Resource, props: dict[str, object]) -> None:
    kind = res.type
    check_props(res, props, stack.ctx.report, PROPERTIES[kind], _REQUIRED.get(kind, ()))
    stack.shape.network.append(NetResource(kind, res.name, res.path, dict(props)))


HANDLERS = {kind: record for kind in PROPERTIES}
