"""Which `get_attr` of a Neutron or Octavia resource names an address of the cluster's own
networking: shared by the outputs' mapping (`outputs.py`) and the deployments' (`deployments.py`)
so both take the same attributes."""

from __future__ import annotations

from collections.abc import Sequence

from shoal.model.networks import NetworkSpec
from shoal.model.outputs import NetAttr, NetworkFact

_NET_ATTRS: dict[tuple[str, tuple[str, ...]], NetAttr] = {
    ("OS::Neutron::Port", ("fixed_ips", "0", "ip_address")): NetAttr.PORT_ADDRESS,
    ("OS::Neutron::FloatingIP", ("floating_ip_address",)): NetAttr.FLOATING_IP_ADDRESS,
    ("OS::Octavia::LoadBalancer", ("vip_address",)): NetAttr.VIP_ADDRESS,
}


def net_attr(kind: str, path: Sequence[object]) -> NetAttr | None:
    """The address `get_attr: [R, *path]` of a resource of type `kind` names, if any."""
    return _NET_ATTRS.get((kind, tuple(str(p) for p in path)))


def owned(net: NetworkSpec | None, attr: NetAttr, name: str) -> NetworkFact | None:
    """The fact, when `name` is one of the cluster's own ports / floating IPs / balancers
    (netmap.py leaves out one on a network the cluster does not own)."""
    net = net or NetworkSpec()
    names: set[str | None]
    if attr is NetAttr.PORT_ADDRESS:
        names = {p.name for p in net.ports}
    elif attr is NetAttr.FLOATING_IP_ADDRESS:
        names = {f.name for f in net.floating_ips}
    else:
        names = {b.name for b in net.load_balancers}
    return NetworkFact(attr, name) if name in names else None
