"""Level-triggered: which deployments are due on which nodes, recorded as NODE_DEPLOY actions.

For every settled, unlocked cluster that declares software, the nodes become `NodeFacts`, the
stored rows become `DeploymentRecord`s, and the pure resolver (`planning.software.due`) says
what should run now. A node with a live NODE_DEPLOY action gets nothing more until it ends (one
deployment per node at a time), so each pass adds at most the next deployment per node; the
resolver lists due work in dependency order, so that is the first one due. Runs are idempotent
on the digest: the runner skips a run whose row already COMPLETEd with the same digest.
UPDATEs on groups with an update policy go through the cluster's rollouts (`rolling.py`),
which also add the runs that give nodes their previous revision back.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from shoal.engine import workload_members
from shoal.engine.events import cluster_event, node_event
from shoal.engine.software.inputs import DeployInputs
from shoal.engine.software.rolling import roll
from shoal.model.cluster import MemberRef
from shoal.model.enums import ActionKind, ClusterStatus, NodeStatus
from shoal.model.policies import HealthPolicy, UpdatePolicy
from shoal.model.rollouts import Revision, RolloutPhase, SoftwareRollout
from shoal.model.software import NetworkFact, NodeFacts, SoftwareSpec
from shoal.model.workloads import Workload
from shoal.planning import software as resolver
from shoal.store import actions as action_repo
from shoal.store import deployments as deployment_repo
from shoal.store import network_addresses as address_repo
from shoal.store import rollouts as rollout_repo
from shoal.store import workloads as replica_repo
from shoal.store.actions import NewAction
from shoal.store.database import Connection
from shoal.store.deployments import Server
from shoal.store.events import NewEvent, add_events
from shoal.store.records import ClusterRecord, NodeRecord

SETTLED = (ClusterStatus.ACTIVE, ClusterStatus.WARNING, ClusterStatus.ERROR)
RUNNABLE_NODE = (NodeStatus.ACTIVE, NodeStatus.WARNING)
"""A node in WARNING (e.g. after a failed deployment) still takes deployments (retries)."""

SoftwareOf = Callable[[ClusterRecord], SoftwareSpec | None]
PoliciesOf = Callable[[ClusterRecord], Mapping[str, UpdatePolicy]]
"""Update policies by node-group name (only groups that declare one)."""
HealthOf = Callable[[ClusterRecord], Mapping[str, HealthPolicy]]
"""Health policies by node-group name (only groups that have one): a rollout's gate."""
WorkloadsOf = Callable[[ClusterRecord], Sequence[Workload]]
"""The cluster's workloads, whose ready replicas `{members: WORKLOAD}` inputs read."""


def facts_of(n: NodeRecord | Server, *, active: bool | None = None) -> NodeFacts:
    """One node as the resolver sees it."""
    return NodeFacts(
        name=n.name,
        member=MemberRef(n.group_name, n.part),
        index=n.replica or None,
        address=n.address,
        zone=n.zone,
        host=n.host,
        active=(n.status in RUNNABLE_NODE and n.provider_id is not None)
        if active is None
        else active,
    )


@dataclass(frozen=True, slots=True)
class Decision:
    actions: list[NewAction]
    events: list[NewEvent]
    rollouts: list[SoftwareRollout] = field(default_factory=list)
    """Rollouts made or moved on (rolling.py), to store with the actions."""
    cluster_id: str = ""
    live: int = 0
    """NODE_DEPLOY actions of the cluster not yet ended once this decision is recorded (those
    live before it and its new ones): the deployer's pacing waits for them (runner.py)."""


@dataclass(frozen=True, slots=True)
class LiveRun:
    """A NODE_DEPLOY action not yet ended, as a decision sees it: which node is busy with which
    deployment."""

    node_id: str
    deployment: str
    node: str
    """The node's name."""


def live_runs(conn: Connection, cluster_id: str) -> list[LiveRun]:
    """The cluster's NODE_DEPLOY actions not yet ended. Only the three keys a decision reads
    are taken from their inputs (issue 23: typing every live run's whole inputs, its config
    body included, was a quarter of a decision pass at 20,000 nodes, on every pass)."""
    found = action_repo.live_inputs(conn, cluster_id, ActionKind.NODE_DEPLOY)
    return [LiveRun(node, str(i["deployment"]), str(i["node"])) for node, i in found]


def decide(
    conn: Connection,
    cluster: ClusterRecord,
    software: SoftwareSpec,
    policies: Mapping[str, UpdatePolicy] | None = None,
    now: float = 0.0,
    workloads_of: WorkloadsOf | None = None,
) -> Decision:
    """The NODE_DEPLOY actions due now on one cluster (read-only; the caller records them)."""
    nodes = deployment_repo.current_servers(conn, cluster.id)
    by_name = {n.name: n for n in nodes}
    ids = {n.id for n in nodes}
    records = [r for node_id, r in deployment_repo.records_for(conn, cluster.id) if node_id in ids]
    facts = [facts_of(n) for n in nodes]
    if workloads_of is not None:
        facts += _workload_facts(conn, cluster, software, nodes, workloads_of)
    addresses = None
    if any(isinstance(s, NetworkFact) for d in software.deployments for s in d.inputs.values()):
        # Read only for clusters whose deployments take a cloud-assigned address.
        addresses = address_repo.for_cluster(conn, cluster.id)
    plan = resolver.plan(software, facts, records, addresses)
    runs = live_runs(conn, cluster.id)
    busy = {r.node_id for r in runs}
    rollouts = rollout_repo.for_cluster(conn, cluster.id)
    previous: dict[tuple[str, str], Revision] = {}
    if any(r.phase is RolloutPhase.ROLLBACK for r in rollouts.values()):
        for row in deployment_repo.for_cluster(conn, cluster.id, revisions=True):
            if row.node_id in ids and row.previous is not None:
                previous[(row.name, row.node_name)] = row.previous
    rolled = roll(
        plan,
        software,
        policies or {},
        rollouts,
        {(r.deployment, r.node): r for r in records},
        {(r.deployment, r.node) for r in runs},
        previous,
        set(by_name),
        now,
    )
    chosen: dict[str, DeployInputs] = {}
    for item in rolled.allowed:
        node = by_name.get(item.node)
        if node is None or node.id in busy or node.id in chosen:
            continue
        d = software.deployment(item.deployment)
        chosen[node.id] = DeployInputs.of(item, d.timeout_s if d is not None else 600.0)
    for restore in rolled.restores:
        node = by_name.get(restore.node)
        if node is None or node.id in busy or node.id in chosen:
            continue
        d = software.deployment(restore.deployment)
        timeout = d.timeout_s if d is not None else 600.0
        chosen[node.id] = DeployInputs.restore(
            restore.deployment, restore.node, restore.previous, timeout
        )
    new: list[NewAction] = []
    events: list[NewEvent] = [
        cluster_event(cluster, "ROLLOUT", text, level=level) for level, text in rolled.notes
    ]
    for node_id, run in chosen.items():
        node = by_name[run.node]
        action_id = str(uuid.uuid4())
        new.append(
            NewAction(
                id=action_id,
                project_id=cluster.project_id,
                kind=ActionKind.NODE_DEPLOY.value,
                cluster_id=cluster.id,
                node_id=node_id,
                inputs=run.to_json(),
            )
        )
        what = "rollback to the previous revision" if run.rollback else str(run.action)
        events.append(
            node_event(
                project_id=cluster.project_id,
                cluster_id=cluster.id,
                node_id=node.id,
                name=node.name,
                status="DEPLOY",
                message=f"deployment {run.deployment} due ({what})",
                action_id=action_id,
            )
        )
    return Decision(new, events, rolled.changed, cluster.id, len(runs) + len(new))


def _workload_facts(
    conn: Connection,
    cluster: ClusterRecord,
    software: SoftwareSpec,
    nodes: Sequence[Server],
    workloads_of: WorkloadsOf,
) -> list[NodeFacts]:
    """The replicas of the workloads whose members some input reads, as member facts (active
    when ready): their ready set moving changes those inputs' digests, so the deployment runs
    again on its servers (engine/workload_members.py). Nothing is read (not even the
    workloads) unless an input names members that are no node group or instance."""
    named: set[str] = set()
    for d in software.deployments:
        named |= workload_members.named_targets(d.inputs.values())
    if not named - {n.group_name for n in nodes}:
        return []
    workloads = workloads_of(cluster)
    read = set(workload_members.workloads_read(software.deployments, workloads))
    if not read:
        return []
    rows = replica_repo.load(conn, [cluster.id])[cluster.id]
    live = {n.name for n in nodes if n.status in RUNNABLE_NODE and n.provider_id is not None}
    return workload_members.replica_facts(
        [w for w in workloads if w.name in read],
        (r for r in rows.values() if r.workload in read),
        {n.name: n for n in nodes},
        live=live,
    )


def record(conn: Connection, decision: Decision, now: float) -> None:
    action_repo.insert_actions(conn, decision.actions, now)
    rollout_repo.save(conn, decision.cluster_id, decision.rollouts, now)
    add_events(conn, decision.events, now)
