"""Deciding a cluster action's plan from the store's view of the cluster (inside the planner's
transaction): parse the declared cluster, choose replicas, place with survivors pinned, diff,
and for recoveries, add the repair steps.

A replaced node is renamed out of the way (`web-3~1a2b3c4d`) so its replacement can take its
name at once; the renamed node is deleted by the same plan.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from shoal.documents import cluster_from_tree
from shoal.engine.contracts import ClusterInputs, NodeInputs, Repair, RepairHow
from shoal.engine.settle import current_nodes
from shoal.model.cluster import ClusterSpec
from shoal.model.enums import ActionKind
from shoal.model.inventory import Inventory
from shoal.model.nodes import Demand, NodeSpec, expand
from shoal.model.problems import InvalidDocument
from shoal.placement import solve
from shoal.planning import (
    ObservedNode,
    Plan,
    Retired,
    add_repairs,
    choose_replicas,
    make_plan,
)
from shoal.store import nodes as node_repo
from shoal.store.database import Connection
from shoal.store.records import ClusterRecord, NodeRecord


class Unplaceable(Exception):
    def __init__(self, reasons: tuple[str, ...]) -> None:
        super().__init__("; ".join(reasons))
        self.reasons = reasons


@dataclass(slots=True)
class Decision:
    plan: Plan
    hosts: dict[str, str] = field(default_factory=dict)
    zones: dict[str, str] = field(default_factory=dict)
    renames: dict[str, str] = field(default_factory=dict)
    """Old name to new name, for nodes being replaced."""
    recovering: list[str] = field(default_factory=list)
    """Nodes repaired in place (by their current names)."""
    spec: ClusterSpec | None = None
    """The declared cluster the plan was made from."""


def observed_of(nodes: list[NodeRecord]) -> list[ObservedNode]:
    return [
        ObservedNode(
            name=n.name,
            kind=n.kind,
            group=n.group_name,
            replica=n.replica,
            host=n.host,
            zone=n.zone,
            created_at=n.created_at,
            profile=n.profile,
        )
        for n in nodes
    ]


def declared_cluster(cluster: ClusterRecord, inventory: Inventory) -> ClusterSpec:
    try:
        return cluster_from_tree(cluster.document, inventory)
    except InvalidDocument as bad:
        raise Unplaceable(tuple(str(p) for p in bad.problems)) from None


def _dependencies(spec: ClusterSpec) -> dict[str, tuple[str, ...]]:
    deps = {g.name: g.depends_on for g in spec.node_groups}
    deps.update({i.name: i.depends_on for i in spec.instances})
    return deps


class Placed(NamedTuple):
    desired: ClusterSpec
    """The declared cluster with explicit replicas."""
    nodes: list[NodeSpec]
    """`expand(desired)`."""
    hosts: dict[str, str]
    zones: dict[str, str]


def place(
    conn: Connection,
    cluster: ClusterRecord,
    declared: ClusterSpec,
    kept: list[NodeRecord],
    everything: list[NodeRecord],
    inventory: Inventory,
    victims: list[str],
    workloads: bool = False,
) -> Placed:
    """The desired cluster with explicit replicas, its nodes, and where each of them goes."""
    desired = choose_replicas(declared, observed_of(kept), victims=victims)
    # Expanded once, for this and for the plan (issue 23: each expansion of a 100,000-node
    # cluster was some 3 % of planning its create).
    expanded = expand(desired)
    wanted = {n.name for n in expanded}
    pinned = {n.name: n for n in kept if n.name in wanted and n.host}
    used: dict[str, Demand] = node_repo.used_capacity(conn, exclude_cluster=cluster.id)
    for n in everything:
        if n.name not in pinned and n.host:
            # Nodes on their way out still hold their capacity until they are gone.
            used[n.host] = used.get(n.host, Demand()) + Demand(
                n.vcpus, n.ram_mb, n.disk_gb, n.volume_gb
            )
    result = solve(
        desired,
        inventory,
        existing={k: n.host for k, n in pinned.items() if n.host},
        used=used,
        # Replicas were admitted by the service (unless it left the placement to the action);
        # repairs never wait on them.
        workloads=workloads,
        nodes=expanded,
    )
    if not result.feasible:
        raise Unplaceable(result.reasons)
    return Placed(
        desired,
        expanded,
        {a.node: a.host for a in result.assignments},
        {a.node: a.zone for a in result.assignments},
    )


def decide(
    conn: Connection,
    kind: ActionKind,
    inputs: ClusterInputs,
    cluster: ClusterRecord,
    nodes: list[NodeRecord],
    inventory: Inventory,
    stage: tuple[Repair, ...] | None = None,
    retire_first: bool = False,
) -> Decision:
    """The plan for `action`; with `stage`, the plan of one batch of repairs (a rolling
    update's batch is a list of replacements)."""
    declared = declared_cluster(cluster, inventory)
    deps = _dependencies(declared)
    attached = {n.name: n.attach_to for n in nodes if n.attach_to}
    if stage is not None:
        return _recover(
            conn, stage, cluster, declared, nodes, inventory, attached, deps, retire_first
        )
    if kind is ActionKind.CLUSTER_DELETE:
        return Decision(make_plan(None, {}, {}, observed_of(nodes), attached, deps), spec=declared)
    if kind is ActionKind.CLUSTER_RECOVER:
        return _recover(
            conn, inputs.repairs or (), cluster, declared, nodes, inventory, attached, deps
        )
    victims = list(inputs.victims or ())
    desired, expanded, hosts, zones = place(
        conn, cluster, declared, nodes, nodes, inventory, victims, inputs.place_in_engine
    )
    plan = make_plan(desired, hosts, zones, observed_of(nodes), attached, deps, expanded)
    return Decision(plan, hosts, zones, spec=declared)


def component(name: str, nodes: list[NodeRecord]) -> set[str]:
    """The nodes that must move with `name`: its unit replica, or its attached partners."""
    by_name = {n.name: n for n in nodes}
    n = by_name[name]
    if n.replica > 0:
        return {m.name for m in nodes if m.group_name == n.group_name and m.replica == n.replica}
    out = {name} | {m.name for m in nodes if m.attach_to == name}
    if n.attach_to and n.attach_to in by_name:
        out.add(n.attach_to)
    return out


def _recover(
    conn: Connection,
    repairs: tuple[Repair, ...],
    cluster: ClusterRecord,
    declared: ClusterSpec,
    nodes: list[NodeRecord],
    inventory: Inventory,
    attached: dict[str, str],
    deps: dict[str, tuple[str, ...]],
    retire_first: bool = False,
) -> Decision:
    by_name = {n.name: n for n in nodes}
    how: dict[str, RepairHow] = {}
    for r in repairs:
        if r.node in by_name:
            how[r.node] = r.how
    how.update(_lost(nodes, inventory, how))
    replaced: set[str] = set()
    for name, h in how.items():
        if h is RepairHow.REPLACE:
            replaced |= component(name, nodes)
    kept = [n for n in nodes if n.name not in replaced]
    desired, expanded, hosts, zones = place(conn, cluster, declared, kept, nodes, inventory, [])
    plan = make_plan(desired, hosts, zones, observed_of(kept), attached, deps, expanded)
    renames = {name: f"{name}~{by_name[name].id[:8]}" for name in sorted(replaced)}
    retire = [
        Retired(
            ObservedNode(
                renames[name],
                by_name[name].kind,
                by_name[name].group_name,
                by_name[name].replica,
                by_name[name].host,
            ),
            name,
        )
        for name in sorted(replaced)
    ]

    def pick(kind: RepairHow) -> list[str]:
        return sorted(n for n, h in how.items() if h is kind and n not in replaced)

    recreate, reboot, rebuild = (
        pick(RepairHow.RECREATE),
        pick(RepairHow.REBOOT),
        pick(RepairHow.REBUILD),
    )
    add_repairs(
        plan,
        retire=retire,
        recreate=recreate,
        reboot=reboot,
        rebuild=rebuild,
        attached=attached,
        retire_first=retire_first,
    )
    return Decision(plan, hosts, zones, renames, recreate + reboot + rebuild, spec=declared)


def _lost(
    nodes: list[NodeRecord], inventory: Inventory, asked: dict[str, RepairHow]
) -> dict[str, RepairHow]:
    """Replacements of the nodes standing on hosts the inventory has lost, besides the repairs
    asked: a recover places the whole cluster, and a node cannot be kept on a host that is gone
    (issue 37's cloud benchmark: with 5 % of the hosts failed at once, a replacement placed
    on a host failing a moment later failed, and every later recover, asked to create the
    missing node, was refused as unplaceable with the other lost nodes pinned where they were)."""
    hosts = inventory.host_names()
    return {
        n.name: RepairHow.REPLACE
        for n in current_nodes(nodes)
        if n.host and n.host not in hosts and asked.get(n.name) is not RepairHow.REPLACE
    }


def node_inputs(node: NodeRecord, cluster_name: str) -> NodeInputs:
    """What a provider call on an existing node needs, from its row alone."""
    return NodeInputs(
        node=node.name,
        cluster_name=cluster_name,
        kind=node.kind,
        host=node.host,
        zone=node.zone,
        profile=node.profile,
        provider_id=node.provider_id,
        existing=True,
    )
