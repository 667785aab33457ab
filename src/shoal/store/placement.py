"""The placement lock: admission and planning read free capacity and claim it one at a time.

Both hold it for the rest of their transaction, so what one counts cannot change under it, and
they take it first, in one lock order, so the two never deadlock. The planner solves before it
takes the lock and, holding it, only checks its claims still fit (issue 23), so the lock is
held for work in O(hosts), not for a placement of 100,000 nodes.
"""

from __future__ import annotations

from sqlalchemy import Connection, select, update

from shoal.store.database import Database
from shoal.store.tables import placement_lock


def lock_placement(conn: Connection, db: Database, holder: str, now: float) -> None:
    """Hold the placement lock until `conn`'s transaction ends."""
    # On SQLite the transaction already holds the write lock (BEGIN IMMEDIATE).
    if not db.is_sqlite:
        conn.execute(select(placement_lock.c.id).where(placement_lock.c.id == 1).with_for_update())
    conn.execute(
        update(placement_lock).where(placement_lock.c.id == 1).values(holder=holder, updated_at=now)
    )
