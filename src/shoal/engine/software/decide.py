"""Level-triggered: which deployments are due on which nodes, recorded as NODE_DEPLOY actions.

For every settled, unlocked cluster that declares software, the nodes become `NodeFacts`, the
stored rows become `DeploymentRecord`s, and the pure resolver (`planning.software.due`) says
what should run now. A node with a live NODE_DEPLOY action gets nothing more until it ends (one
deployment per node at a time), so each pass adds at most the next deployment per node; the
resolver lists due work in dependency order, so that is the first one due. Runs are idempotent
on the digest: the runner skips a run whose row already COMPLETEd with the same digest.
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from shoal.engine.events import node_event
from shoal.engine.software.inputs import DeployInputs
from shoal.engine.software.rolling import roll
from shoal.model.cluster import MemberRef
from shoal.model.enums import ActionKind, ClusterStatus, NodeStatus
from shoal.model.policies import UpdatePolicy
from shoal.model.software import (
    DeployAction,
    DeploymentStatus,
    NodeFacts,
    ResolvedDeployment,
    SoftwareSpec,
)
from shoal.planning import software as resolver
from shoal.store import actions as action_repo
from shoal.store import deployments as deployment_repo
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
    held: set[str] = field(default_factory=set)
    """Deployments whose rolling UPDATE stopped on failures (see rolling.py)."""


def live_runs(conn: Connection, cluster_id: str) -> list[tuple[str, DeployInputs]]:
    """(node id, run) of the cluster's NODE_DEPLOY actions not yet ended."""
    found = action_repo.live_inputs(conn, cluster_id, ActionKind.NODE_DEPLOY)
    return [(node, DeployInputs.from_json(inputs)) for node, inputs in found]


def decide(
    conn: Connection,
    cluster: ClusterRecord,
    software: SoftwareSpec,
    policies: Mapping[str, UpdatePolicy] | None = None,
) -> Decision:
    """The NODE_DEPLOY actions due now on one cluster (read-only; the caller records them)."""
    nodes = deployment_repo.current_servers(conn, cluster.id)
    by_name = {n.name: n for n in nodes}
    ids = {n.id for n in nodes}
    records = [r for node_id, r in deployment_repo.records_for(conn, cluster.id) if node_id in ids]
    due = resolver.due(software, [facts_of(n) for n in nodes], records)
    runs = live_runs(conn, cluster.id)
    busy = {node_id for node_id, _ in runs}
    in_flight = Counter(r.deployment for _, r in runs if r.action is DeployAction.UPDATE)
    failed = Counter(
        r.deployment
        for r in records
        if r.action is DeployAction.UPDATE and r.status is DeploymentStatus.FAILED
    )
    allowed, held = roll(due, software, policies or {}, in_flight, failed)
    chosen: dict[str, ResolvedDeployment] = {}
    for item in allowed:
        node = by_name.get(item.node)
        if node is None or node.id in busy or node.id in chosen:
            continue
        chosen[node.id] = item
    new: list[NewAction] = []
    events: list[NewEvent] = []
    for node_id, item in chosen.items():
        node = by_name[item.node]
        d = software.deployment(item.deployment)
        timeout = d.timeout_s if d is not None else 600.0
        action_id = str(uuid.uuid4())
        new.append(
            NewAction(
                id=action_id,
                project_id=cluster.project_id,
                kind=ActionKind.NODE_DEPLOY.value,
                cluster_id=cluster.id,
                node_id=node_id,
                inputs=DeployInputs.of(item, timeout).to_json(),
            )
        )
        events.append(
            node_event(
                project_id=cluster.project_id,
                cluster_id=cluster.id,
                node_id=node.id,
                name=node.name,
                status="DEPLOY",
                message=f"deployment {item.deployment} due ({item.action})",
                action_id=action_id,
            )
        )
    return Decision(new, events, held)


def record(conn: Connection, decision: Decision, now: float) -> None:
    action_repo.insert_actions(conn, decision.actions, now)
    add_events(conn, decision.events, now)
