"""Addresses a simulated cloud assigns by itself: deterministic picks from a range.

A document may leave a named port's fixed IP, a floating IP's address or a balancer's VIP open
for the cloud to choose (docs/networks.md). Neutron and Octavia choose on `openstack`; the `sim`
provider has no such service, so it picks here: the same cluster, name and range give the same
address on every run and in every process (a hash of the key, stepping past what is taken), so
outputs and deployments' inputs that take such an address resolve, and resolve the same after a
restart. Pure: no I/O, bounded work per pick.
"""

from __future__ import annotations

import hashlib
from ipaddress import IPv4Network

from shoal.model.networks import IpNetwork, NetworkSpec

FLOATING_POOL = IPv4Network("100.64.0.0/10")
"""Where simulated floating IPs come from (the shared address space of RFC 6598: public-looking,
never routed on the internet); an external network's name picks the address within it."""

MAX_STEPS = 4096
"""At most this many addresses are tried past a pick's first choice (a /29 has 5 to offer)."""


def reserved(spec: NetworkSpec) -> set[str]:
    """What no pick may take: every address the document gives (fixed IPs, floating IPs, VIPs)
    and every subnet's gateway (the first host address unless given)."""
    out: set[str] = {str(p.fixed_ip) for p in spec.ports if p.fixed_ip is not None}
    out |= {str(f.address) for f in spec.floating_ips if f.address is not None}
    out |= {str(lb.vip_address) for lb in spec.load_balancers if lb.vip_address is not None}
    for net in spec.networks:
        for s in net.subnets:
            if s.gateway is not None:
                out.add(str(s.gateway))
            elif s.cidr.num_addresses > 2:
                out.add(str(s.cidr.network_address + 1))
    return out


def pick(cidr: IpNetwork, key: str, taken: set[str]) -> str | None:
    """A host address of `cidr` chosen by `key` (never its network or broadcast address, nor
    one in `taken`), added to `taken`; None when the range has none left within `MAX_STEPS`."""
    first = 1 if cidr.num_addresses > 2 else 0
    hosts = cidr.num_addresses - (2 if cidr.num_addresses > 2 else 0)
    if hosts <= 0:
        return None
    start = int.from_bytes(hashlib.sha256(key.encode()).digest()[:16], "big") % hosts
    for step in range(min(hosts, MAX_STEPS)):
        address = str(cidr.network_address + first + (start + step) % hosts)
        if address not in taken:
            taken.add(address)
            return address
    return None


def network_range(spec: NetworkSpec, network: str | None) -> IpNetwork | None:
    """The first subnet's range of the cluster's network `network` (None: its first network)."""
    nets = [n for n in spec.networks if network is None or n.name == network]
    for n in nets:
        for s in n.subnets:
            return s.cidr
    return None


def floating_range(external: str) -> IpNetwork:
    """The /20 of `FLOATING_POOL` that external network `external` hands floating IPs from."""
    n = int.from_bytes(hashlib.sha256(external.encode()).digest()[:4], "big") % 1024
    return IPv4Network((int(FLOATING_POOL.network_address) + n * 4096, 20))
