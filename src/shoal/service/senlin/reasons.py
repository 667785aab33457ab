"""The words Senlin's engine leaves in a cluster's and a node's `status_reason` (issue 38,
item 6).

After each operation that changes or checks its members, Senlin evaluates a cluster
(`Cluster.eval_status`): its status follows the count of ACTIVE nodes against min_size,
desired_capacity and max_size, and its reason names the operation —
`CLUSTER_CHECK: number of active nodes is equal or above desired_capacity (2).` Clients read
it: python-senlinclient's functional suite looks for CLUSTER_CHECK and CLUSTER_RECOVER there.
Shoal's engine leaves a settled cluster's reason empty (its own words are for trouble), so the
façade says Senlin's words when Shoal has none, from the cluster's last evaluated operation
and its nodes now. A node's are those of the last operation on it (`Check: Node is ACTIVE.`,
`Recover: Node is ACTIVE.`, `Creation succeeded`...): its own, or its cluster's check, which
Senlin runs as a check of every member. The real Senlin 16 of tests/senlin_live is the oracle
for the texts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from shoal.model.enums import ClusterStatus, NodeStatus
from shoal.service.senlin.sizes import bounds_of
from shoal.service.senlin.views import SENLIN_ACTION
from shoal.store.records import ClusterRecord, NodeRecord
from shoal.store.senlin_actions import Ended

EVALUATED = frozenset(
    {
        "CLUSTER_CREATE",
        "CLUSTER_UPDATE",
        "CLUSTER_RESIZE",
        "CLUSTER_SCALE_OUT",
        "CLUSTER_SCALE_IN",
        "CLUSTER_ADD_NODES",
        "CLUSTER_DEL_NODES",
        "CLUSTER_REPLACE_NODES",
        "CLUSTER_CHECK",
        "CLUSTER_RECOVER",
    }
)
"""The cluster operations after which Senlin evaluates a cluster (attaching, detaching or
updating a policy keeps the reason the last of these left)."""

SETTLED = frozenset({ClusterStatus.ACTIVE, ClusterStatus.WARNING, ClusterStatus.ERROR})


def senlin_name(a: Ended) -> str:
    return str(a.inputs.get(SENLIN_ACTION) or a.kind)


def last_evaluated(recent: Sequence[Ended]) -> Ended | None:
    """The newest evaluated operation among a cluster's actions (newest first)."""
    return next((a for a in recent if senlin_name(a) in EVALUATED), None)


def evaluated(operation: str, doc: Mapping[str, Any], nodes: Iterable[NodeRecord]) -> str:
    """Senlin's `eval_status` reason for `operation` over the cluster's live nodes now."""
    sizes = bounds_of(doc)
    active = sum(1 for n in nodes if n.status is NodeStatus.ACTIVE)
    if active < sizes.min_size:
        return f"{operation}: number of active nodes is below min_size ({sizes.min_size})."
    if active < sizes.desired:
        return f"{operation}: number of active nodes is below desired_capacity ({sizes.desired})."
    if sizes.max_size < 0 or active <= sizes.max_size:
        return (
            f"{operation}: number of active nodes is equal or above desired_capacity "
            f"({sizes.desired})."
        )
    return f"{operation}: number of active nodes is above max_size ({sizes.max_size})."


def cluster_reason(
    c: ClusterRecord, nodes: Iterable[NodeRecord], recent: Sequence[Ended]
) -> str | None:
    """The reason the façade shows: Shoal's own when it has one (its words for trouble), else
    Senlin's for a settled cluster that an operation evaluated, else none."""
    if c.status_reason or c.status not in SETTLED:
        return c.status_reason
    last = last_evaluated(recent)
    if last is None:
        return c.status_reason
    live = [n for n in nodes if n.status is not NodeStatus.DELETED]
    return evaluated(senlin_name(last), c.document, live)


def _node_words(a: Ended) -> str | None:
    """What Senlin's node leaves after the operation `a` succeeded on it."""
    name = senlin_name(a)
    if name in ("NODE_CHECK", "CLUSTER_CHECK"):
        return "Check: Node is ACTIVE."
    if name == "NODE_RECOVER":
        return "Recover: Node is ACTIVE." if a.inputs.get("check") else "Recovery succeeded"
    if name == "NODE_CREATE":
        return "Creation succeeded"
    if name == "NODE_UPDATE":
        return "Update succeeded"
    if name == "NODE_OPERATION":
        return f"Operation '{a.inputs.get('operation', '')}' succeeded"
    return None


def node_reason(n: NodeRecord, own: Ended | None, cluster_recent: Sequence[Ended]) -> str | None:
    """The reason the façade shows for a node: Shoal's own when it has one, else for an ACTIVE
    node the words of the newest operation on it (its own, or its cluster's check), else
    Senlin's `Creation succeeded`."""
    if n.status_reason or n.status is not NodeStatus.ACTIVE:
        return n.status_reason
    checked = next((a for a in cluster_recent if senlin_name(a) == "CLUSTER_CHECK"), None)
    if checked is not None and (n.created_at or 0) > checked.created_at:
        checked = None  # made after that check (a later resize's): Senlin checked it not
    done = [a for a in (own, checked) if a is not None and _node_words(a) is not None]
    if not done:
        return "Creation succeeded"
    return _node_words(max(done, key=lambda a: a.created_at))
