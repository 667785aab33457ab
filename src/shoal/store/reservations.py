"""Admission reservations: capacity an accepted, not yet planned action will take.

The service records them with the action, in the transaction that accepts it, under the
placement lock; `used_capacity` counts them next to node claims while their action has not
ended. The planner drops an action's reservations in the transaction that records its node
claims, so capacity is never counted twice; an action that ends unplanned stops counting at
once (the join on its status), whether or not its rows were removed yet.

A create too large to place in the request (issue 23) reserves on no host: one row on
`UNPLACED`, which counts in the project's quota usage and in the total free capacity later
admissions see, never on a host, until the planner places it.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Connection, delete, func, insert, select

from shoal.model.enums import ActionStatus
from shoal.model.nodes import Demand
from shoal.store.tables import actions, reservations

_LIVE = [ActionStatus.INIT, ActionStatus.READY, ActionStatus.RUNNING]

UNPLACED = ""
"""The host of a reservation not placed yet (no host is named ""): the key is part of the
table's primary key, so it cannot be NULL."""


@dataclass(frozen=True, slots=True)
class Reserved:
    """What one host is asked to hold for one action."""

    host: str
    nodes: int
    demand: Demand


def reserve(
    conn: Connection, action_id: str, cluster_id: str, project_id: str, held: list[Reserved]
) -> None:
    rows = [
        {
            "action_id": action_id,
            "host": r.host,
            "cluster_id": cluster_id,
            "project_id": project_id,
            "nodes": r.nodes,
            "vcpus": r.demand.vcpus,
            "ram_mb": r.demand.ram_mb,
            "disk_gb": r.demand.disk_gb,
            "volume_gb": r.demand.volume_gb,
        }
        for r in held
    ]
    if rows:
        conn.execute(insert(reservations), rows)


def release(conn: Connection, action_id: str) -> None:
    conn.execute(delete(reservations).where(reservations.c.action_id == action_id))


def reserved_by_host(conn: Connection, exclude_cluster: str | None = None) -> dict[str, Demand]:
    """Capacity reserved on each host by live actions (optionally leaving one cluster out)."""
    q = (
        select(
            reservations.c.host,
            func.sum(reservations.c.vcpus),
            func.sum(reservations.c.ram_mb),
            func.sum(reservations.c.disk_gb),
            func.sum(reservations.c.volume_gb),
        )
        .select_from(reservations.join(actions, actions.c.id == reservations.c.action_id))
        .where(actions.c.status.in_(_LIVE), reservations.c.host != UNPLACED)
        .group_by(reservations.c.host)
    )
    if exclude_cluster is not None:
        q = q.where(reservations.c.cluster_id != exclude_cluster)
    return {
        row[0]: Demand(int(row[1] or 0), int(row[2] or 0), int(row[3] or 0), int(row[4] or 0))
        for row in conn.execute(q)
    }


def reserved_by_project(
    conn: Connection, project_id: str, exclude_cluster: str | None = None
) -> tuple[int, Demand]:
    """Nodes and capacity a project's live actions have reserved."""
    q = (
        select(
            func.sum(reservations.c.nodes),
            func.sum(reservations.c.vcpus),
            func.sum(reservations.c.ram_mb),
            func.sum(reservations.c.disk_gb),
            func.sum(reservations.c.volume_gb),
        )
        .select_from(reservations.join(actions, actions.c.id == reservations.c.action_id))
        .where(actions.c.status.in_(_LIVE), reservations.c.project_id == project_id)
    )
    if exclude_cluster is not None:
        q = q.where(reservations.c.cluster_id != exclude_cluster)
    row = conn.execute(q).one()
    return int(row[0] or 0), Demand(
        int(row[1] or 0), int(row[2] or 0), int(row[3] or 0), int(row[4] or 0)
    )


def reserved_unplaced(conn: Connection) -> Demand:
    """Capacity live actions reserved on no host yet (creates their planner will place)."""
    q = (
        select(
            func.sum(reservations.c.vcpus),
            func.sum(reservations.c.ram_mb),
            func.sum(reservations.c.disk_gb),
            func.sum(reservations.c.volume_gb),
        )
        .select_from(reservations.join(actions, actions.c.id == reservations.c.action_id))
        .where(actions.c.status.in_(_LIVE), reservations.c.host == UNPLACED)
    )
    row = conn.execute(q).one()
    return Demand(int(row[0] or 0), int(row[1] or 0), int(row[2] or 0), int(row[3] or 0))
