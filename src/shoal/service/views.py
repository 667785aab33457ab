"""Views of stored records as the native API answers them: one pydantic model per shape.

The models here are the API's response models too (`api/schemas.py` re-exports them), so a view
and its OpenAPI schema are one declaration and cannot drift: they forbid extra keys, and a view
built with a key its model does not declare fails where it is built, not in a client. Shaped
after Senlin's, so a compatible façade can reuse them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from datetime import UTC, datetime

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from shoal.documents.software_export import redacted
from shoal.model.enums import ActionKind, ActionStatus, ClusterStatus, NodeKind, NodeStatus
from shoal.model.outputs import OutputResult, OutputStatus
from shoal.store.nodes import GroupTally
from shoal.store.records import ActionRecord, ClusterRecord, EventRecord, NodeRecord

JsonObject = dict[str, JsonValue]
"""A free-form JSON object: a document, a cluster's metadata, an action's inputs."""


class View(BaseModel):
    """Every answer's base: keys not declared are refused, so a view matches its schema."""

    model_config = ConfigDict(extra="forbid")


def iso(ts: float | None) -> str | None:
    return (
        None if ts is None else datetime.fromtimestamp(ts, UTC).isoformat().replace("+00:00", "Z")
    )


class NodeSummary(View):
    id: str
    name: str
    kind: NodeKind
    group: str | None
    status: NodeStatus
    zone: str | None
    host: str | None
    address: str | None


class NodeCounts(View):
    total: int
    by_status: dict[str, int]


class NodeGroupView(View):
    name: str
    count: int
    min: int
    max: int | None
    zones: list[str]
    role: str | None
    labels: JsonObject
    depends_on: list[str]
    profile: JsonValue = Field(description="The profile: a stored profile's name or an inline one.")
    nodes: int = Field(description="How many replicas exist.")


class OutputView(View):
    name: str
    description: str
    status: OutputStatus = Field(description="pending: not known yet; the value is null.")
    value: JsonValue = Field(description="Evaluated against the cluster as it is now.")
    reason: str | None = Field(description="Why it is pending.")


class ClusterView(View):
    id: str
    name: str
    project: str
    status: ClusterStatus
    status_reason: str | None
    desired_capacity: int
    min_size: int
    max_size: int = Field(description="-1: unbounded.")
    metadata: JsonObject
    source_format: str
    action: str | None = Field(description="The action holding the cluster's lock, if any.")
    created_at: str | None
    updated_at: str | None
    generation: int
    node_groups: list[NodeGroupView] | None = Field(
        default=None, description="Only for one cluster."
    )
    node_counts: NodeCounts | None = Field(default=None, description="Only for one cluster.")
    nodes: list[NodeSummary] | None = Field(
        default=None, description="Only for one cluster asked with `nodes=N`: its first N nodes."
    )
    nodes_next_marker: str | None = Field(
        default=None, description="The `marker` of the next page of nodes, when more follow."
    )
    document: JsonObject | None = Field(default=None, description="The stored native document.")
    outputs: list[OutputView] | None = Field(
        default=None, description="Only for one cluster: its outputs, evaluated when asked."
    )


class NodeView(View):
    id: str
    name: str
    cluster_id: str | None = Field(description="null: a standalone node (Senlin's façade).")
    project: str
    kind: NodeKind
    group: str | None
    part: str | None
    index: int
    status: NodeStatus
    status_reason: str | None
    host: str | None
    zone: str | None
    address: str | None
    physical_id: str | None
    attached_to: str | None
    profile: JsonValue
    created_at: str | None
    updated_at: str | None


class ActionView(View):
    id: str
    name: str
    action: ActionKind
    target: str | None
    cluster_id: str | None
    node_id: str | None
    parent: str | None
    project: str
    status: ActionStatus
    status_reason: str | None
    inputs: JsonObject | None
    outputs: JsonObject | None
    owner: str | None
    attempts: int
    cancel_requested: bool
    created_at: str | None
    start_time: str | None
    end_time: str | None
    request_id: str | None = None
    """The API request that caused it (X-Openstack-Request-Id)."""


class OneAction(View):
    action: ActionView
    children: dict[str, int] = Field(description="The child actions, counted by status.")


class EventView(View):
    id: int
    timestamp: str | None
    level: str
    obj_type: str
    obj_name: str | None
    obj_id: str | None
    cluster_id: str | None
    node_id: str | None
    action: str | None
    status: str | None
    message: str | None
    request_id: str | None = None


def node_view(n: NodeRecord) -> NodeView:
    return NodeView(
        id=n.id,
        name=n.name,
        cluster_id=n.cluster_id,
        project=n.project_id,
        kind=n.kind,
        group=n.group_name,
        part=n.part,
        index=n.replica,
        status=n.status,
        status_reason=n.status_reason,
        host=n.host,
        zone=n.zone,
        address=n.address,
        physical_id=n.provider_id,
        attached_to=n.attach_to,
        profile=n.profile,
        created_at=iso(n.created_at),
        updated_at=iso(n.updated_at),
    )


def _groups(c: ClusterRecord, tally: Mapping[str, GroupTally]) -> list[NodeGroupView]:
    out = []
    for g in c.document.get("node_groups", []):
        counted = tally.get(g["name"])
        out.append(
            NodeGroupView(
                name=g["name"],
                count=g.get("count", 0),
                min=g.get("min", 0),
                max=g.get("max"),
                zones=g.get("zones", []),
                role=g.get("role"),
                labels=g.get("labels", {}),
                depends_on=g.get("depends_on", []),
                profile=g.get("profile") or g.get("unit"),
                nodes=counted.replicas if counted is not None else 0,
            )
        )
    return out


def node_counts(tally: Mapping[str, GroupTally]) -> NodeCounts:
    """How many live nodes the cluster has, in all and by status (the view's summary)."""
    by_status: Counter[str] = Counter()
    for t in tally.values():
        for status, n in t.by_status.items():
            by_status[str(status)] += n
    return NodeCounts(total=sum(by_status.values()), by_status=dict(sorted(by_status.items())))


def node_summary(n: NodeRecord) -> NodeSummary:
    return NodeSummary(
        id=n.id,
        name=n.name,
        kind=n.kind,
        group=n.group_name,
        status=n.status,
        zone=n.zone,
        host=n.host,
        address=n.address,
    )


def cluster_view(
    c: ClusterRecord,
    tally: Mapping[str, GroupTally] | None = None,
    nodes: tuple[list[NodeRecord], str | None] | None = None,
    outputs: list[OutputResult] | None = None,
) -> ClusterView:
    """A cluster; with `tally`, one cluster's full view: its groups, node counts by status and
    document; with `nodes`, also a first page of its nodes and the marker of the next page
    (`GET /v1/nodes?cluster=&marker=`); with `outputs`, its evaluated outputs. Never every
    node: a view of 100,000 nodes is a page. Only the parts asked are set, so an answer
    leaves the others out (`ExactRoute`)."""
    doc = c.document
    groups = doc.get("node_groups", [])
    desired = sum(int(g.get("count", 0)) for g in groups) + len(doc.get("instances", []))
    view = ClusterView(
        id=c.id,
        name=c.name,
        project=c.project_id,
        status=c.status,
        status_reason=c.status_reason,
        desired_capacity=desired,
        min_size=sum(int(g.get("min", 0)) for g in groups),
        max_size=(
            sum(int(g["max"]) for g in groups) if groups and all("max" in g for g in groups) else -1
        ),
        metadata=doc.get("metadata", {}),
        source_format=c.source_format,
        action=c.lock_action_id,
        created_at=iso(c.created_at),
        updated_at=iso(c.updated_at),
        generation=c.generation,
    )
    if tally is not None:
        view.node_groups = _groups(c, tally)
        view.node_counts = node_counts(tally)
        view.document = redacted(doc)
    if nodes is not None:
        page, after = nodes
        view.nodes = [node_summary(n) for n in page]
        if after is not None:
            view.nodes_next_marker = after
    if outputs is not None:
        view.outputs = [output_view(o) for o in outputs]
    return view


def output_view(o: OutputResult) -> OutputView:
    return OutputView(
        name=o.name,
        description=o.description,
        status=o.status,
        value=o.value,
        reason=o.reason,
    )


def action_view(a: ActionRecord) -> ActionView:
    return ActionView(
        id=a.id,
        name=f"{str(a.kind).lower()}_{a.id[:8]}",
        action=a.kind,
        target=a.node_id or a.cluster_id,
        cluster_id=a.cluster_id,
        node_id=a.node_id,
        parent=a.parent_id,
        project=a.project_id,
        status=a.status,
        status_reason=a.status_reason,
        inputs=_inputs(a.inputs),
        outputs=a.outputs,
        owner=a.owner,
        attempts=a.attempts,
        cancel_requested=a.cancel_requested,
        created_at=iso(a.created_at),
        start_time=iso(a.started_at),
        end_time=iso(a.ended_at),
        request_id=a.request_id,
    )


def event_view(e: EventRecord) -> EventView:
    return EventView(
        id=e.id,
        timestamp=iso(e.ts),
        level=e.level,
        obj_type=e.obj_type,
        obj_name=e.obj_name,
        obj_id=e.node_id
        if e.obj_type == "NODE"
        else (e.action_id if e.obj_type == "ACTION" else e.cluster_id),
        cluster_id=e.cluster_id,
        node_id=e.node_id,
        action=e.action_id,
        status=e.status,
        message=e.message,
        request_id=e.request_id,
    )


def _inputs(inputs: JsonObject) -> JsonObject:
    """An action's inputs as shown: a rolling update's previous document without secrets."""
    if "previous_document" in inputs:
        return {**inputs, "previous_document": redacted(inputs["previous_document"])}
    return inputs
