"""Live engines and the partitions of active management (issue 23: work that divides).

Every engine keeps a lease named `engine/<id>` alive with its heartbeat, so any engine can count
the live ones without a registry of its own. Active management is cut into `PARTITIONS` hash
ranges of cluster ids, each a lease `manager/<k>`: an engine aims at its fair share (the
partitions over the live engines, rounded up), takes free or expired partitions up to it, and
hands back what it holds beyond it, so an engine's death moves only its share and a new engine
takes one. Leases are compare-and-set updates on `leases`, like `store/leases.py`'s.
"""

from __future__ import annotations

import math
import zlib

from sqlalchemy import Connection, Float, Select, and_, bindparam, func, insert, or_, select, update
from sqlalchemy.exc import IntegrityError

from shoal.store.database import Database
from shoal.store.tables import leases

PARTITIONS = 64
"""Hash ranges of management: several per engine, so shares stay even up to ~20 engines."""
ENGINE_PREFIX = "engine/"
MANAGING_PREFIX = "managing/"
"""Engines that manage (an engine may run with `manage = false`): shares are counted over these."""
PARTITION_PREFIX = "manager/"
DEPLOYING_PREFIX = "deploying/"
"""Engines that run software deployments: the deployer's shares are counted over these."""
DEPLOYER_PREFIX = "deploy/"
"""The deployer's partitions (issue 23): the same hash ranges as management, leased apart, so
an engine that does not manage still decides deployments and the two move independently."""


def partition_of(cluster_id: str, partitions: int = PARTITIONS) -> int:
    """The partition managing `cluster_id` (stable across processes and restarts)."""
    return zlib.crc32(cluster_id.encode()) % partitions


def register(
    db: Database, engine_id: str, now: float, ttl_s: float, *, prefix: str = ENGINE_PREFIX
) -> None:
    """Say this engine is alive until `now + ttl_s` (renewed by its heartbeat)."""
    name = prefix + engine_id
    with db.transaction() as conn:
        res = conn.execute(
            update(leases)
            .where(leases.c.name == name)
            .values(holder=engine_id, expires_at=now + ttl_s)
        )
        if res.rowcount == 1:
            return
        try:
            with conn.begin_nested():
                conn.execute(
                    insert(leases).values(name=name, holder=engine_id, expires_at=now + ttl_s)
                )
        except IntegrityError:
            pass


def unregister(db: Database, engine_id: str) -> None:
    with db.transaction() as conn:
        conn.execute(
            update(leases)
            .where(
                leases.c.name.in_(
                    [
                        ENGINE_PREFIX + engine_id,
                        MANAGING_PREFIX + engine_id,
                        DEPLOYING_PREFIX + engine_id,
                    ]
                )
            )
            .values(holder=None, expires_at=0.0)
        )


def count_live(conn: Connection, now: float, *, prefix: str = ENGINE_PREFIX) -> int:
    """Engines whose registration has not run out (at least 1: the one asking is alive), read
    in the caller's open transaction (issue 23: a node claim's recount checked out a connection
    of its own, then another for the work it counts)."""
    q = _LIVE.get(prefix)
    if q is None:
        q = _LIVE[prefix] = select(func.count()).where(
            leases.c.name.startswith(prefix),
            leases.c.holder.is_not(None),
            leases.c.expires_at >= bindparam("now", type_=Float),
        )
    return max(1, int(conn.execute(q, {"now": now}).scalar_one()))


_LIVE: dict[str, Select[int]] = {}
"""`count_live`'s statement by prefix, built once."""


def fair_share(partitions: int, engines: int) -> int:
    return math.ceil(partitions / max(1, engines))


def balance(
    db: Database,
    holder: str,
    now: float,
    ttl_s: float,
    *,
    partitions: int = PARTITIONS,
    partition_prefix: str = PARTITION_PREFIX,
    member_prefix: str = MANAGING_PREFIX,
) -> frozenset[int]:
    """Renew the partitions `holder` has, take free ones up to its fair share, give back
    those beyond it; returns the partitions it holds now.

    Partitions are taken in a rotated order (starting at a point derived from the holder) so
    engines starting together do not all contend for partition 0 first. Management uses the
    defaults; the deployer its own prefixes (`DEPLOYER_PREFIX`, `DEPLOYING_PREFIX`)."""
    register(db, holder, now, ttl_s, prefix=member_prefix)
    names = [f"{partition_prefix}{k}" for k in range(partitions)]
    with db.transaction() as conn:
        share = fair_share(partitions, count_live(conn, now, prefix=member_prefix))
        rows = {
            r[0]: (r[1], float(r[2]))
            for r in conn.execute(
                select(leases.c.name, leases.c.holder, leases.c.expires_at).where(
                    leases.c.name.startswith(partition_prefix)
                )
            )
        }
        missing = [n for n in names if n not in rows]
        if missing:
            try:
                with conn.begin_nested():
                    conn.execute(
                        insert(leases),
                        [{"name": n, "holder": None, "expires_at": 0.0} for n in missing],
                    )
            except IntegrityError:
                pass  # another engine made them at the same moment
        # Ours even if it ran out meanwhile (a slow tick): nobody took it, so renewing it keeps
        # management where it was instead of shuffling partitions.
        mine = sorted(n for n, (h, _) in rows.items() if h == holder)
        extra = mine[share:]
        keep = mine[:share]
        if extra:
            conn.execute(
                update(leases)
                .where(leases.c.name.in_(extra), leases.c.holder == holder)
                .values(holder=None, expires_at=0.0)
            )
        if keep:
            conn.execute(
                update(leases)
                .where(leases.c.name.in_(keep), leases.c.holder == holder)
                .values(expires_at=now + ttl_s)
            )
    held = set(keep)
    want = share - len(held)
    if want > 0:
        start = zlib.crc32(holder.encode()) % partitions
        order = names[start:] + names[:start]
        free = [
            n
            for n in order
            if n not in held
            and (n not in rows or rows[n][0] is None or rows[n][1] < now or rows[n][0] == holder)
        ]
        for name in free[:want]:
            with db.transaction() as conn:
                res = conn.execute(
                    update(leases)
                    .where(
                        leases.c.name == name,
                        or_(
                            leases.c.holder.is_(None),
                            leases.c.holder == holder,
                            leases.c.expires_at < now,
                        ),
                    )
                    .values(holder=holder, expires_at=now + ttl_s)
                )
                if res.rowcount == 1:
                    held.add(name)
    return frozenset(int(n[len(partition_prefix) :]) for n in held)


def release_partitions(
    db: Database,
    holder: str,
    *,
    partition_prefix: str = PARTITION_PREFIX,
    member_prefix: str = MANAGING_PREFIX,
) -> None:
    """Hand back every partition at once (an engine stopping), and stop counting as one
    that manages (or deploys, with the deployer's prefixes)."""
    with db.transaction() as conn:
        conn.execute(
            update(leases)
            .where(
                or_(
                    and_(leases.c.name.startswith(partition_prefix), leases.c.holder == holder),
                    leases.c.name == member_prefix + holder,
                )
            )
            .values(holder=None, expires_at=0.0)
        )
