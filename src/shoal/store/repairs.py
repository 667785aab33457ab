"""Repairs that did not change what they found, per node (read and written by the manager).

The manager's back-off and its "gave up, reported" mark lived in memory, so a restart (or a
new holder of the manager lease) started the loop over. Here they are rows: small, one per
node in lasting trouble, read in one query per tick.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import Connection, delete, insert, select

from shoal.store.tables import repair_attempts

_t = repair_attempts.c


@dataclass(frozen=True, slots=True)
class RepairAttempt:
    node_id: str
    cluster_id: str
    finding: str
    """How it was repaired and why ("recreate: its server is gone at the provider")."""
    generation: int
    """The cluster's document generation: a new document starts the count over."""
    attempts: int
    not_before: float
    reported: bool = False


def load(conn: Connection) -> dict[str, RepairAttempt]:
    """Every node's attempts, by node id."""
    rows = conn.execute(
        select(
            _t.node_id,
            _t.cluster_id,
            _t.finding,
            _t.generation,
            _t.attempts,
            _t.not_before,
            _t.reported,
        )
    )
    return {
        r[0]: RepairAttempt(r[0], r[1], r[2], int(r[3]), int(r[4]), float(r[5]), bool(r[6]))
        for r in rows
    }


def save(conn: Connection, attempts: Sequence[RepairAttempt], now: float) -> None:
    """Write these rows (made or replaced)."""
    if not attempts:
        return
    forget(conn, [a.node_id for a in attempts])
    conn.execute(
        insert(repair_attempts),
        [
            {
                "node_id": a.node_id,
                "cluster_id": a.cluster_id,
                "finding": a.finding,
                "generation": a.generation,
                "attempts": a.attempts,
                "not_before": a.not_before,
                "reported": a.reported,
                "updated_at": now,
            }
            for a in attempts
        ],
    )


def forget(conn: Connection, node_ids: Sequence[str]) -> None:
    """Drop these nodes' rows (the node is well again, or gone)."""
    if node_ids:
        conn.execute(delete(repair_attempts).where(_t.node_id.in_(list(node_ids))))
