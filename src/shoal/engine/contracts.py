"""What actions carry, as typed values: node-action inputs, repairs, the rolling-update state.

An action row stores its inputs and outputs as JSON, and several parties write them (the
service, the planner, the Senlin layer) while others read them (node work, the rolling update,
the UI). Passing the raw dicts between engine modules made every key a silent contract, the
habit that made Senlin's `action.data` hard to change. So each shape has one frozen dataclass
here, with one `to_json` (used where the action row is written) and one `from_json` (used where
it is read); everything in between is typed. The JSON keeps the names it always had, so rows
written before this module existed read back unchanged, and keys other writers add (the Senlin
layer's own) are left alone.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar, final

from shoal.frozen_twin import become, check_twin
from shoal.model.enums import NodeKind, NodeStatus
from shoal.model.policies import Recovery
from shoal.providers.base import ServerGroupHint
from shoal.store.records import UNSET, NodeChange, Unset

T = TypeVar("T")

JSON = dict[str, Any]
"""A JSON object as stored in an action row (only `to_json`/`from_json` see one)."""
ProfileDocument = dict[str, Any]
"""A node's profile as stored on its row (see `engine.profiles`): a document, not a contract."""


# -- repairs ------------------------------------------------------------------------------------


class RepairHow(enum.StrEnum):
    """How a node is repaired; CREATE stands for declared nodes that do not exist at all."""

    RECREATE = "recreate"
    REBOOT = "reboot"
    REBUILD = "rebuild"
    REPLACE = "replace"
    CREATE = "create"

    @classmethod
    def of_policy(cls, recovery: Recovery) -> RepairHow | None:
        """The repair a health policy asks for (None: leave the node alone)."""
        return None if recovery is Recovery.NONE else cls(str(recovery))

    def fitted(self, kind: NodeKind, made: bool) -> RepairHow:
        """This repair as it can be done to a node of `kind`: a node whose resource was never
        made, or a volume, has nothing to reboot or rebuild, so it is made again in place."""
        if not made and self is not RepairHow.CREATE:
            return RepairHow.RECREATE
        if kind is NodeKind.VOLUME and self in (RepairHow.REBOOT, RepairHow.REBUILD):
            return RepairHow.RECREATE
        return self


@dataclass(frozen=True, slots=True)
class Repair:
    """One node to repair (a recovery's input), and why."""

    node: str
    how: RepairHow
    why: str = ""

    @classmethod
    def missing(cls, count: int) -> Repair:
        """The repair standing for `count` declared nodes that do not exist (the plan makes
        them; the name is only what events and the action's inputs show)."""
        return cls(f"{count} missing node(s)", RepairHow.CREATE, "missing")

    def to_json(self) -> JSON:
        return {"node": self.node, "how": str(self.how), "why": self.why}

    @classmethod
    def from_json(cls, row: Mapping[str, Any]) -> Repair:
        return cls(
            str(row.get("node", "")), RepairHow(row.get("how", "replace")), str(row.get("why", ""))
        )


# -- cluster-level actions ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ClusterInputs:
    """What the engine reads from a cluster action's inputs.

    `request` is what the request itself said (its count, node group, Senlin action name …):
    recorded for people and the Senlin views, never read by the engine.
    """

    victims: tuple[str, ...] | None = None
    """Nodes the change removes, chosen at admission (by name); None: not a change."""
    repairs: tuple[Repair, ...] | None = None
    """For a recovery: the nodes to repair."""
    reason: str = ""
    """For a recovery the engine started: why."""
    previous_document: JSON | None = None
    """For an update: the document to restore when its rolling update fails."""
    place_in_engine: bool = False
    """For a create larger than `sync_place_max_nodes`: admitted without a placement, so the
    planner places it first (workloads included) and, if it cannot, removes the cluster."""
    request: JSON = field(default_factory=dict)

    def to_json(self) -> JSON:
        out: JSON = dict(self.request)
        if self.victims is not None:
            out["victims"] = list(self.victims)
        if self.repairs is not None:
            out["repairs"] = [r.to_json() for r in self.repairs]
        if self.reason:
            out["reason"] = self.reason
        if self.previous_document is not None:
            out["previous_document"] = self.previous_document
        if self.place_in_engine:
            out["place_in_engine"] = True
        return out

    @classmethod
    def from_json(cls, row: Mapping[str, Any]) -> ClusterInputs:
        known = {"victims", "repairs", "reason", "previous_document", "place_in_engine"}
        prev = row.get("previous_document")
        victims = row.get("victims")
        repairs = row.get("repairs")
        return cls(
            victims=None if victims is None else tuple(str(v) for v in victims),
            repairs=None if repairs is None else tuple(Repair.from_json(r) for r in repairs),
            reason=str(row.get("reason") or ""),
            previous_document=dict(prev) if isinstance(prev, Mapping) else None,
            place_in_engine=row.get("place_in_engine") is True,
            request={k: v for k, v in row.items() if k not in known},
        )


# -- node-level actions -------------------------------------------------------------------------


_NODE_KINDS = {k.value: k for k in NodeKind}


def _hint_to_json(hint: ServerGroupHint | None) -> JSON | None:
    if hint is None:
        return None
    return {"grouping": hint.grouping, "policy": hint.policy, "max_per_host": hint.max_per_host}


def server_group_hint(row: Mapping[str, Any] | None) -> ServerGroupHint | None:
    """The hint the planner stored (absent in actions planned before it existed)."""
    if not row:
        return None
    return ServerGroupHint(str(row["grouping"]), str(row["policy"]), row.get("max_per_host"))


@final  # `from_json` builds exactly this class (issue 23)
@dataclass(frozen=True, slots=True)
class NodeInputs:
    """What a provider call on one node needs: make it (NODE_CREATE), reboot or rebuild it.

    `existing` says the node was made before (a recreate or in-place repair, whose inputs come
    from the node's row): then a create can never be sure nothing was made already.
    """

    node: str
    cluster_name: str
    kind: NodeKind
    host: str | None
    zone: str | None
    profile: ProfileDocument
    provider_id: str | None = None
    server_group: ServerGroupHint | None = None
    existing: bool = False
    metadata_url: str | None = None
    """Where the server's software agents poll (issue 11), added by the deployer just before
    the create runs; never stored."""

    @property
    def resource_name(self) -> str:
        """The provider-side name: `<cluster>-<node>` (a standalone node: its own name)."""
        return f"{self.cluster_name}-{self.node}" if self.cluster_name else self.node

    def with_server_group(self, hint: ServerGroupHint | None) -> NodeInputs:
        return replace(self, server_group=hint)

    def to_json(self) -> JSON:
        out: JSON = {
            "node": self.node,
            "cluster_name": self.cluster_name,
            "kind": str(self.kind),
            "host": self.host,
            "zone": self.zone,
            "profile": self.profile,
        }
        if self.existing:
            out["provider_id"] = self.provider_id
        if self.server_group is not None:
            out["server_group"] = _hint_to_json(self.server_group)
        return out

    @classmethod
    def from_json(cls, row: Mapping[str, Any]) -> NodeInputs:
        pid = row.get("provider_id")
        kind = row.get("kind", NodeKind.SERVER)
        url = row.get("metadata_url")
        # Issue 23: read once per node action; the frozen init sets each field through
        # `object.__setattr__` (2 µs against 0.6 µs so). The object is then a `NodeInputs`,
        # frozen as any other.
        inputs = _NodeInputsSlots(
            str(row.get("node", "")),
            str(row.get("cluster_name") or ""),
            _NODE_KINDS.get(kind) or NodeKind(kind),  # a dict lookup before the enum's call
            row.get("host"),
            row.get("zone"),
            dict(row.get("profile") or {}),
            str(pid) if pid else None,
            server_group_hint(row.get("server_group")),
            "provider_id" in row,
            str(url) if url else None,
        )
        return become(inputs, NodeInputs)


class _NodeInputsSlots:
    """`NodeInputs`'s very slots, set by a plain `__init__` in the fields' order; CPython then
    allows the class change to `NodeInputs` (the same layout), as `store/records` does.
    Justified by `benchmarks/scale.py`'s `create-pg` (`shoal.frozen_twin`)."""

    __slots__ = NodeInputs.__slots__

    def __init__(
        self,
        node: str,
        cluster_name: str,
        kind: NodeKind,
        host: str | None,
        zone: str | None,
        profile: ProfileDocument,
        provider_id: str | None,
        server_group: ServerGroupHint | None,
        existing: bool,
        metadata_url: str | None,
    ) -> None:
        self.node = node
        self.cluster_name = cluster_name
        self.kind = kind
        self.host = host
        self.zone = zone
        self.profile = profile
        self.provider_id = provider_id
        self.server_group = server_group
        self.existing = existing
        self.metadata_url = metadata_url


check_twin(_NodeInputsSlots, NodeInputs)


@dataclass(frozen=True, slots=True)
class DeleteInputs:
    """What deleting a node's resource needs (its id may be unknown: the create's answer was
    never recorded; then the resource is found by the node's key)."""

    node: str
    cluster_name: str
    kind: NodeKind
    provider_id: str | None

    def to_json(self) -> JSON:
        return {
            "node": self.node,
            "cluster_name": self.cluster_name,
            "kind": str(self.kind),
            "provider_id": self.provider_id,
        }

    @classmethod
    def from_json(cls, row: Mapping[str, Any]) -> DeleteInputs:
        pid = row.get("provider_id")
        return cls(
            node=str(row.get("node", "")),
            cluster_name=str(row.get("cluster_name") or ""),
            kind=NodeKind(row["kind"]),
            provider_id=str(pid) if pid else None,
        )


@dataclass(frozen=True, slots=True)
class AttachInputs:
    """Attach a volume node to its server node (both by node; ids are read when it runs)."""

    node: str
    cluster_name: str
    server: str
    server_node_id: str

    def to_json(self) -> JSON:
        return {
            "node": self.node,
            "cluster_name": self.cluster_name,
            "server": self.server,
            "server_node_id": self.server_node_id,
        }

    @classmethod
    def from_json(cls, row: Mapping[str, Any]) -> AttachInputs:
        return cls(
            node=str(row.get("node", "")),
            cluster_name=str(row.get("cluster_name") or ""),
            server=str(row["server"]),
            server_node_id=str(row["server_node_id"]),
        )


@dataclass(frozen=True, slots=True)
class BarrierInputs:
    """A step that does nothing but order others (its `node` names the step)."""

    node: str
    cluster_name: str

    def to_json(self) -> JSON:
        return {"node": self.node, "cluster_name": self.cluster_name}


StepInputs = NodeInputs | DeleteInputs | AttachInputs | BarrierInputs
"""What a child action of a cluster action carries."""


@dataclass(frozen=True, slots=True)
class StepLabel:
    """What every child action's inputs say, whatever its kind: the node (or step) it works on
    and, for one that makes or restarts a node, the host — for events and reasons."""

    node: str
    host: str | None

    @classmethod
    def from_json(cls, row: Mapping[str, Any]) -> StepLabel:
        host = row.get("host")
        return cls(str(row.get("node", "")), str(host) if host else None)


# -- outcomes -----------------------------------------------------------------------------------


@final  # `made` builds exactly this class (issue 23)
@dataclass(frozen=True, slots=True)
class NodeOutputs:
    """What a node action reports: the resource it made or touched, or the server attached to."""

    provider_id: str | None = None
    address: str | None = None
    server: str | None = None

    @classmethod
    def made(cls, provider_id: str, address: str | None) -> NodeOutputs:
        """A resource made or restarted. Issue 23: once per node created, without the frozen
        init's `object.__setattr__` per field (as `NodeInputs.from_json`)."""
        return become(_NodeOutputsSlots(provider_id, address), NodeOutputs)

    def to_json(self) -> JSON:
        if self.server is not None:
            return {"server": self.server}
        if self.provider_id is None:
            return {}
        return {"provider_id": self.provider_id, "address": self.address}


class _NodeOutputsSlots:
    """`NodeOutputs`' slots as `made` sets them (see `_NodeInputsSlots`; justified by
    `benchmarks/scale.py`'s `create-pg`)."""

    __slots__ = NodeOutputs.__slots__

    def __init__(self, provider_id: str | None, address: str | None) -> None:
        self.provider_id = provider_id
        self.address = address
        self.server = None


check_twin(_NodeOutputsSlots, NodeOutputs)


@final  # `running` builds exactly this class (issue 23)
@dataclass(frozen=True, slots=True)
class NodeUpdate:
    """What a node action changes on its node's row (None: leave the column alone)."""

    status: NodeStatus | None = None
    status_reason: str | None = None
    provider_id: str | None = None
    address: str | None = None
    health: str | None = None
    health_reason: str | None = None
    deleted_at: float | None = None
    clear_address: bool = False
    """Set `address` even to None (a resource that runs without one)."""

    @classmethod
    def running(cls, provider_id: str, address: str | None) -> NodeUpdate:
        """A node whose resource runs: new health checks start from UNKNOWN."""
        # Issue 23: once per node created; without the frozen init's `object.__setattr__`
        # per field (as `NodeInputs.from_json`), then frozen as any other `NodeUpdate`.
        running = _NodeUpdateSlots(
            NodeStatus.ACTIVE, "", provider_id, address, "UNKNOWN", "", None, True
        )
        return become(running, NodeUpdate)

    def change(self, node_id: str, now: float) -> NodeChange:
        """The store's write of this update on `node_id` at `now`."""

        def kept(value: T | None) -> T | Unset:
            return UNSET if value is None else value

        return NodeChange(
            node_id,
            now,
            status=kept(self.status),
            status_reason=kept(self.status_reason),
            provider_id=kept(self.provider_id),
            address=self.address if self.clear_address else kept(self.address),
            health=kept(self.health),
            health_reason=kept(self.health_reason),
            deleted_at=kept(self.deleted_at),
        )


class _NodeUpdateSlots:
    """`NodeUpdate`'s slots, every field a parameter (see `_NodeInputsSlots`; justified by
    `benchmarks/scale.py`'s `create-pg`)."""

    __slots__ = NodeUpdate.__slots__

    def __init__(
        self,
        status: NodeStatus | None,
        status_reason: str | None,
        provider_id: str | None,
        address: str | None,
        health: str | None,
        health_reason: str | None,
        deleted_at: float | None,
        clear_address: bool,
    ) -> None:
        self.status = status
        self.status_reason = status_reason
        self.provider_id = provider_id
        self.address = address
        self.health = health
        self.health_reason = health_reason
        self.deleted_at = deleted_at
        self.clear_address = clear_address


check_twin(_NodeUpdateSlots, NodeUpdate)


class Finish(enum.Enum):
    """What `finish_action` found."""

    PENDING = "pending"
    """Some children still run (or the action is no longer this engine's): look again later."""
    NEXT_STAGE = "next-stage"
    """A rolling update's batch is done: the next step is the rolling update's to take."""
    CLOSED = "closed"
    """The action was closed (SUCCEEDED, FAILED or CANCELLED)."""


# -- rolling updates ----------------------------------------------------------------------------


class RollingPhase(enum.StrEnum):
    PLAN = "plan"
    """The next batch is due to be planned."""
    RUN = "run"
    """The current batch's steps run."""
    GATE = "gate"
    """The current batch's new nodes are being probed until healthy (or the gate's time)."""
    PAUSE = "pause"
    """Waiting `pause_s` before the next batch."""


@dataclass(frozen=True, slots=True)
class RollingStage:
    """One batch of a rolling update, with its group's update policy."""

    group: str
    nodes: tuple[str, ...]
    retire_first: bool
    gate: bool
    gate_timeout_s: float
    pause_s: float
    threshold: int

    def to_json(self) -> JSON:
        return {
            "group": self.group,
            "nodes": list(self.nodes),
            "retire_first": self.retire_first,
            "gate": self.gate,
            "gate_timeout_s": self.gate_timeout_s,
            "pause_s": self.pause_s,
            "threshold": self.threshold,
        }

    @classmethod
    def from_json(cls, row: Mapping[str, Any]) -> RollingStage:
        return cls(
            group=str(row["group"]),
            nodes=tuple(str(n) for n in row["nodes"]),
            retire_first=bool(row["retire_first"]),
            gate=bool(row["gate"]),
            gate_timeout_s=float(row["gate_timeout_s"]),
            pause_s=float(row["pause_s"]),
            threshold=int(row["threshold"]),
        )


@dataclass(frozen=True, slots=True)
class RollingState:
    """Where a rolling update stands; kept in the action's outputs (`rolling`), so an engine
    that dies mid-update leaves it to the next one exactly where it was."""

    stages: tuple[RollingStage, ...]
    next: int = 0
    """How many batches were started (the current one is `stages[next - 1]`)."""
    phase: RollingPhase = RollingPhase.PLAN
    failed_before: int = 0
    """Failed steps before the current batch (its own failures are the difference)."""
    rollback: bool = False
    reason: str = ""
    """Why the update is rolling back."""
    gate_until: float = 0.0
    gate_next: float = 0.0
    resume_at: float = 0.0

    @property
    def current(self) -> RollingStage | None:
        return self.stages[self.next - 1] if self.next > 0 else None

    def to_json(self) -> JSON:
        out: JSON = {
            "stages": [s.to_json() for s in self.stages],
            "next": self.next,
            "phase": str(self.phase),
            "failed_before": self.failed_before,
            "rollback": self.rollback,
        }
        if self.reason:
            out["reason"] = self.reason
        for key in ("gate_until", "gate_next", "resume_at"):
            if getattr(self, key):
                out[key] = getattr(self, key)
        return out

    @classmethod
    def from_json(cls, row: Mapping[str, Any]) -> RollingState:
        return cls(
            stages=tuple(RollingStage.from_json(s) for s in row.get("stages") or ()),
            next=int(row.get("next", 0)),
            phase=RollingPhase(row.get("phase", RollingPhase.PLAN)),
            failed_before=int(row.get("failed_before", 0)),
            rollback=bool(row.get("rollback", False)),
            reason=str(row.get("reason") or ""),
            gate_until=float(row.get("gate_until", 0.0)),
            gate_next=float(row.get("gate_next", 0.0)),
            resume_at=float(row.get("resume_at", 0.0)),
        )


@dataclass(frozen=True, slots=True)
class ClusterOutputs:
    """What a cluster action records as it runs: planned (and the plan's counts), and the
    rolling update's state if it has one."""

    planned: bool = False
    plan: Mapping[str, int] = field(default_factory=dict)
    rolling: RollingState | None = None
    extra: JSON = field(default_factory=dict)
    """Keys other writers put there (kept as they are)."""

    def to_json(self) -> JSON:
        out: JSON = dict(self.extra)
        if self.planned:
            out["planned"] = True
            out["plan"] = dict(self.plan)
        if self.rolling is not None:
            out["rolling"] = self.rolling.to_json()
        return out

    @classmethod
    def from_json(cls, row: Mapping[str, Any]) -> ClusterOutputs:
        rolling = row.get("rolling")
        return cls(
            planned=bool(row.get("planned")),
            plan={str(k): int(v) for k, v in (row.get("plan") or {}).items()},
            rolling=RollingState.from_json(rolling) if isinstance(rolling, Mapping) else None,
            extra={k: v for k, v in row.items() if k not in ("planned", "plan", "rolling")},
        )
