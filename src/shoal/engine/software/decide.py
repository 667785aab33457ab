"""Level-triggered: which deployments are due on which nodes, recorded as NODE_DEPLOY actions.

For every settled, unlocked cluster that declares software, the nodes become `NodeFacts`, the
stored rows become `DeploymentRecord`s, and the pure resolver (`planning.software.due`) says
what should run now. A node with a live NODE_DEPLOY action gets nothing more until it ends (one
deployment per node at a time), so each pass adds at most the next deployment per node; the
resolver lists due work in dependency order, so that is the first one due. Runs are idempotent
on the digest: the runner skips a run whose row already COMPLETEd with the same digest.
UPDATEs on groups with an update policy go through the cluster's rollouts (`rolling.py`),
which also add the runs that give nodes their previous revision back.

A transition (issue 36): a deployment no longer declared on a node that stays is retired there
(`planning.software.retired`): its DELETE runs first where its row says it declared one, then
the deployer has the provider remove what it left (containers, Pods) and drops the row
(`Retirement`). Removals come before creations that may need what they free: a node with a
deployment being retired, or with replicas of a workload the document dropped (the keeper stops
them), takes no new run until they are gone.
"""

from __future__ import annotations

import hashlib
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
from shoal.model.software import (
    DeployAction,
    Deployment,
    DeploymentRecord,
    DeploymentStatus,
    NetworkFact,
    NodeFacts,
    SoftwareSpec,
)
from shoal.model.workloads import Workload
from shoal.planning import software as resolver
from shoal.providers.software import RetiredDeployment
from shoal.store import actions as action_repo
from shoal.store import deployments as deployment_repo
from shoal.store import network_addresses as address_repo
from shoal.store import rollouts as rollout_repo
from shoal.store import workloads as replica_repo
from shoal.store.actions import NewAction
from shoal.store.database import Connection
from shoal.store.deployments import DeploymentRow, Server
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
class Retirement:
    """A deployment row to drop once the provider removed what the deployment left on its node
    (the deployment is no longer declared there, and its DELETE ran or it declared none)."""

    row_id: str
    project_id: str
    cluster_id: str
    node_id: str
    retired: RetiredDeployment
    deleted: bool
    """Its DELETE ran (the event says so)."""


@dataclass(frozen=True, slots=True)
class Decision:
    actions: list[NewAction]
    events: list[NewEvent]
    rollouts: list[SoftwareRollout] = field(default_factory=list)
    """Rollouts made or moved on (rolling.py), to store with the actions."""
    retire: list[Retirement] = field(default_factory=list)
    """Rows to drop once the provider removed what they left (the deployer does both)."""
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
    retiring = resolver.retired(software, [facts_of(n) for n in nodes], records)
    retire, deletes = _retirements(conn, cluster, retiring, by_name, busy)
    held = {by_name[r.node].id for r in retiring} | set(deletes)
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
    chosen: dict[str, DeployInputs] = dict(deletes)
    if rolled.allowed or rolled.restores:
        held |= _dropped_workloads(conn, cluster, by_name, workloads_of)
    for item in rolled.allowed:
        node = by_name.get(item.node)
        if node is None or node.id in busy or node.id in chosen or node.id in held:
            continue
        d = software.deployment(item.deployment)
        chosen[node.id] = DeployInputs.of(
            item, d.timeout_s if d is not None else 600.0, _declared(d)
        )
    for restore in rolled.restores:
        node = by_name.get(restore.node)
        if node is None or node.id in busy or node.id in chosen or node.id in held:
            continue
        d = software.deployment(restore.deployment)
        timeout = d.timeout_s if d is not None else 600.0
        chosen[node.id] = DeployInputs.restore(
            restore.deployment,
            restore.node,
            restore.previous,
            timeout,
            _declared(d),
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
        if node.id in deletes:
            what = "DELETE: no longer declared on this node"
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
    return Decision(new, events, rolled.changed, retire, cluster.id, len(runs) + len(new))


def _declared(d: Deployment | None) -> tuple[DeployAction, ...] | None:
    """A deployment's actions as its row keeps them (in a fixed order)."""
    return None if d is None else tuple(a for a in DeployAction if a in d.actions)


RETIRE_TIMEOUT_S = 600.0
"""A retired deployment's DELETE waits this long for its signal (its own timeout went with its
declaration)."""


def _retirements(
    conn: Connection,
    cluster: ClusterRecord,
    retiring: Sequence[DeploymentRecord],
    by_name: Mapping[str, Server],
    busy: set[str],
) -> tuple[list[Retirement], dict[str, DeployInputs]]:
    """What to do now about deployments no longer declared on their nodes: a DELETE run (one
    per node at a time) where the row says its deployment declared DELETE and it ran, on a node
    up to run it; else the row to retire. A node running something, or a row whose run is in
    flight, waits."""
    if not retiring:
        return [], {}
    pairs = [(by_name[r.node].id, r.deployment) for r in retiring if by_name[r.node].id not in busy]
    rows = deployment_repo.rows_for(conn, pairs)
    retire: list[Retirement] = []
    deletes: dict[str, DeployInputs] = {}
    for key in pairs:
        row = rows.get(key)
        node = by_name[row.node_name] if row is not None else None
        if row is None or node is None:
            continue
        if row.status in (DeploymentStatus.PENDING, DeploymentStatus.IN_PROGRESS):
            continue
        runnable = node.status in RUNNABLE_NODE and node.provider_id is not None
        if (
            runnable
            and DeployAction.DELETE in row.actions
            and row.action is not DeployAction.DELETE
        ):
            if node.id not in deletes:
                deletes[node.id] = _delete_run(row)
            continue
        if node.id in deletes:
            continue  # its other DELETEs first; then the rows go together
        retire.append(_retirement(row, node, cluster))
    return retire, deletes


def _delete_run(row: DeploymentRow) -> DeployInputs:
    """A retired deployment's DELETE, from what its row keeps (config, inputs, hook). Its
    digest differs from the run it undoes, so the runner does not take it for done."""
    digest = hashlib.sha256(f"DELETE/{row.digest}".encode()).hexdigest()
    body = row.config_body
    return DeployInputs(
        deployment=row.name,
        node=row.node_name,
        action=DeployAction.DELETE,
        config=row.config,
        hook=row.hook,
        digest=digest,
        inputs=row.inputs,
        secret_inputs=row.secret_inputs,
        outputs=tuple(o.name for o in body.outputs) if body is not None else (),
        timeout_s=RETIRE_TIMEOUT_S,
        body=body,
        actions=row.actions,
    )


def _retirement(row: DeploymentRow, node: Server, cluster: ClusterRecord) -> Retirement:
    body = row.config_body
    config = body.config if body is not None else ""
    return Retirement(
        row.id,
        cluster.project_id,
        cluster.id,
        node.id,
        RetiredDeployment(node.name, node.provider_id, row.name, row.hook, config),
        deleted=row.action is DeployAction.DELETE,
    )


def _dropped_workloads(
    conn: Connection,
    cluster: ClusterRecord,
    by_name: Mapping[str, Server],
    workloads_of: WorkloadsOf | None,
) -> set[str]:
    """The nodes still running replicas of workloads the document dropped: the keeper stops
    them; a deployment due there waits, since they may hold what it needs (an address:port).
    (A workload scaled in or rolling keeps its name: its replicas hold nobody back.)"""
    rows = replica_repo.load(conn, [cluster.id])[cluster.id]
    if not rows:
        return set()
    declared = {w.name for w in (workloads_of(cluster) if workloads_of else ())}
    return {
        by_name[r.node].id
        for r in rows.values()
        if r.workload not in declared and r.node in by_name
    }


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
