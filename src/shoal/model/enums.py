"""The closed vocabularies of the cluster model, as string enums.

Strings in documents become these enums at the edge, so a typo can never travel inward as a
"status" or a "rule" the way string statuses did in Senlin.
"""

from enum import StrEnum


class NodeKind(StrEnum):
    """What a node is; each kind has its own profile type."""

    SERVER = "server"
    VOLUME = "volume"
    STACK = "stack"
    """A Senlin node of an `os.heat.stack` profile whose template makes no server or volume:
    it holds no capacity and no provider ever sees it (its create and delete touch nothing)."""


class Rule(StrEnum):
    """The placement rule of a grouping."""

    AFFINITY = "affinity"
    ANTI_AFFINITY = "anti-affinity"
    SOFT_AFFINITY = "soft-affinity"
    SOFT_ANTI_AFFINITY = "soft-anti-affinity"
    SPREAD = "spread"

    @property
    def is_hard(self) -> bool:
        return self in (Rule.AFFINITY, Rule.ANTI_AFFINITY, Rule.SPREAD)


class Scope(StrEnum):
    """The failure domain a grouping rule is about."""

    HOST = "host"
    ZONE = "zone"


class Objective(StrEnum):
    """What the solver optimises once every hard rule holds."""

    SPREAD = "spread"
    PACK = "pack"


class ClusterStatus(StrEnum):
    """A cluster's lifecycle, named as Senlin names it so a façade can pass it through."""

    INIT = "INIT"
    CREATING = "CREATING"
    ACTIVE = "ACTIVE"
    UPDATING = "UPDATING"
    RESIZING = "RESIZING"
    DELETING = "DELETING"
    RECOVERING = "RECOVERING"
    WARNING = "WARNING"
    ERROR = "ERROR"
    DELETED = "DELETED"


class Health(StrEnum):
    """What the last health checks said of a node."""

    UNKNOWN = "UNKNOWN"
    HEALTHY = "HEALTHY"
    UNHEALTHY = "UNHEALTHY"


class NodeStatus(StrEnum):
    """A node's lifecycle; WARNING and RECOVERING come from health management."""

    INIT = "INIT"
    CREATING = "CREATING"
    ACTIVE = "ACTIVE"
    UPDATING = "UPDATING"
    DELETING = "DELETING"
    WARNING = "WARNING"
    RECOVERING = "RECOVERING"
    ERROR = "ERROR"
    DELETED = "DELETED"


class ActionStatus(StrEnum):
    """INIT -> READY -> RUNNING -> SUCCEEDED | FAILED | CANCELLED."""

    INIT = "INIT"
    READY = "READY"
    RUNNING = "RUNNING"
    SUCCEEDED = "SUCCEEDED"
    FAILED = "FAILED"
    CANCELLED = "CANCELLED"

    @property
    def is_terminal(self) -> bool:
        return self in (ActionStatus.SUCCEEDED, ActionStatus.FAILED, ActionStatus.CANCELLED)


class ActionKind(StrEnum):
    """What an action does; cluster-level kinds plan, node-level kinds call a provider."""

    CLUSTER_CREATE = "CLUSTER_CREATE"
    CLUSTER_DELETE = "CLUSTER_DELETE"
    CLUSTER_UPDATE = "CLUSTER_UPDATE"
    CLUSTER_SCALE_OUT = "CLUSTER_SCALE_OUT"
    CLUSTER_SCALE_IN = "CLUSTER_SCALE_IN"
    CLUSTER_RESIZE = "CLUSTER_RESIZE"
    CLUSTER_ADD_NODES = "CLUSTER_ADD_NODES"
    CLUSTER_DEL_NODES = "CLUSTER_DEL_NODES"
    NODEGROUP_CREATE = "NODEGROUP_CREATE"
    NODEGROUP_UPDATE = "NODEGROUP_UPDATE"
    NODEGROUP_DELETE = "NODEGROUP_DELETE"
    CLUSTER_RECOVER = "CLUSTER_RECOVER"
    NODE_CREATE = "NODE_CREATE"
    NODE_DELETE = "NODE_DELETE"
    NODE_ATTACH = "NODE_ATTACH"
    NODE_REBOOT = "NODE_REBOOT"
    NODE_REBUILD = "NODE_REBUILD"
    BARRIER = "BARRIER"
    """A no-op child that completes when everything it waits on has: dependency ordering
    between node groups without an edge per pair of nodes."""
    NODE_DEPLOY = "NODE_DEPLOY"
    """One software deployment on one node (issue 11); claimed and run by the engine's
    deployer (`engine/software/`), not by the node or cluster loops."""

    @property
    def is_node_level(self) -> bool:
        return self in (
            ActionKind.NODE_CREATE,
            ActionKind.NODE_DELETE,
            ActionKind.NODE_ATTACH,
            ActionKind.NODE_REBOOT,
            ActionKind.NODE_REBUILD,
            ActionKind.BARRIER,
        )
