"""JSON views of stored records, shaped after Senlin's so a compatible façade can reuse them."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from shoal.documents.software_export import redacted
from shoal.model.outputs import OutputResult
from shoal.store.nodes import GroupTally
from shoal.store.records import ActionRecord, ClusterRecord, EventRecord, NodeRecord


def iso(ts: float | None) -> str | None:
    return (
        None if ts is None else datetime.fromtimestamp(ts, UTC).isoformat().replace("+00:00", "Z")
    )


def node_view(n: NodeRecord) -> dict[str, Any]:
    return {
        "id": n.id,
        "name": n.name,
        "cluster_id": n.cluster_id,
        "project": n.project_id,
        "kind": str(n.kind),
        "group": n.group_name,
        "part": n.part,
        "index": n.replica,
        "status": str(n.status),
        "status_reason": n.status_reason,
        "host": n.host,
        "zone": n.zone,
        "address": n.address,
        "physical_id": n.provider_id,
        "attached_to": n.attach_to,
        "profile": n.profile,
        "created_at": iso(n.created_at),
        "updated_at": iso(n.updated_at),
    }


def _groups(c: ClusterRecord, tally: Mapping[str, GroupTally]) -> list[dict[str, Any]]:
    out = []
    for g in c.document.get("node_groups", []):
        counted = tally.get(g["name"])
        out.append(
            {
                "name": g["name"],
                "count": g.get("count", 0),
                "min": g.get("min", 0),
                "max": g.get("max"),
                "zones": g.get("zones", []),
                "role": g.get("role"),
                "labels": g.get("labels", {}),
                "depends_on": g.get("depends_on", []),
                "profile": g.get("profile") or g.get("unit"),
                "nodes": counted.replicas if counted is not None else 0,
            }
        )
    return out


def node_counts(tally: Mapping[str, GroupTally]) -> dict[str, Any]:
    """How many live nodes the cluster has, in all and by status (the view's summary)."""
    by_status: Counter[str] = Counter()
    for t in tally.values():
        for status, n in t.by_status.items():
            by_status[str(status)] += n
    return {"total": sum(by_status.values()), "by_status": dict(sorted(by_status.items()))}


def node_summary(n: NodeRecord) -> dict[str, Any]:
    return {
        "id": n.id,
        "name": n.name,
        "kind": str(n.kind),
        "group": n.group_name,
        "status": str(n.status),
        "zone": n.zone,
        "host": n.host,
        "address": n.address,
    }


def cluster_view(
    c: ClusterRecord,
    tally: Mapping[str, GroupTally] | None = None,
    nodes: tuple[list[NodeRecord], str | None] | None = None,
) -> dict[str, Any]:
    """A cluster; with `tally`, one cluster's full view: its groups, node counts by status and
    document; with `nodes`, also a first page of its nodes and the marker of the next page
    (`GET /v1/nodes?cluster=&marker=`). Never every node: a view of 100,000 nodes is a page."""
    doc = c.document
    groups = doc.get("node_groups", [])
    desired = sum(int(g.get("count", 0)) for g in groups) + len(doc.get("instances", []))
    out: dict[str, Any] = {
        "id": c.id,
        "name": c.name,
        "project": c.project_id,
        "status": str(c.status),
        "status_reason": c.status_reason,
        "desired_capacity": desired,
        "min_size": sum(int(g.get("min", 0)) for g in groups),
        "max_size": (
            sum(int(g["max"]) for g in groups) if groups and all("max" in g for g in groups) else -1
        ),
        "metadata": doc.get("metadata", {}),
        "source_format": c.source_format,
        "action": c.lock_action_id,
        "created_at": iso(c.created_at),
        "updated_at": iso(c.updated_at),
        "generation": c.generation,
    }
    if tally is not None:
        out["node_groups"] = _groups(c, tally)
        out["node_counts"] = node_counts(tally)
        out["document"] = redacted(doc)
    if nodes is not None:
        page, after = nodes
        out["nodes"] = [node_summary(n) for n in page]
        if after is not None:
            out["nodes_next_marker"] = after
    return out


def output_view(o: OutputResult) -> dict[str, Any]:
    return {
        "name": o.name,
        "description": o.description,
        "status": str(o.status),
        "value": o.value,
        "reason": o.reason,
    }


def action_view(a: ActionRecord) -> dict[str, Any]:
    return {
        "id": a.id,
        "name": f"{str(a.kind).lower()}_{a.id[:8]}",
        "action": str(a.kind),
        "target": a.node_id or a.cluster_id,
        "cluster_id": a.cluster_id,
        "node_id": a.node_id,
        "parent": a.parent_id,
        "project": a.project_id,
        "status": str(a.status),
        "status_reason": a.status_reason,
        "inputs": _inputs(a.inputs),
        "outputs": a.outputs,
        "owner": a.owner,
        "attempts": a.attempts,
        "cancel_requested": a.cancel_requested,
        "created_at": iso(a.created_at),
        "start_time": iso(a.started_at),
        "end_time": iso(a.ended_at),
        "request_id": a.request_id,
    }


def event_view(e: EventRecord) -> dict[str, Any]:
    return {
        "id": e.id,
        "timestamp": iso(e.ts),
        "level": e.level,
        "obj_type": e.obj_type,
        "obj_name": e.obj_name,
        "obj_id": e.node_id
        if e.obj_type == "NODE"
        else (e.action_id if e.obj_type == "ACTION" else e.cluster_id),
        "cluster_id": e.cluster_id,
        "node_id": e.node_id,
        "action": e.action_id,
        "status": e.status,
        "message": e.message,
        "request_id": e.request_id,
    }


def _inputs(inputs: Any) -> Any:
    """An action's inputs as shown: a rolling update's previous document without secrets."""
    if isinstance(inputs, dict) and "previous_document" in inputs:
        return {**inputs, "previous_document": redacted(inputs["previous_document"])}
    return inputs
