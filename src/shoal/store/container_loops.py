"""Containers of deployments that keep exiting (issue 36, item 3), per node: the manager
replaces a node's rows with what its provider last reported (only when that changed), and the
deployment views read a cluster's rows to show a deployment DEGRADED with the reason."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Connection, delete, insert, select

from shoal.model.restarts import ContainerLoop
from shoal.store.tables import container_loops

_t = container_loops.c
MAX_PER_NODE = 64
"""At most this many kept per node (a node with more reports the first ones)."""
MAX_OUTPUT = 2000


def replace(
    conn: Connection, node_id: str, cluster_id: str, loops: Sequence[ContainerLoop], now: float
) -> None:
    """The node's rows are now `loops` (none: the node's containers run steadily)."""
    conn.execute(delete(container_loops).where(_t.node_id == node_id))
    if not loops:
        return
    conn.execute(
        insert(container_loops),
        [
            {
                "node_id": node_id,
                "container": loop.container[:255],
                "cluster_id": cluster_id,
                "project": loop.project[:255],
                "exits": loop.exits,
                "exit_code": loop.exit_code,
                "output": loop.output[-MAX_OUTPUT:],
                "restart_at": loop.restart_at,
                "updated_at": now,
            }
            for loop in list({x.container: x for x in loops}.values())[:MAX_PER_NODE]
        ],
    )


def for_cluster(conn: Connection, cluster_id: str) -> dict[str, list[ContainerLoop]]:
    """The cluster's rows: node id -> its looping containers."""
    found: dict[str, list[ContainerLoop]] = {}
    q = select(
        _t.node_id, _t.container, _t.project, _t.exits, _t.exit_code, _t.output, _t.restart_at
    ).where(_t.cluster_id == cluster_id)
    for r in conn.execute(q.order_by(_t.node_id, _t.container)):
        found.setdefault(r[0], []).append(ContainerLoop(r[1], r[2], r[3], r[4], r[5], r[6]))
    return found


def for_node(conn: Connection, node_id: str) -> list[ContainerLoop]:
    q = select(_t.container, _t.project, _t.exits, _t.exit_code, _t.output, _t.restart_at).where(
        _t.node_id == node_id
    )
    return [ContainerLoop(*r) for r in conn.execute(q.order_by(_t.container))]


def forget_nodes(conn: Connection, node_ids: Sequence[str]) -> None:
    """Rows of nodes gone."""
    for i in range(0, len(node_ids), 500):
        conn.execute(delete(container_loops).where(_t.node_id.in_(node_ids[i : i + 500])))
