"""The native API's answers as pydantic models, so /openapi.json describes what is really sent.

The views of clusters, nodes, actions and events are the service's own models
(`service/views.py`), re-exported here: the service builds them, routes declare them as their
response models, so a view and its schema are one declaration. Every model forbids extra keys
(`additionalProperties: false`): a key added to an answer but not declared here fails the
answer (and tests/api/test_view_models), instead of reaching clients undocumented.
"""

from __future__ import annotations

from typing import Any, Literal

from fastapi.routing import APIRoute
from pydantic import Field

from shoal.model.enums import ClusterStatus, NodeKind, NodeStatus
from shoal.service.deployments import DeploymentLog, DeploymentView, RolloutView
from shoal.service.profiles import ProfileView
from shoal.service.quotas import QuotaLine, QuotaView
from shoal.service.views import (
    ActionView,
    ClusterView,
    EventView,
    JsonObject,
    NodeCounts,
    NodeGroupView,
    NodeSummary,
    NodeView,
    OneAction,
    OutputView,
    View,
)

__all__ = [
    "ActionView",
    "ClusterView",
    "DeploymentLog",
    "DeploymentView",
    "EventView",
    "JsonObject",
    "NodeCounts",
    "NodeGroupView",
    "NodeSummary",
    "NodeView",
    "OneAction",
    "OutputView",
    "ProfileView",
    "QuotaLine",
    "QuotaView",
    "RolloutView",
]

_Out = View
"""Every model's base: extra keys forbidden."""


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


class ErrorBody(_Out):
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


class PlannedChange(_Out):
    """One thing besides nodes a transition changes (service/transition_preview.py)."""

    kind: Literal["deployment", "container", "workload", "replica", "network", "balancer_member"]
    name: str
    node: str | None
    """The node it is on (a deployment, a container) or the member (a balancer's)."""
    change: Literal["create", "remove", "replace", "update", "restart"]
    why: str


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
    replicas: list[JsonObject] = Field(default_factory=list)
    """Workloads' replicas -> the cluster's servers (docs/workloads.md)."""
    changes: list[PlannedChange] = Field(default_factory=list)
    """Deployments, containers, workloads, replicas, networks and balancer members created,
    removed, replaced, updated or restarted, removals first (docs/transitions.md)."""


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


class CancelledAction(_Out):
    action: ActionView


class EventPage(_Out):
    events: list[EventView]
    next: int = Field(description="Give this as `after` to read on.")


# -- profiles, receivers, hosts, projects, tokens -----------------------------------------------


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
    workload: str | None = Field(
        None, description="A workload receiver's workload (absent for a node group's)."
    )
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
    nodes: list[str] | None = Field(
        None,
        description="The lost resources that were Shoal's nodes, as `cluster/node` (a "
        "standalone node: its name), in natural order; named as they were when the host failed.",
    )


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


class NodeDeployments(_Out):
    """The deployments that have run on one node (its last run of each)."""

    node: str
    node_id: str
    cluster_id: str | None
    deployments: list[DeploymentView]


class OneDeploymentLog(_Out):
    deployment: DeploymentLog


class CollectorRequest(_Out):
    metadata_url: str


class CollectorSettings(_Out):
    collectors: list[str]
    polling_interval: float
    request: CollectorRequest


class ServerMetadata(_Out):
    deployments: list[JsonObject] = Field(
        description="Heat's shape: one config per deployment, with `deploy_*` inputs."
    )
    os_collect_config: CollectorSettings | None = Field(
        default=None,
        alias="os-collect-config",
        description="Where the agent polls next (Heat's key; os-apply-config rewrites its "
        "configuration from it).",
    )


class SignalAccepted(_Out):
    status: str


class ReplicaView(_Out):
    replica: str
    workload: str
    node: str
    ready: bool
    restarts: int
    started_at: str | None = Field(description="When its container last started (ISO 8601).")
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
    batch_started_at: str | None = Field(None, description="ISO 8601.")
    surge: list[str] = Field(
        default_factory=list, description="Surge replicas running beside the batch."
    )
    max_unavailable: int | None = None
    max_surge: int | None = None
    reason: str | None
    started_at: str | None = Field(description="When the rollout began (ISO 8601).")
    summary: str | None = Field(None, description="The rollout in a line.")


class ReplicaPage(_Out):
    cluster: str
    replicas: list[ReplicaView]
    next: str | None
    rollouts: list[WorkloadRolloutView] = Field(default_factory=list)
