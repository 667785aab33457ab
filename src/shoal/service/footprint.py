"""What a declared cluster takes, and the size bounds checked from it in O(groups).

Apart from `service/limits.py` (quotas, which read the store) so that `shoal plan`, which runs
offline, checks a document's size without importing SQLAlchemy (issue 37: a command answers
at once; `tests/cli/test_cli_light.py` holds it, `benchmarks/cli.py` measures it).
"""

from __future__ import annotations

from dataclasses import dataclass

from shoal.model.cluster import ClusterSpec
from shoal.model.inventory import Inventory
from shoal.model.nodes import Demand, demand_of
from shoal.model.problems import Problem
from shoal.service.errors import Invalid, Unplaceable

MAX_CLUSTER_NODES = 10_000
"""The default of the `max_cluster_nodes` setting."""


@dataclass(frozen=True, slots=True)
class Footprint:
    """What a whole declared cluster takes: nodes and capacity."""

    nodes: int
    demand: Demand
    per_group: tuple[tuple[str, int], ...]
    """(JSON pointer of a count, nodes it declares), for naming the field at fault."""


def footprint(spec: ClusterSpec) -> Footprint:
    total = Demand()
    nodes = 0
    per_group: list[tuple[str, int]] = []
    for inst in spec.instances:
        total = total + demand_of(inst.profile)
        nodes += 1
    for i, g in enumerate(spec.node_groups):
        unit = Demand()
        for p in g.parts:
            unit = unit + demand_of(p.profile)
        total = total + Demand(
            unit.vcpus * g.count,
            unit.ram_mb * g.count,
            unit.disk_gb * g.count,
            unit.volume_gb * g.count,
        )
        nodes += g.count * len(g.parts)
        per_group.append((f"/node_groups/{i}/count", g.count * len(g.parts)))
    return Footprint(nodes, total, tuple(per_group))


def pointer(fp: Footprint) -> str:
    """The count that contributes most: the field a user would change."""
    return max(fp.per_group, key=lambda x: x[1])[0] if fp.per_group else ""


def check_size(
    spec: ClusterSpec, inventory: Inventory, max_cluster_nodes: int = MAX_CLUSTER_NODES
) -> Footprint:
    """Refuse a cluster larger than the operator allows or than the whole inventory holds."""
    fp = footprint(spec)
    if fp.nodes > max_cluster_nodes:
        raise Invalid(
            f"cluster {spec.name} declares {fp.nodes} nodes; the most a cluster may have is "
            f"{max_cluster_nodes}",
            [Problem(pointer(fp), f"{fp.nodes} nodes > max_cluster_nodes {max_cluster_nodes}")],
        )
    capacity = Demand()
    for h in inventory.hosts:
        capacity = capacity + Demand(h.vcpus, h.ram_mb, h.disk_gb, h.volume_gb)
    over = [
        f"{what}: needs {need}, the whole inventory has {have}"
        for what, need, have in (
            ("vcpus", fp.demand.vcpus, capacity.vcpus),
            ("ram_mb", fp.demand.ram_mb, capacity.ram_mb),
            ("disk_gb", fp.demand.disk_gb, capacity.disk_gb),
            ("volume_gb", fp.demand.volume_gb, capacity.volume_gb),
        )
        if need > have
    ]
    if over:
        raise Unplaceable(
            f"cluster {spec.name} needs more than the whole inventory: " + "; ".join(over),
            [Problem(pointer(fp), m) for m in over],
        )
    return fp
