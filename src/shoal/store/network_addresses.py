"""Addresses the cloud assigned to a cluster's own networking (issue 26): a port's fixed IP
Neutron picked, a floating IP's address, a balancer's VIP Octavia picked. The engine's
networking sync writes them (replacing the cluster's whole set when it changed); outputs read
them, so `{network_address: ...}` resolves instead of staying `pending`."""

from __future__ import annotations

from collections.abc import Mapping

from sqlalchemy import Connection, delete, insert, select

from shoal.model.outputs import NetAttr, NetworkFact
from shoal.store.tables import network_addresses

_t = network_addresses.c


def for_cluster(conn: Connection, cluster_id: str) -> dict[NetworkFact, str]:
    rows = conn.execute(
        select(_t.attr, _t.name, _t.address).where(_t.cluster_id == cluster_id)
    ).all()
    out: dict[NetworkFact, str] = {}
    for attr, name, address in rows:
        try:
            out[NetworkFact(NetAttr(attr), str(name))] = str(address)
        except ValueError:  # an attribute a later version wrote: not ours to read
            continue
    return out


def replace_for(
    conn: Connection, cluster_id: str, found: Mapping[NetworkFact, str], now: float
) -> None:
    """The cluster's recorded addresses become exactly `found`."""
    conn.execute(delete(network_addresses).where(_t.cluster_id == cluster_id))
    if found:
        conn.execute(
            insert(network_addresses),
            [
                {
                    "cluster_id": cluster_id,
                    "attr": fact.attr.value,
                    "name": fact.name,
                    "address": address,
                    "updated_at": now,
                }
                for fact, address in sorted(found.items(), key=lambda kv: (kv[0].attr, kv[0].name))
            ],
        )
