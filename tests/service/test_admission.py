"""Admission under concurrency (issue 9, point 4): a 202 means "it fitted when accepted".

Many creates arrive at once on an inventory with room for a few; each admission counts what
accepted, not yet planned actions have reserved, under the placement lock, so exactly the ones
that fit are accepted and the rest are refused at the door (409) — on SQLite and PostgreSQL.
Before reservations every one of them was accepted and most then failed at planning."""

from __future__ import annotations

import threading

from shoal.api.errors import http_status
from shoal.clock import ManualClock
from shoal.model.catalogs import default_inventory
from shoal.model.inventory import Host, Inventory
from shoal.service.clusters import ClusterService, Submitted
from shoal.service.errors import Unplaceable
from shoal.store import nodes as node_repo
from shoal.store.database import Database
from tests.engine.support import ADMIN

CREATES = 12
DOC = """
name: c%d
node_groups:
  - name: web
    profile: {type: server, flavor: m1.medium, image: cirros}
    count: 1
"""


def tight() -> Inventory:
    """Two hosts with room for two m1.medium (2 vCPUs) each: four single-node clusters."""
    base = default_inventory()
    hosts = tuple(Host(f"h{i}", "az1", 4, 16384, 400, 0) for i in (1, 2))
    return Inventory(hosts, base.flavors, base.images)


def test_concurrent_creates_on_a_tight_inventory_admit_exactly_what_fits(db: Database) -> None:
    inv = tight()
    service = ClusterService(db, lambda: inv, ManualClock(), lambda: None)
    start = threading.Barrier(CREATES)
    accepted: list[Submitted] = []
    refused: list[Unplaceable] = []
    other: list[BaseException] = []
    lock = threading.Lock()

    def one(i: int) -> None:
        start.wait()
        try:
            sub = service.create(ADMIN, DOC % i)
        except Unplaceable as e:
            with lock:
                refused.append(e)
        except BaseException as e:
            with lock:
                other.append(e)
        else:
            with lock:
                accepted.append(sub)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(CREATES)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not other, other
    assert len(accepted) == 4, [s.cluster.name for s in accepted]
    assert len(refused) == CREATES - 4
    assert all(http_status(e) == 409 for e in refused)
    with db.reading() as conn:
        used = node_repo.used_capacity(conn)
    # Reserved exactly to the hosts' capacity, never beyond.
    assert {h: d.vcpus for h, d in used.items()} == {"h1": 4, "h2": 4}
