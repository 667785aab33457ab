"""What the engine tells the message bus (issue 27): Senlin's versioned notifications.

Senlin sends `cluster.<action>.<phase>` with a `ClusterActionPayload` (a cluster and an
action) and `node.<action>.<phase>` with a `NodeActionPayload`, phase `start`, `end` or `error`
(priority ERROR), each an oslo versioned object's primitive (`senlin_object.name`, `.data`...).
Shoal sends the same shapes and names, so a consumer written for Senlin reads Shoal's:
`CLUSTER_CREATE` is `cluster.create`, `CLUSTER_RECOVER` (a health repair) `cluster.recover`,
`NODE_CREATE` `node.create`. A rolling update is `cluster.update`.

No secrets travel: an action's inputs (documents, with hidden parameters) and a cluster's
document are never in a payload — `inputs`, `data` and `metadata` stay empty; webhook tokens
live nowhere near here.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from shoal.engine.contracts import StepLabel
from shoal.model.enums import ActionKind, ActionStatus
from shoal.store import clusters as cluster_repo
from shoal.store.database import Database
from shoal.store.records import ActionRecord, ClusterRecord
from shoal.telemetry.notify import Notification, Notifier

_NO_NOTES = frozenset({ActionKind.BARRIER, ActionKind.NODE_DEPLOY})


def _iso(ts: float | None) -> str | None:
    return None if ts is None else datetime.fromtimestamp(ts, UTC).isoformat()


def _obj(name: str, data: dict[str, Any]) -> dict[str, Any]:
    return {
        "senlin_object.name": name,
        "senlin_object.namespace": "senlin",
        "senlin_object.version": "1.0",
        "senlin_object.data": data,
    }


def verb(kind: ActionKind) -> str:
    """`CLUSTER_SCALE_OUT` -> `scale_out`, `NODE_CREATE` -> `create`, as Senlin names them."""
    return str(kind).split("_", 1)[1].lower()


def _action(a: ActionRecord, target: str | None) -> dict[str, Any]:
    return _obj(
        "ActionPayload",
        {
            "id": a.id,
            "name": f"{str(a.kind).lower()}_{a.id[:8]}",
            "created_at": _iso(a.created_at),
            "target": target,
            "action": str(a.kind),
            "start_time": a.started_at,
            "end_time": a.ended_at,
            "timeout": None,
            "status": str(a.status),
            "status_reason": a.status_reason,
            "inputs": {},
            "outputs": {},
            "data": {},
            "user": "",
            "project": a.project_id,
            "request_id": a.request_id,
        },
    )


def _cluster(c: ClusterRecord) -> dict[str, Any]:
    return _obj(
        "ClusterPayload",
        {
            "id": c.id,
            "name": c.name,
            "profile_id": None,
            "init_at": _iso(c.created_at),
            "created_at": _iso(c.created_at),
            "updated_at": _iso(c.updated_at),
            "status": str(c.status),
            "status_reason": c.status_reason,
            "data": {},
            "metadata": {},
            "user": "",
            "project": c.project_id,
            "domain": None,
            "desired_capacity": None,
            "min_size": None,
            "max_size": None,
            "timeout": None,
            "dependents": {},
        },
    )


def _phase(a: ActionRecord, started: bool) -> tuple[str, str]:
    if started:
        return "start", "INFO"
    if a.status is ActionStatus.SUCCEEDED:
        return "end", "INFO"
    return "error", "ERROR"


def cluster_action(notifier: Notifier, db: Database, a: ActionRecord, *, started: bool) -> None:
    """`cluster.<verb>.start|end|error` for a cluster-level action (reads its cluster)."""
    if not notifier.enabled or a.cluster_id is None or a.kind in _NO_NOTES:
        return
    with db.reading() as conn:
        c = cluster_repo.get_cluster(conn, a.cluster_id, include_deleted=True)
    if c is None:
        return
    phase, priority = _phase(a, started)
    exception = None if phase != "error" else _error(a)
    payload = _obj(
        "ClusterActionPayload",
        {"cluster": _cluster(c), "action": _action(a, c.id), "exception": exception},
    )
    kind = "cluster" if a.kind.name.startswith("CLUSTER") else "nodegroup"
    notifier.emit(Notification(f"{kind}.{verb(a.kind)}.{phase}", payload, priority))


def node_action(
    notifier: Notifier,
    a: ActionRecord,
    *,
    started: bool,
    status: str = "",
    physical_id: str | None = None,
) -> None:
    """`node.<verb>.start|end|error` for a node-level action (from the action alone)."""
    if not notifier.enabled or a.node_id is None or a.kind in _NO_NOTES:
        return
    phase, priority = _phase(a, started)
    node = _obj(
        "NodePayload",
        {
            "id": a.node_id,
            "name": StepLabel.from_json(a.inputs).node,
            "profile_id": None,
            "cluster_id": a.cluster_id,
            "physical_id": physical_id,
            "index": None,
            "role": None,
            "status": status,
            "status_reason": a.status_reason,
            "data": {},
            "metadata": {},
            "user": "",
            "project": a.project_id,
        },
    )
    exception = None if phase != "error" else _error(a)
    payload = _obj(
        "NodeActionPayload", {"node": node, "action": _action(a, a.node_id), "exception": exception}
    )
    notifier.emit(Notification(f"node.{verb(a.kind)}.{phase}", payload, priority))


def deployment(
    notifier: Notifier,
    a: ActionRecord,
    name: str,
    node: str,
    action: str,
    config: str,
    *,
    ok: bool,
    status_code: int | None,
) -> None:
    """`deployment.<create|update|delete>.end|error`: one software deployment's run on a node
    (Senlin has none; the shape follows its payloads). Neither inputs nor outputs nor the
    run's output travel: they may hold secrets."""
    if not notifier.enabled:
        return
    payload = _obj(
        "DeploymentPayload",
        {
            "id": a.id,
            "name": name,
            "node": node,
            "node_id": a.node_id,
            "cluster_id": a.cluster_id,
            "config": config,
            "action": action,
            "status": "COMPLETE" if ok else "FAILED",
            "status_code": status_code,
            "project": a.project_id,
            "request_id": a.request_id,
        },
    )
    phase, priority = ("end", "INFO") if ok else ("error", "ERROR")
    notifier.emit(Notification(f"deployment.{action.lower()}.{phase}", payload, priority))


def _error(a: ActionRecord) -> dict[str, Any]:
    return _obj(
        "ExceptionPayload",
        {
            "module": "shoal.engine",
            "function": str(a.kind).lower(),
            "exception": str(a.status),
            "message": a.status_reason,
        },
    )
