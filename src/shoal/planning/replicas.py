"""Which replicas of each node group should exist: keep what is there, add or remove the rest.

A node group declares a count; the cluster holds some replicas already. Scale-out keeps every
existing replica and adds the lowest free indexes; scale-in removes the victims asked for by
name first, then the newest replicas (highest index). The result is the same cluster with
explicit replica indexes, ready for placement with the survivors pinned where they are.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from shoal.model.cluster import ClusterSpec, NodeGroup
from shoal.model.enums import NodeKind


@dataclass(frozen=True, slots=True)
class ObservedNode:
    """A node that exists (or is being made) in the store."""

    name: str
    kind: NodeKind
    group: str
    replica: int
    host: str | None
    zone: str | None = None
    created_at: float = 0.0
    profile: dict[str, Any] | None = field(default=None, hash=False)
    """The profile the node was made from (as stored on its row), when the caller knows it;
    a deletion policy can prefer nodes whose profile is out of date."""


def choose_replicas(
    spec: ClusterSpec,
    observed: Iterable[ObservedNode],
    victims: Iterable[str] = (),
    order_victims: Mapping[str, list[int]] | None = None,
) -> ClusterSpec:
    """`spec` with every node group's `replicas` set from what exists.

    `victims` are node names to remove first; `order_victims` may give, per group, the replica
    indexes in the order a deletion policy wants them removed (default: highest index first).
    """
    by_group: dict[str, set[int]] = {}
    for n in observed:
        if n.replica > 0:
            by_group.setdefault(n.group, set()).add(n.replica)
    doomed: dict[str, set[int]] = {}
    victim_names = set(victims)
    for n in observed:
        if n.name in victim_names and n.replica > 0:
            doomed.setdefault(n.group, set()).add(n.replica)
    groups: list[NodeGroup] = []
    for g in spec.node_groups:
        have = by_group.get(g.name, set())
        keep = sorted(have - doomed.get(g.name, set()))
        if len(keep) > g.count:
            order = (order_victims or {}).get(g.name) or sorted(keep, reverse=True)
            drop = [i for i in order if i in keep][: len(keep) - g.count]
            keep = sorted(set(keep) - set(drop))
        # New replicas never reuse an index still held by a node (even one being deleted): node
        # names must stay unique until the old node is gone.
        index = 1
        while len(keep) < g.count:
            if index not in have:
                keep.append(index)
            index += 1
        groups.append(dataclasses.replace(g, replicas=tuple(sorted(keep))))
    return dataclasses.replace(spec, node_groups=tuple(groups))
