"""Which nodes a document change leaves on an old profile, and the batches that replace them.

A node group whose profile changed is updated by replacing its replicas in batches of
`max_unavailable + max_surge` (its update policy): each batch is planned when the previous one
is done and healthy (see `rolling`). Instances whose profile changed are replaced one at a time.
"""

from __future__ import annotations

from typing import Any

from shoal.engine.contracts import RollingStage, RollingState
from shoal.engine.decide import declared_cluster
from shoal.engine.profiles import profile_row
from shoal.model.cluster import ClusterSpec
from shoal.model.enums import ActionKind, NodeStatus
from shoal.model.inventory import Inventory
from shoal.model.policies import UpdatePolicy
from shoal.store.records import ActionRecord, ClusterRecord, NodeRecord

UPDATES = (ActionKind.CLUSTER_UPDATE, ActionKind.NODEGROUP_UPDATE)


def stale_units(spec: ClusterSpec, nodes: list[NodeRecord]) -> dict[str, list[str]]:
    """Per node group (or instance), one node name per replica whose profile is out of date."""
    wanted: dict[tuple[str, str | None], dict[str, Any]] = {}
    for g in spec.node_groups:
        for p in g.parts:
            wanted[(g.name, p.part)] = profile_row(p.profile)
    for i in spec.instances:
        wanted[(i.name, None)] = profile_row(i.profile)
    out: dict[str, list[str]] = {}
    seen: set[tuple[str, int | str]] = set()
    for n in sorted(nodes, key=lambda n: (n.group_name, n.replica, n.name)):
        if n.status in (NodeStatus.DELETING, NodeStatus.DELETED):
            continue
        want = wanted.get((n.group_name, n.part))
        if want is None or want == n.profile:
            continue
        unit = (n.group_name, n.replica or n.name)
        if unit not in seen:
            seen.add(unit)
            out.setdefault(n.group_name, []).append(n.name)
    return out


def stages_for(spec: ClusterSpec, nodes: list[NodeRecord]) -> list[RollingStage]:
    """The batches of a rolling update, in order, each with its group's update policy."""
    stages: list[RollingStage] = []
    for group_name, names in stale_units(spec, nodes).items():
        group = spec.node_group(group_name)
        policy = (group.update if group is not None else None) or UpdatePolicy()
        size = max(1, policy.max_unavailable + policy.max_surge)
        for start in range(0, len(names), size):
            stages.append(
                RollingStage(
                    group=group_name,
                    nodes=tuple(names[start : start + size]),
                    retire_first=policy.max_surge == 0,
                    gate=policy.health_gate,
                    gate_timeout_s=policy.gate_timeout_s,
                    pause_s=policy.pause_s,
                    threshold=policy.failure_threshold,
                )
            )
    return stages


def start_rolling(
    cluster: ClusterRecord, nodes: list[NodeRecord], inventory: Inventory, action: ActionRecord
) -> RollingState | None:
    """The rolling-update state for an update action, or None when no profile changed."""
    if action.kind not in UPDATES:
        return None
    stages = stages_for(declared_cluster(cluster, inventory), nodes)
    if not stages:
        return None
    return RollingState(tuple(stages))
