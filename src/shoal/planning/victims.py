"""Which replicas of a node group go first when it shrinks, by its deletion policy.

The base order is the policy's `victims`: oldest or youngest first (by creation time), nodes
whose profile is out of date first (then oldest), or a seeded shuffle. With `balance_zones`
each next victim comes from the zone that holds the most replicas of the group at that moment
(ties go to the zone whose best candidate comes first in the base order), so a scale-in leaves
the zones as even as it can.

A replica is every node of one index (a unit's parts share it): its age is its oldest node's,
its zone the first zone any of its nodes has, and it is out of date when any node's profile
differs from the group's current one. For a unit group `current_profile` maps each part name to
that part's profile; a part's name is read from its node's name (`web-3-data` is part `data`).
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from shoal.model.nodes import replica_name
from shoal.model.policies import DeletionPolicy, VictimOrder
from shoal.planning.replicas import ObservedNode


@dataclass(frozen=True, slots=True)
class _Replica:
    index: int
    created_at: float
    zone: str | None
    outdated: bool


def victim_order(
    policy: DeletionPolicy,
    nodes: list[ObservedNode],
    current_profile: dict[str, Any] | None,
    seed: int = 0,
) -> list[int]:
    """The replica indexes of one node group's `nodes`, in the order they should be removed."""
    order = _base_order(policy.victims, _replicas(nodes, current_profile), seed)
    return _balanced(order) if policy.balance_zones else [r.index for r in order]


def _replicas(nodes: Iterable[ObservedNode], current: dict[str, Any] | None) -> list[_Replica]:
    by_index: dict[int, list[ObservedNode]] = {}
    for n in nodes:
        if n.replica > 0:
            by_index.setdefault(n.replica, []).append(n)
    return [
        _Replica(
            index=i,
            created_at=min(n.created_at for n in members),
            zone=next((n.zone for n in members if n.zone is not None), None),
            outdated=any(_outdated(n, current) for n in members),
        )
        for i, members in sorted(by_index.items())
    ]


def _outdated(node: ObservedNode, current: dict[str, Any] | None) -> bool:
    if node.profile is None or current is None:
        return False
    base = replica_name(node.group, node.replica)
    if node.name.startswith(base + "-"):
        wanted = current.get(node.name[len(base) + 1 :])
        return node.profile != wanted
    return node.profile != current


def _base_order(how: VictimOrder, replicas: list[_Replica], seed: int) -> list[_Replica]:
    if how is VictimOrder.OLDEST_FIRST:
        return sorted(replicas, key=lambda r: (r.created_at, r.index))
    if how is VictimOrder.YOUNGEST_FIRST:
        return sorted(replicas, key=lambda r: (-r.created_at, -r.index))
    if how is VictimOrder.OLDEST_PROFILE_FIRST:
        return sorted(replicas, key=lambda r: (not r.outdated, r.created_at, r.index))
    shuffled = sorted(replicas, key=lambda r: r.index)
    random.Random(seed).shuffle(shuffled)
    return shuffled


def _balanced(order: list[_Replica]) -> list[int]:
    """`order` reordered so each next victim comes from the zone with the most replicas left."""
    queues: dict[str | None, list[_Replica]] = {}
    for r in order:
        queues.setdefault(r.zone, []).append(r)
    rank = {r.index: i for i, r in enumerate(order)}
    out: list[int] = []
    while len(out) < len(order):
        zone = min(
            (z for z, q in queues.items() if q),
            key=lambda z: (-len(queues[z]), rank[queues[z][0].index]),
        )
        out.append(queues[zone].pop(0).index)
    return out
