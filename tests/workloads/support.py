"""What the workload tests share: an engine rig on `sim` driven by a ManualClock, and readers of
the replica rows, the events and the cluster's lock."""

from __future__ import annotations

from shoal.clock import ManualClock
from shoal.engine.nodework import RetryPolicy
from shoal.providers.sim.provider import SimProvider
from shoal.store import clusters as cluster_repo
from shoal.store import events as event_repo
from shoal.store import workloads as replica_repo
from shoal.store.database import Database
from shoal.store.workloads import ReplicaRow
from tests.engine.support import Rig, make_rig


def rig_for(db: Database, provider: SimProvider, clock: ManualClock) -> Rig:
    rig = make_rig(db, provider=provider, clock=clock, retry=RetryPolicy(attempts=1, backoff_s=0))
    assert rig.engine.manager is not None
    rig.engine.manager.reconcile_s = 1.0
    return rig


def rows(db: Database, cid: str) -> dict[str, ReplicaRow]:
    with db.reading() as conn:
        return replica_repo.load(conn, [cid])[cid]


def events(db: Database, cid: str) -> list[str]:
    with db.reading() as conn:
        return [e.message for e in event_repo.list_events(conn, None, cluster_id=cid)]


def settled(db: Database, cid: str) -> bool:
    with db.reading() as conn:
        c = cluster_repo.get_cluster(conn, cid)
    return c is not None and c.lock_action_id is None
