"""The cluster's servers as the second level's places: what the first level decided (each
server's host and zone) and what its flavor holds, so a workload's rules over host or zone
are kept on the hosts and zones its servers really are on."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from shoal.model.cluster import ClusterSpec
from shoal.model.inventory import Flavor
from shoal.model.profile import ServerProfile
from shoal.placement.result import Assignment, ReplicaAssignment
from shoal.placement.workloads.problem import NodeSlot, WorkloadPlacement


def node_slots(
    spec: ClusterSpec, assignments: Iterable[Assignment], lost: frozenset[str] = frozenset()
) -> list[NodeSlot]:
    """Every server of the placement (volumes carry no containers), but those in `lost`."""
    flavors: dict[str, Flavor] = {}
    labels: dict[str, Mapping[str, str]] = {}
    for g in spec.node_groups:
        labels[g.name] = g.labels
        for p in g.parts:
            if isinstance(p.profile, ServerProfile):
                flavors[p.profile.flavor.name] = p.profile.flavor
    for i in spec.instances:
        if isinstance(i.profile, ServerProfile):
            flavors[i.profile.flavor.name] = i.profile.flavor
    slots = []
    for a in assignments:
        if a.kind != "server" or a.node in lost:
            continue
        f = flavors.get(a.flavor or "")
        slots.append(
            NodeSlot(
                a.node,
                a.group,
                f.vcpus * 1000 if f is not None else 0,
                f.ram_mb if f is not None else 0,
                host=a.host,
                zone=a.zone,
                labels=labels.get(a.group, {}),
            )
        )
    return slots


def replica_rows(
    placed: WorkloadPlacement, slots: Iterable[NodeSlot]
) -> tuple[ReplicaAssignment, ...]:
    where = {s.node: s for s in slots}
    rows = []
    for replica, node in sorted(placed.node_of.items(), key=lambda x: _order(x[0])):
        s = where[node]
        rows.append(
            ReplicaAssignment(
                replica, placed.workload_of[replica], node, s.host or "", s.zone or ""
            )
        )
    return tuple(rows)


def _order(replica: str) -> tuple[str, int]:
    name, _, index = replica.rpartition("-")
    return (name, int(index) if index.isdigit() else 0)
