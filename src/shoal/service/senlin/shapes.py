"""Senlin's JSON shapes as types: the answers the façade gives (clusters, nodes, actions,
events, profiles) and the type descriptions it lists (property schemas, support status,
operations).

Senlin's clients read these exact keys, so each is declared once as a `TypedDict`: mypy then
checks every view built against its shape (a key misspelt or forgotten fails the type check),
while the answer stays the plain dict Senlin's byte-exact tests compare. Values that are free
by nature (a spec's properties, a cluster's metadata, an action's inputs) are `JsonObject`.
"""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict

from shoal.service.views import JsonObject

__all__ = [
    "ActionView",
    "ClusterView",
    "EventView",
    "JsonObject",
    "NodeData",
    "NodeView",
    "OperationSchema",
    "ParameterSchema",
    "PolicyBindingView",
    "PolicyView",
    "ProfileView",
    "PropertySchema",
    "ReceiverView",
    "SupportStatus",
]


class PropertySchema(TypedDict):
    """One property of a profile or policy type, as `GET /profile-types/{t}` lists it."""

    type: str
    description: str
    required: bool
    updatable: bool
    default: NotRequired[object]


class SupportStatus(TypedDict):
    status: Literal["SUPPORTED"]
    since: str


class ParameterSchema(TypedDict):
    type: str
    description: str
    required: bool


class OperationSchema(TypedDict):
    """One operation of a profile type (`GET /profile-types/{t}/ops`)."""

    description: str
    parameters: dict[str, ParameterSchema]


class ProfileView(TypedDict):
    id: str | None
    name: str
    type: str
    spec: JsonObject
    metadata: JsonObject
    project: str | None
    user: None
    domain: None
    created_at: str | None
    updated_at: str | None


class ClusterView(TypedDict):
    id: str
    name: str
    profile_id: str | None
    profile_name: str | None
    status: str
    status_reason: str | None
    desired_capacity: int
    min_size: int
    max_size: int
    nodes: list[str]
    node_ids: list[str]
    init_at: str | None
    created_at: str | None
    updated_at: str | None
    metadata: JsonObject
    data: JsonObject
    policies: list[str]
    project: str
    user: None
    domain: None
    timeout: int
    dependents: JsonObject
    config: JsonObject


class NodeData(TypedDict):
    """Where Shoal put a node, under Senlin's free `data`."""

    group: str | None
    kind: str
    host: str | None
    zone: str | None
    address: str | None
    health: str


class NodeView(TypedDict):
    id: str
    name: str
    cluster_id: str | None
    profile_id: str | None
    profile_name: str | None
    physical_id: str | None
    index: int
    role: str
    status: str
    status_reason: str | None
    init_at: str | None
    created_at: str | None
    updated_at: str | None
    metadata: JsonObject
    data: NodeData
    dependents: JsonObject
    project: str
    user: None
    domain: None
    tainted: NotRequired[bool]
    """From API 1.13."""
    details: NotRequired[JsonObject]
    """With `show_details`: the server as the provider sees it (a stack's resources too)."""


class ActionView(TypedDict):
    id: str
    name: str
    action: str
    target: str | None
    cluster_id: str | None
    status: str
    status_reason: str | None
    inputs: JsonObject
    outputs: JsonObject
    created_at: str | None
    updated_at: str | None
    start_time: float | None
    end_time: float | None
    depends_on: list[str]
    depended_by: list[str]
    owner: str | None
    interval: int
    timeout: int
    cause: str
    data: JsonObject
    project: str
    user: None
    domain: None


class EventView(TypedDict):
    id: str
    timestamp: str | None
    oid: str | None
    oname: str | None
    otype: str
    cluster_id: str | None
    level: str
    action: str
    status: str | None
    status_reason: str | None
    meta_data: JsonObject
    project: str
    user: None


class ReceiverView(TypedDict):
    id: str
    name: str
    type: str
    cluster_id: str
    action: str
    params: JsonObject
    actor: JsonObject
    channel: dict[str, str]
    """`alarm_url` only in the answer to the creation (it carries the secret)."""
    created_at: str | None
    updated_at: str | None
    project: str | None
    user: None
    domain: None


class PolicyView(TypedDict):
    id: str | None
    name: str
    type: str
    spec: JsonObject
    data: JsonObject
    project: str
    user: None
    domain: None
    created_at: str | None
    updated_at: str | None


class PolicyBindingView(TypedDict):
    """A policy attached to a cluster (`GET /clusters/{c}/policies`)."""

    id: str
    cluster_id: str
    cluster_name: str
    policy_id: str
    policy_name: str
    policy_type: str
    enabled: bool
    data: JsonObject
