"""Named leases: work that one engine at a time should do (health checks, reconciling).

(The engine's manager takes the "manager" lease; each engine making a cluster's networks takes
"networks:<cluster id>", engine/netlease.py. The SQL lives here, with the other tables.)

An engine holds a lease until `expires_at` and renews it while it works; when it dies, another
engine takes the lease over once it runs out. Acquisition is a compare-and-set, so two engines
never both believe they hold it.
"""

from __future__ import annotations

from sqlalchemy import delete, insert, or_, select, update
from sqlalchemy.exc import IntegrityError

from shoal.store.database import Database
from shoal.store.tables import leases


def acquire(db: Database, name: str, holder: str, now: float, ttl_s: float) -> bool:
    """Take or renew lease `name` for `holder`; False while another holder's lease runs."""
    with db.transaction() as conn:
        res = conn.execute(
            update(leases)
            .where(
                leases.c.name == name,
                or_(leases.c.holder == holder, leases.c.expires_at < now),
            )
            .values(holder=holder, expires_at=now + ttl_s)
        )
        if res.rowcount == 1:
            return True
        exists = conn.execute(select(leases.c.name).where(leases.c.name == name)).first()
        if exists is not None:
            return False
    try:
        with db.transaction() as conn:
            conn.execute(insert(leases).values(name=name, holder=holder, expires_at=now + ttl_s))
        return True
    except IntegrityError:
        return False


def release(db: Database, name: str, holder: str) -> None:
    with db.transaction() as conn:
        conn.execute(
            update(leases)
            .where(leases.c.name == name, leases.c.holder == holder)
            .values(holder=None, expires_at=0.0)
        )


def drop(db: Database, name: str, holder: str) -> None:
    """Release lease `name` and forget its row, for leases named after one object (a cluster's
    networks): one row per cluster ever made would otherwise stay. Only `holder`'s: a lease
    another engine took over after this one's ran out is left alone. Acquiring again inserts
    the row afresh (a race of two inserts is the primary key's to decide)."""
    with db.transaction() as conn:
        conn.execute(delete(leases).where(leases.c.name == name, leases.c.holder == holder))
