"""Shoal's records in Senlin's JSON shapes (field names, time formats, statuses)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime

from shoal.model.enums import ActionKind, ActionStatus, NodeStatus
from shoal.service.senlin import meta
from shoal.service.senlin.member_names import known_name
from shoal.service.senlin.shapes import (
    ActionView,
    ClusterView,
    EventView,
    JsonObject,
    NodeView,
    ProfileView,
)
from shoal.service.senlin.sizes import bounds_of
from shoal.store.records import ActionRecord, ClusterRecord, EventRecord, NodeRecord

CAUSE_RPC = "RPC Request"
CAUSE_DERIVED = "Derived Action"
SENLIN_ACTION = "senlin_action"
"""An action input naming the Senlin action a request became (CLUSTER_CHECK...)."""

_LEVELS = {"DEBUG": "10", "INFO": "20", "WARNING": "30", "ERROR": "40", "CRITICAL": "50"}


def isotime(ts: float | None) -> str | None:
    """Senlin's time format: seconds, UTC, a trailing Z."""
    if ts is None:
        return None
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def profile_view(
    pid: str | None,
    name: str,
    type_name: str,
    spec: JsonObject,
    metadata: JsonObject,
    project: str | None,
    created_at: float | None = None,
    updated_at: float | None = None,
) -> ProfileView:
    return {
        "id": pid,
        "name": name,
        "type": type_name,
        "spec": spec,
        "metadata": metadata,
        "project": project,
        "user": None,
        "domain": None,
        "created_at": isotime(created_at),
        "updated_at": isotime(updated_at),
    }


def live(nodes: list[NodeRecord]) -> list[NodeRecord]:
    return [n for n in nodes if n.status is not NodeStatus.DELETED]


def cluster_view(
    c: ClusterRecord, nodes: list[NodeRecord], profile_name: str | None
) -> ClusterView:
    doc = c.document
    m = meta.decode(doc.get("metadata", {}))
    sizes = bounds_of(doc)
    ids = [n.id for n in live(nodes)]
    return {
        "id": c.id,
        "name": m.name or c.name,
        "profile_id": m.profile_id,
        "profile_name": profile_name,
        "status": str(c.status),
        "status_reason": c.status_reason,
        "desired_capacity": sizes.desired,
        "min_size": sizes.min_size,
        "max_size": sizes.max_size,
        "nodes": ids,
        "node_ids": ids,
        "init_at": isotime(c.created_at),
        "created_at": isotime(c.created_at),
        "updated_at": isotime(c.updated_at),
        "metadata": m.metadata,
        "data": {"shoal": {"generation": c.generation, "action": c.lock_action_id}},
        "policies": [b.policy_id for b in m.policies],
        "project": c.project_id,
        "user": None,
        "domain": None,
        "timeout": m.timeout,
        "dependents": {},
        "config": m.config,
    }


def node_view(
    n: NodeRecord,
    profile_id: str | None,
    profile_name: str | None,
    *,
    details: bool = False,
    tainted: bool = False,
) -> NodeView:
    out: NodeView = {
        "id": n.id,
        "name": known_name(n),
        "cluster_id": n.cluster_id,
        "profile_id": profile_id,
        "profile_name": profile_name,
        "physical_id": n.provider_id,
        "index": n.replica if n.replica > 0 else -1,
        "role": n.part or "",
        "status": str(n.status),
        "status_reason": n.status_reason,
        "init_at": isotime(n.created_at),
        "created_at": isotime(n.created_at),
        "updated_at": isotime(n.updated_at),
        "metadata": {},
        "data": {
            "group": n.group_name,
            "kind": str(n.kind),
            "host": n.host,
            "zone": n.zone,
            "address": n.address,
            "health": n.health,
        },
        "dependents": {},
        "project": n.project_id,
        "user": None,
        "domain": None,
    }
    if tainted:
        out["tainted"] = False
    if details:
        out["details"] = {
            "kind": str(n.kind),
            "host": n.host,
            "availability_zone": n.zone,
            "address": n.address,
            "physical_id": n.provider_id,
            "status": str(n.status),
            **n.profile,
        }
    return out


SUCCEEDED_REASON = "Action completed successfully."
"""What Senlin's engine writes on every action that succeeds (tests/senlin_live's oracle)."""


def action_name(a: ActionRecord) -> str:
    return str(a.inputs.get(SENLIN_ACTION) or a.kind)


def action_view(a: ActionRecord, timeout: int = meta.DEFAULT_TIMEOUT) -> ActionView:
    name = action_name(a)
    inputs = {k: v for k, v in a.inputs.items() if k not in ("previous_document", SENLIN_ACTION)}
    return {
        "id": a.id,
        "name": f"{name.lower()}_{a.id[:8]}",
        "action": name,
        "target": a.node_id or a.cluster_id,
        "cluster_id": a.cluster_id,
        "status": str(a.status),
        "status_reason": a.status_reason
        or (SUCCEEDED_REASON if a.status is ActionStatus.SUCCEEDED else ""),
        "inputs": inputs,
        "outputs": a.outputs,
        "created_at": isotime(a.created_at),
        "updated_at": isotime(a.ended_at or a.started_at),
        "start_time": a.started_at,
        "end_time": a.ended_at,
        "depends_on": [],
        "depended_by": [],
        "owner": a.owner,
        "interval": -1,
        "timeout": timeout,
        "cause": CAUSE_DERIVED if a.parent_id else CAUSE_RPC,
        "data": {"parent": a.parent_id} if a.parent_id else {},
        "project": a.project_id,
        "user": None,
        "domain": None,
    }


def event_view(e: EventRecord, action_names: Mapping[str, str]) -> EventView:
    oid = (
        e.node_id
        if e.obj_type == "NODE"
        else (e.action_id if e.obj_type == "ACTION" else e.cluster_id)
    )
    return {
        "id": str(e.id),
        "timestamp": isotime(e.ts),
        "oid": oid,
        "oname": e.obj_name,
        "otype": e.obj_type,
        "cluster_id": e.cluster_id,
        "level": _LEVELS.get(e.level.upper(), e.level),
        "action": action_names.get(e.action_id, "") if e.action_id else "",
        "status": e.status,
        "status_reason": e.message,
        "meta_data": {},
        "project": e.project_id,
        "user": None,
    }


def is_internal(a: ActionRecord) -> bool:
    """Steps Senlin has no word for (ordering barriers)."""
    return a.kind is ActionKind.BARRIER and SENLIN_ACTION not in a.inputs
