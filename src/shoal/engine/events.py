"""Small constructors for the events the engine writes, so messages read alike everywhere."""

from __future__ import annotations

from shoal.engine.contracts import StepLabel
from shoal.store.events import NewEvent, new_event
from shoal.store.records import ActionRecord, ClusterRecord, NodeRecord


def cluster_event(
    c: ClusterRecord,
    status: str,
    message: str,
    *,
    action_id: str | None = None,
    level: str = "INFO",
) -> NewEvent:
    return NewEvent(
        project_id=c.project_id,
        obj_type="CLUSTER",
        obj_name=c.name,
        status=status,
        message=message,
        cluster_id=c.id,
        action_id=action_id,
        level=level,
    )


def action_event(
    a: ActionRecord, status: str, message: str, *, name: str = "", level: str = "INFO"
) -> NewEvent:
    return NewEvent(
        project_id=a.project_id,
        obj_type="ACTION",
        obj_name=name or str(a.kind),
        status=status,
        message=message,
        cluster_id=a.cluster_id,
        node_id=a.node_id,
        action_id=a.id,
        level=level,
        request_id=a.request_id,
    )


def node_event(
    *,
    project_id: str,
    cluster_id: str | None,
    node_id: str,
    name: str,
    status: str,
    message: str,
    action_id: str | None = None,
    level: str = "INFO",
) -> NewEvent:
    return NewEvent(
        project_id=project_id,
        obj_type="NODE",
        obj_name=name,
        status=status,
        message=message,
        cluster_id=cluster_id,
        node_id=node_id,
        action_id=action_id,
        level=level,
    )


def node_record_event(
    n: NodeRecord, status: str, message: str, action_id: str | None = None, level: str = "INFO"
) -> NewEvent:
    return node_event(
        project_id=n.project_id,
        cluster_id=n.cluster_id,
        node_id=n.id,
        name=n.name,
        status=status,
        message=message,
        action_id=action_id,
        level=level,
    )


def child_node_event(
    a: ActionRecord,
    status: str,
    message: str,
    level: str = "INFO",
    *,
    label: StepLabel | None = None,
) -> NewEvent | None:
    """An event about the node a child action works on (None for actions without a node);
    `label`: its inputs' label, when the caller read it already."""
    if a.node_id is None or a.cluster_id is None:
        return None
    # By position, without the frozen `__init__` (issue 23: one event per node claimed and
    # per node finished).
    return new_event(
        a.project_id,
        "NODE",
        # `StepLabel.from_json(a.inputs).node` without the label (issue 23: a write made one
        # frozen object per node only for this).
        label.node if label is not None else str(a.inputs.get("node", "")),
        status,
        message,
        a.cluster_id,
        a.node_id,
        a.id,
        level,
        a.request_id,  # issue 27
    )
