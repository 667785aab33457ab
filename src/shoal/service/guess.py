"""Admission's dry run made before the placement lock, and the check that it still holds.

Admission once placed every change while holding the placement lock, which every other
admission and every engine's planning wait for: a scale-out of a 100,000-node cluster held
everybody up for the whole solve (issue 23). Now `_submit` first places the change on a
snapshot without the lock (the guess), then, holding the lock, keeps the guess only if the
cluster is as the guess read it (generation, document, every node's id, name, host and
status), the edits gave the same document and victims, and the new nodes still fit on their
hosts beside what everybody holds now: a compare-and-set in O(hosts + the cluster's nodes),
as the engine's planner does with its claims. Otherwise it places again under the lock, as
before. Nothing here is a store write; the lock's holder writes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from shoal.model.cluster import ClusterSpec
from shoal.model.inventory import Inventory
from shoal.model.nodes import Demand, demand_of
from shoal.placement import PlacementResult
from shoal.store import nodes as node_repo
from shoal.store.database import Connection
from shoal.store.records import ClusterRecord, NodeRecord

Placed = tuple[ClusterSpec, PlacementResult]


def _node_keys(nodes: list[NodeRecord]) -> list[tuple[str, str, str | None, str]]:
    return [(n.id, n.name, n.host, str(n.status)) for n in nodes]


@dataclass(frozen=True, slots=True)
class Guess:
    """A dry run on a snapshot: what it read, and what it chose."""

    cluster: ClusterRecord | None
    node_keys: list[tuple[str, str, str | None, str]]
    document: dict[str, Any]
    victims: tuple[str, ...]
    chosen: list[str]
    placed: Placed

    @staticmethod
    def of(
        cluster: ClusterRecord | None,
        nodes: list[NodeRecord],
        document: dict[str, Any],
        victims: tuple[str, ...],
        chosen: list[str],
        placed: Placed,
    ) -> Guess:
        return Guess(cluster, _node_keys(nodes), document, victims, chosen, placed)

    def holds(
        self,
        conn: Connection,
        cluster: ClusterRecord | None,
        nodes: list[NodeRecord],
        document: dict[str, Any],
        victims: tuple[str, ...],
        inventory: Inventory,
    ) -> bool:
        """Under the placement lock: the cluster, the edits' outcome and the free capacity
        still allow the guessed placement."""
        if document != self.document or victims != self.victims:
            return False
        if (cluster is None) != (self.cluster is None):
            return False
        if cluster is not None and self.cluster is not None:
            if cluster.id != self.cluster.id or cluster.generation != self.cluster.generation:
                return False
            if cluster.document != self.cluster.document:
                return False
        if _node_keys(nodes) != self.node_keys:
            return False
        return fits_now(conn, cluster, nodes, *self.placed, inventory)


def held_by_host(desired: ClusterSpec, result: PlacementResult) -> dict[str, tuple[int, Demand]]:
    """What the placement's new nodes take, host by host (count, demand)."""
    # A node's demand is its group part's (an instance's: its own): looked up per (group,
    # part), not by expanding the cluster into its nodes once more.
    demands: dict[tuple[str, str | None], Demand] = {
        (i.name, None): demand_of(i.profile) for i in desired.instances
    }
    for g in desired.node_groups:
        demands.update({(g.name, p.part): demand_of(p.profile) for p in g.parts})
    held: dict[str, tuple[int, Demand]] = {}
    for a in result.assignments:
        demand = demands.get((a.group, a.part))
        if a.existing or demand is None:
            continue
        count, total = held.get(a.host, (0, Demand()))
        held[a.host] = (count + 1, total + demand)
    return held


def fits_now(
    conn: Connection,
    cluster: ClusterRecord | None,
    nodes: list[NodeRecord],
    desired: ClusterSpec,
    result: PlacementResult,
    inventory: Inventory,
) -> bool:
    """Whether the placement's new nodes fit now: on each host they go to, what other clusters
    hold and reserve, every node of this cluster (those leaving too: cautious) and the new
    ones, within the host's capacity."""
    wanted = held_by_host(desired, result)
    if not wanted:
        return True
    used = node_repo.used_capacity(conn, exclude_cluster=cluster.id if cluster else None)
    for n in nodes:
        if n.host:
            used[n.host] = used.get(n.host, Demand()) + Demand(
                n.vcpus, n.ram_mb, n.disk_gb, n.volume_gb
            )
    hosts = {h.name: h for h in inventory.hosts}
    for name, (_, demand) in wanted.items():
        h = hosts.get(name)
        if h is None:
            return False
        u = used.get(name, Demand()) + demand
        if u.vcpus > h.vcpus or u.ram_mb > h.ram_mb or u.disk_gb > h.disk_gb:
            return False
        if u.volume_gb > h.volume_gb:
            return False
    return True
