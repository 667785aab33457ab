"""The native API's answers as pydantic models, so /openapi.json describes what is really sent.

The service shapes answers as plain JSON views (`service/views.py`); routes declare these models
as their response models, so FastAPI checks every answer against the same schema a client
generator or a fuzzer reads. Models allow extra keys: a field added to a view reaches clients
(and should be declared here) rather than being dropped.
"""

from __future__ import annotations

from typing import Any

from fastapi.routing import APIRoute
from pydantic import BaseModel, ConfigDict, Field

from shoal.model.enums import ActionKind, ActionStatus, ClusterStatus, NodeKind, NodeStatus
from shoal.model.outputs import OutputStatus

JsonObject = dict[str, Any]


class _Out(BaseModel):
    model_config = ConfigDict(extra="allow")


class ExactRoute(APIRoute):
    """A route whose answer keeps the view's keys: fields a view leaves out stay out (a
    receiver's `webhook_url` outside its creation, a cluster's nodes outside `GET` of one)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["response_model_exclude_unset"] = True
        super().__init__(*args, **kwargs)


# -- errors -------------------------------------------------------------------------------------


class Problem(_Out):
    path: str = Field(description="A JSON pointer into the request (or `query:name`).")
    message: str


class ErrorInfo(_Out):
    code: str
    title: str
    message: str
    details: list[JsonObject] = Field(
        description="Every problem found, each with a `path` (JSON pointer) and a `message`."
    )


class ErrorBody(BaseModel):
    """Every error the native API answers."""

    error: ErrorInfo


def _error(description: str) -> dict[str, Any]:
    return {"model": ErrorBody, "description": description}


ERRORS: dict[int | str, dict[str, Any]] = {
    400: _error("Bad request"),
    401: _error("No valid token (missing, unknown, expired or revoked)"),
    403: _error("Not allowed for this token"),
    404: _error("No such object for this project"),
    409: _error("Conflict: another action holds the cluster, a name is taken, it cannot be placed"),
    413: _error("Request body too large"),
    422: _error("Invalid request: every problem, each with a JSON pointer"),
    429: _error("Over a fair share (event streams, long polls): the limit named, Retry-After"),
    503: _error("The identity service (Keystone) is slow or down: Retry-After"),
}
"""The error statuses of every native route, declared once for all routers."""

JSON_ERRORS: dict[int | str, dict[str, Any]] = {
    status: {
        "description": answer["description"],
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}},
    }
    for status, answer in ERRORS.items()
}
"""The same, for a route whose success is not JSON (the event stream): errors still are."""


# -- clusters, node groups, nodes ---------------------------------------------------------------


class NodeSummary(_Out):
    id: str
    name: str
    kind: NodeKind
    group: str | None
    status: NodeStatus
    zone: str | None
    host: str | None
    address: str | None


class NodeCounts(_Out):
    total: int
    by_status: dict[str, int]


class NodeGroupView(_Out):
    name: str
    count: int
    min: int
    max: int | None
    zones: list[str]
    role: str | None
    labels: dict[str, Any]
    depends_on: list[str]
    profile: Any = Field(description="The profile: a stored profile's name or an inline one.")
    nodes: int = Field(description="How many replicas exist.")


class OutputView(_Out):
    name: str
    description: str
    status: OutputStatus = Field(description="pending: not known yet; the value is null.")
    value: Any = Field(description="Evaluated against the cluster as it is now.")
    reason: str | None = Field(description="Why it is pending.")


class ClusterView(_Out):
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
    node_groups: list[NodeGroupView] | None = Field(None, description="Only for one cluster.")
    node_counts: NodeCounts | None = Field(None, description="Only for one cluster.")
    nodes: list[NodeSummary] | None = Field(
        None, description="Only for one cluster asked with `nodes=N`: its first N nodes."
    )
    nodes_next_marker: str | None = Field(
        None, description="The `marker` of the next page of nodes, when more follow."
    )
    document: JsonObject | None = Field(None, description="The stored native document.")
    outputs: list[OutputView] | None = Field(
        None, description="Only for one cluster: its outputs, evaluated when asked."
    )


class NodeView(_Out):
    id: str
    name: str
    cluster_id: str
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
    profile: Any
    created_at: str | None
    updated_at: str | None


class ActionView(_Out):
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


class EventView(_Out):
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


class Accepted(_Out):
    """A 202: the action that will do the work (also in `Location`) and the cluster."""

    cluster: ClusterView
    action: ActionView


class ClusterList(_Out):
    clusters: list[ClusterView]
    next_marker: str | None = None
    """The `marker` of the next page; absent on the last page."""


class OneCluster(_Out):
    cluster: ClusterView


class NodeGroupList(_Out):
    nodegroups: list[NodeGroupView]


class OneNodeGroup(_Out):
    nodegroup: NodeGroupView


class PlannedCreate(_Out):
    node: str
    host: str | None
    zone: str | None


class PlannedAttach(_Out):
    volume: str
    server: str | None


class UpdateBatch(_Out):
    group: str
    nodes: list[Any]


class Plan(_Out):
    cluster: str
    create: list[PlannedCreate]
    delete: list[str]
    attach: list[PlannedAttach]
    update_batches: list[UpdateBatch]
    soft_violations: list[JsonObject]
    replicas: list[JsonObject] = []
    """Workloads' replicas -> the cluster's servers (docs/workloads.md)."""


class OnePlan(_Out):
    plan: Plan


class NodeList(_Out):
    nodes: list[NodeView]
    next_marker: str | None = None
    """The `marker` of the next page; absent on the last page."""


class OneNode(_Out):
    node: NodeView


class ActionList(_Out):
    actions: list[ActionView]
    next_marker: str | None = None
    """The `marker` of the next page; absent on the last page."""


class OneAction(_Out):
    action: ActionView
    children: dict[str, int] = Field(description="The child actions, counted by status.")


class CancelledAction(_Out):
    action: ActionView


class EventPage(_Out):
    events: list[EventView]
    next: int = Field(description="Give this as `after` to read on.")


# -- profiles, receivers, hosts, projects, tokens -----------------------------------------------


class ProfileView(_Out):
    id: str
    name: str
    type: str
    spec: JsonObject
    project: str
    created_at: str | None


class ProfileList(_Out):
    profiles: list[ProfileView]


class OneProfile(_Out):
    profile: ProfileView


class ReceiverView(_Out):
    id: str
    name: str
    project: str
    cluster_id: str
    action: str
    nodegroup: str | None
    params: JsonObject
    webhook_url: str | None = Field(
        None, description="Only in the answer that created it: the URL holds the secret."
    )
    created_at: str | None
    triggered_at: str | None


class ReceiverList(_Out):
    receivers: list[ReceiverView]
    next_marker: str | None = None
    """The `marker` of the next page; absent on the last page."""


class OneReceiver(_Out):
    receiver: ReceiverView


class HostCapacity(_Out):
    vcpus: int
    ram_mb: int
    disk_gb: int
    volume_gb: int


class HostView(_Out):
    name: str
    zone: str | None
    failed: bool
    resources: Any
    capacity: HostCapacity | None = Field(
        description="What the host offers; null when it is not in the inventory (failed)."
    )
    used: HostCapacity = Field(
        description="What Shoal's live nodes and its accepted, unplaced actions hold on it."
    )


class HostList(_Out):
    hosts: list[HostView]


class HostState(_Out):
    host: str
    failed: bool
    resources: Any = None


class ProjectView(_Out):
    id: str
    name: str


class TokenView(_Out):
    id: str
    project: str
    name: str
    admin: bool
    status: str = Field(description="ACTIVE, EXPIRED or REVOKED.")
    created_at: str | None
    expires_at: str | None = Field(description="None: it never expires.")
    revoked_at: str | None


class NewProject(_Out):
    project: ProjectView
    token: str = Field(description="The project's first token; it is not shown again.")
    token_info: TokenView


class NewToken(_Out):
    token: str = Field(description="The secret; it is not shown again.")
    token_info: TokenView


class TokenList(_Out):
    tokens: list[TokenView]


class OneToken(_Out):
    token_info: TokenView


class QuotaLine(_Out):
    limit: int = Field(description="-1: unlimited.")
    in_use: int
    default: bool = Field(description="True: the server's default, not a per-project override.")


class QuotaView(_Out):
    project: str
    quotas: dict[str, QuotaLine] = Field(
        description="Per resource: clusters, nodes, vcpus, ram_mb, volume_gb."
    )


class Health(_Out):
    status: str


class VersionInfo(_Out):
    version: JsonObject
    provider: str


def raw_body(description: str, *, yaml: bool = False, required: bool = True) -> dict[str, Any]:
    """`openapi_extra` for a route that reads its body itself (a document, or a free object)."""
    content: dict[str, Any] = {"application/json": {"schema": {"type": "object"}}}
    if yaml:
        content["application/yaml"] = {"schema": {"type": "string"}}
    return {"requestBody": {"required": required, "description": description, "content": content}}


class VClusterInstance(_Out):
    id: str
    name: str
    type: NodeKind
    status: NodeStatus
    host: str | None
    availability_zone: str | None
    address: str | None


class VClusterGrouping(_Out):
    name: str
    membersRef: Any  # noqa: N815 - the seed blueprint's own spelling
    spec: JsonObject


class VClusterView(_Out):
    id: str
    name: str
    tenant_id: str
    status: ClusterStatus
    status_reason: str | None
    created_at: str | None
    updated_at: str | None
    instances: list[VClusterInstance]
    groupings: list[VClusterGrouping]


class VClusterBrief(_Out):
    id: str
    name: str
    status: ClusterStatus


class VClusterList(_Out):
    vclusters: list[VClusterBrief]


class OneVCluster(_Out):
    vcluster: VClusterView


class VClusterAccepted(_Out):
    vcluster: VClusterView | None = None
    action: str


# -- software deployments (issue 11) ------------------------------------------------------------


class DeploymentView(_Out):
    deployment: str
    node: str
    node_id: str
    config: str
    group: str
    action: str
    status: str
    status_code: int | None
    attempts: int
    action_id: str | None
    started_at: str | None
    ended_at: str | None


class RolloutView(_Out):
    deployment: str
    group: str
    phase: str = Field(description="run, gate, pause, rollback; then done, rolled_back or stopped.")
    batch: int = Field(description="The batch started last (1-based).")
    batches: int
    nodes: list[str] = Field(description="The nodes of that batch.")
    restored: list[str] = Field(description="Nodes given their previous revision again.")
    reason: str = Field(description="Why it stopped or rolled back.")
    summary: str
    started_at: str | None
    updated_at: str | None


class DeploymentList(_Out):
    deployments: list[DeploymentView]
    rollouts: list[RolloutView] = Field(
        default_factory=list,
        description="Rolling updates of config changes, one per deployment (the latest).",
    )
    counts: dict[str, int] = Field(
        default_factory=dict,
        description="All the cluster's deployments (every page) counted by status.",
    )
    next_marker: str | None = Field(
        None, description="The `marker` of the next page; absent on the last page."
    )


class DeploymentLog(DeploymentView):
    inputs: JsonObject = Field(description="Resolved inputs, secrets shown as ******.")
    outputs: JsonObject
    stdout: str = Field(description="The end of the run's stdout (secrets scrubbed).")
    stderr: str


class OneDeploymentLog(_Out):
    deployment: DeploymentLog


class ServerMetadata(_Out):
    deployments: list[JsonObject] = Field(
        description="Heat's shape: one config per deployment, with `deploy_*` inputs."
    )


class SignalAccepted(_Out):
    status: str


class ReplicaView(_Out):
    replica: str
    workload: str
    node: str
    ready: bool
    restarts: int
    started_at: float | None
    revision: str | None = None
    """The template revision it runs (a rollout's `revision` or `previous_revision`)."""


class WorkloadRolloutView(_Out):
    """A workload's rolling update (docs/workloads.md): COMPLETE, ROLLING, ROLLING_BACK or
    ROLLED_BACK; `revision` is the document's template, `previous_revision` the one rolled
    from (and back to), `batch` the replicas of the batch in flight, `reason` why it rolled
    back."""

    workload: str
    phase: str
    revision: str
    images: list[str]
    previous_revision: str | None
    batches: int
    batch: list[str]
    reason: str | None
    started_at: float


class ReplicaPage(_Out):
    cluster: str
    replicas: list[ReplicaView]
    next: str | None
    rollouts: list[WorkloadRolloutView] = []
