"""One cluster's network side, made or deleted through the openstack provider, as a process of
its own so chaos runs can `kill -9` it at any moment and run it again.

    python drive.py create|delete CLUSTER NEUTRON_URL OCTAVIA_URL

`create` does what a cluster with networks asks of the provider: its networks (one routed to
the external network `public`), two security groups (one rule naming the other), a port per
member with a fixed IP, a floating IP for the first member, and a load balancer whose pool is
the members. `delete` removes all of it. Prints `DONE <json>` with the counts it saw.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from shoal.providers.openstack.netspec import (
    FloatingIpRequest,
    HealthMonitorSpec,
    LbProtocol,
    ListenerSpec,
    LoadBalancerRequest,
    Member,
    NetworkSpec,
    NetworksRequest,
    PoolSpec,
    PortRequest,
    RuleProtocol,
    RuleSpec,
    SecurityGroupSpec,
)
from shoal.providers.openstack.provider import OpenStackProvider
from shoal.providers.registry import make_provider

MEMBERS = 3


def networks_request(cluster: str) -> NetworksRequest:
    return NetworksRequest(
        cluster,
        networks=(
            NetworkSpec.single("front", "10.10.0.0/24", ("192.0.2.53",), external="public"),
            NetworkSpec.single("back", "10.20.0.0/24"),
        ),
        security_groups=(
            SecurityGroupSpec(
                "web",
                (
                    RuleSpec(RuleProtocol.TCP, 80, 80, remote_cidr="0.0.0.0/0"),
                    RuleSpec(RuleProtocol.ICMP, remote_cidr="10.10.0.0/24"),
                ),
            ),
            SecurityGroupSpec("db", (RuleSpec(RuleProtocol.TCP, 5432, 5432, remote_group="web"),)),
        ),
    )


def lb_request(cluster: str) -> LoadBalancerRequest:
    return LoadBalancerRequest(
        key="lb:web",
        cluster=cluster,
        name="web",
        network="front",
        listeners=(ListenerSpec(LbProtocol.TCP, 80),),
        pools=(PoolSpec(8080, health_monitor=HealthMonitorSpec()),),
    )


def member_address(i: int) -> str:
    return f"10.10.0.{10 + i}"


def options(neutron: str, octavia: str) -> dict[str, Any]:
    return {
        "auth_type": "none",
        "compute_endpoint": "http://127.0.0.1:9/v2.1",
        "network_endpoint": neutron,
        "load_balancer_endpoint": octavia,
        "poll_interval_s": 0.25,
        "boot_timeout_s": 300.0,
    }


async def create(p: OpenStackProvider, cluster: str) -> dict[str, Any]:
    await p.ensure_networks(networks_request(cluster))
    ports = []
    for i in range(MEMBERS):
        ports.append(
            await p.ensure_port(
                PortRequest(
                    f"port:n{i}:front", cluster, f"n{i}-front", "front", member_address(i), ("web",)
                )
            )
        )
    await p.ensure_floating_ip(FloatingIpRequest("fip:n0", cluster, "public", ports[0].id))
    await p.ensure_load_balancer(lb_request(cluster))
    lb = await p.set_members(
        cluster, "lb:web", [Member(f"n{i}", member_address(i), 8080) for i in range(MEMBERS)]
    )
    return {"ports": len(ports), "members": len(lb.members), "lb": lb.status}


async def main(argv: list[str]) -> None:
    action, cluster, neutron, octavia = argv
    p = make_provider("openstack", home=Path("."), options=options(neutron, octavia))
    assert isinstance(p, OpenStackProvider)
    try:
        if action == "create":
            out = await create(p, cluster)
        else:
            await p.delete_networks(cluster)
            out = {"left": len(await p.list_network_resources(cluster))}
    finally:
        await p.close()
    print("DONE " + json.dumps(out), flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
