"""The deletion policy in the service's dry run: which replicas a shrinking node group loses.

The dry run orders each group's replicas with `planning.victim_order` and the group's policy
(`ClusterSpec.deletion_of`), lets `choose_replicas` keep the rest, and names the nodes it
dropped. The service records those names as the action's `victims`, which the engine's planner
removes first, so the nodes the dry run placed without are the nodes the engine deletes.
"""

from __future__ import annotations

from typing import Any

from shoal.documents.export import profile_document
from shoal.model.cluster import ClusterSpec, NodeGroup
from shoal.planning import ObservedNode, victim_order


def current_profile(group: NodeGroup) -> dict[str, Any]:
    """The group's profile as node rows store it; for a unit, each part's by part name."""
    if group.is_unit:
        return {str(p.part): profile_document(p.profile) for p in group.parts}
    return profile_document(group.parts[0].profile)


def victim_orders(
    spec: ClusterSpec, observed: list[ObservedNode], seed: int = 0
) -> dict[str, list[int]]:
    """Per node group, its replica indexes in the order its deletion policy removes them."""
    return {
        g.name: victim_order(
            spec.deletion_of(g.name),
            [n for n in observed if n.group == g.name],
            current_profile(g),
            seed,
        )
        for g in spec.node_groups
    }


def dropped(desired: ClusterSpec, observed: list[ObservedNode]) -> list[str]:
    """Names of the nodes of still-declared groups whose replica `desired` no longer keeps."""
    keep = {g.name: set(g.replica_indexes) for g in desired.node_groups}
    return [
        n.name
        for n in observed
        if n.group in keep and n.replica > 0 and n.replica not in keep[n.group]
    ]
