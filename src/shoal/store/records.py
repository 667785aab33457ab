"""Typed views of stored rows, so callers never index raw rows by string."""

from __future__ import annotations

from dataclasses import dataclass, fields
from enum import Enum
from typing import Any

from sqlalchemy import RowMapping

from shoal.frozen_twin import become, check_twin
from shoal.model.enums import ActionKind, ActionStatus, ClusterStatus, NodeKind, NodeStatus
from shoal.model.nodes import Demand


@dataclass(frozen=True, slots=True)
class ClusterRecord:
    id: str
    project_id: str
    name: str
    status: ClusterStatus
    status_reason: str
    document: dict[str, Any]
    source_format: str
    lock_action_id: str | None
    generation: int
    scaled_at: dict[str, float]
    created_at: float
    updated_at: float
    deleted_at: float | None

    @classmethod
    def from_row(cls, row: RowMapping) -> ClusterRecord:
        return cls(
            id=row["id"],
            project_id=row["project_id"],
            name=row["name"],
            status=ClusterStatus(row["status"]),
            status_reason=row["status_reason"],
            document=dict(row["document"]),
            source_format=row["source_format"],
            lock_action_id=row["lock_action_id"],
            generation=row["generation"],
            scaled_at=dict(row["scaled_at"] or {}),
            created_at=row["created_at"],
            updated_at=row["updated_at"],
            deleted_at=row["deleted_at"],
        )


@dataclass(frozen=True, slots=True)
class NodeRecord:
    id: str
    cluster_id: str | None
    project_id: str
    name: str
    kind: NodeKind
    group_name: str
    part: str | None
    replica: int
    status: NodeStatus
    status_reason: str
    host: str | None
    zone: str | None
    address: str | None
    provider_id: str | None
    profile: dict[str, Any]
    vcpus: int
    ram_mb: int
    disk_gb: int
    volume_gb: int
    attach_to: str | None
    health: str
    health_reason: str
    checked_at: float | None
    created_at: float
    updated_at: float
    deleted_at: float | None

    @classmethod
    def from_row(cls, row: RowMapping) -> NodeRecord:
        values = dict(row)
        values["kind"] = NodeKind(values["kind"])
        values["status"] = NodeStatus(values["status"])
        values["profile"] = dict(values["profile"])
        return cls(**values)


@dataclass(slots=True)
class NewNode:
    """A node row as first written: its claim on a host (`host`, `demand`) recorded before any
    provider call. Health starts UNKNOWN (the columns' defaults).

    Not frozen (issue 23): a frozen dataclass sets each of its 19 fields through
    `object.__setattr__`, which made building one cost five times a plain one's (some 5 us
    a node of a 100,000-node plan); nothing changes a NewNode once made."""

    id: str
    project_id: str
    name: str
    kind: NodeKind
    status: NodeStatus
    host: str | None
    zone: str | None
    profile: dict[str, Any]
    demand: Demand
    created_at: float
    updated_at: float
    cluster_id: str | None = None
    group_name: str = ""
    part: str | None = None
    replica: int = 0
    status_reason: str = ""
    address: str | None = None
    provider_id: str | None = None
    attach_to: str | None = None

    def columns(self) -> dict[str, object]:
        """The row's columns, by name (spelled out: a plan builds 100,000 of these, and
        `dataclasses.fields` costs more than the row)."""
        d = self.demand
        return {
            "id": self.id,
            "project_id": self.project_id,
            "name": self.name,
            "kind": self.kind,
            "status": self.status,
            "host": self.host,
            "zone": self.zone,
            "profile": self.profile,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "cluster_id": self.cluster_id,
            "group_name": self.group_name,
            "part": self.part,
            "replica": self.replica,
            "status_reason": self.status_reason,
            "address": self.address,
            "provider_id": self.provider_id,
            "attach_to": self.attach_to,
            "vcpus": d.vcpus,
            "ram_mb": d.ram_mb,
            "disk_gb": d.disk_gb,
            "volume_gb": d.volume_gb,
            "deleted_at": None,
        }


class Unset(Enum):
    """A column a `NodeChange` leaves alone (None is a value some columns take)."""

    UNSET = "unset"


UNSET = Unset.UNSET


@dataclass(frozen=True, slots=True)
class NodeChange:
    """The columns one write sets on one node row; the others are left as they are. Changes
    that set the same columns are written as one batch (`store/nodes.update_nodes`)."""

    node_id: str
    updated_at: float | Unset = UNSET
    name: str | Unset = UNSET
    cluster_id: str | Unset | None = UNSET
    group_name: str | Unset = UNSET
    status: NodeStatus | Unset = UNSET
    status_reason: str | Unset = UNSET
    provider_id: str | Unset | None = UNSET
    address: str | Unset | None = UNSET
    health: str | Unset = UNSET
    health_reason: str | Unset = UNSET
    checked_at: float | Unset | None = UNSET
    deleted_at: float | Unset | None = UNSET

    def columns(self) -> dict[str, object]:
        """The columns set, by name (node_id is the row, not a column set), always in the
        order of the fields: changes that set the same columns list them alike."""
        out: dict[str, object] = {}
        for name in CHANGE_COLUMNS:
            value = getattr(self, name)
            if value is not UNSET:
                out[name] = value
        return out


CHANGE_COLUMNS = tuple(f.name for f in fields(NodeChange) if f.name != "node_id")
"""Read once: `fields()` each call was a tenth of a flush's own CPU (issue 23)."""


@dataclass(frozen=True, slots=True)
class ActionRecord:
    id: str
    project_id: str
    cluster_id: str | None
    node_id: str | None
    parent_id: str | None
    kind: ActionKind
    status: ActionStatus
    status_reason: str
    inputs: dict[str, Any]
    outputs: dict[str, Any]
    owner: str | None
    lease_expires_at: float | None
    attempts: int
    deps_pending: int
    cancel_requested: bool
    created_at: float
    started_at: float | None
    ended_at: float | None
    request_id: str | None = None
    """The API request that caused it (X-Openstack-Request-Id), or the engine's own."""

    @classmethod
    def from_row(cls, row: RowMapping) -> ActionRecord:
        # Column by column, not through a dict of the row: a claim builds thousands.
        return cls(
            row["id"],
            row["project_id"],
            row["cluster_id"],
            row["node_id"],
            row["parent_id"],
            ActionKind(row["kind"]),
            ActionStatus(row["status"]),
            row["status_reason"],
            dict(row["inputs"]),
            dict(row["outputs"]),
            row["owner"],
            row["lease_expires_at"],
            row["attempts"],
            row["deps_pending"],
            bool(row["cancel_requested"]),
            row["created_at"],
            row["started_at"],
            row["ended_at"],
            row.get("request_id"),
        )


class ActionRecordTwin:
    """`ActionRecord`'s very slots, set by a plain `__init__` of its fields, typed as they are
    (`frozen_twin.check_twin` compares them at import); `action_record` then makes the object
    an `ActionRecord` (its layout is the same, so CPython allows the class change).
    Justified by `benchmarks/scale.py`'s `create-pg` (`shoal.frozen_twin`)."""

    __slots__ = ActionRecord.__slots__

    def __init__(
        self,
        id: str,
        project_id: str,
        cluster_id: str | None,
        node_id: str | None,
        parent_id: str | None,
        kind: ActionKind,
        status: ActionStatus,
        status_reason: str,
        inputs: dict[str, Any],
        outputs: dict[str, Any],
        owner: str | None,
        lease_expires_at: float | None,
        attempts: int,
        deps_pending: int,
        cancel_requested: bool,
        created_at: float,
        started_at: float | None,
        ended_at: float | None,
        request_id: str | None,
    ) -> None:
        self.id = id
        self.project_id = project_id
        self.cluster_id = cluster_id
        self.node_id = node_id
        self.parent_id = parent_id
        self.kind = kind
        self.status = status
        self.status_reason = status_reason
        self.inputs = inputs
        self.outputs = outputs
        self.owner = owner
        self.lease_expires_at = lease_expires_at
        self.attempts = attempts
        self.deps_pending = deps_pending
        self.cancel_requested = cancel_requested
        self.created_at = created_at
        self.started_at = started_at
        self.ended_at = ended_at
        self.request_id = request_id


def action_record(twin: ActionRecordTwin) -> ActionRecord:
    """The claimed action `twin` holds, made an `ActionRecord`. Issue 23: the frozen
    dataclass's `__init__` sets each field through `object.__setattr__`, 7.5 us a record
    against 1.4 us so (benchmarks/scale.py's `create-pg` claims thousands; see
    `shoal.frozen_twin`); the record is frozen as any other once made."""
    return become(twin, ActionRecord)


check_twin(ActionRecordTwin, ActionRecord)


@dataclass(frozen=True, slots=True)
class EventRecord:
    id: int
    ts: float
    project_id: str
    cluster_id: str | None
    node_id: str | None
    action_id: str | None
    level: str
    obj_type: str
    obj_name: str
    status: str
    message: str
    request_id: str | None = None

    @classmethod
    def from_row(cls, row: RowMapping) -> EventRecord:
        return cls(**dict(row))


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is calling: a project, and whether it may act as admin."""

    project_id: str
    is_admin: bool
