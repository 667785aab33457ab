"""Admission under concurrency (issue 9, point 4): a 202 means "it fitted when accepted".

Many creates arrive at once on an inventory with room for a few; each admission counts what
accepted, not yet planned actions have reserved, under the placement lock, so exactly the ones
that fit are accepted and the rest are refused at the door (409) — on SQLite and PostgreSQL.
Before reservations every one of them was accepted and most then failed at planning."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest

import shoal.service.clusters as clusters_module
from shoal.api.errors import http_status
from shoal.clock import ManualClock
from shoal.model.catalogs import default_inventory
from shoal.model.inventory import Host, Inventory
from shoal.placement import PlacementResult, solve
from shoal.service.clusters import ClusterService, Submitted
from shoal.service.errors import Unplaceable
from shoal.store import clusters as cluster_repo
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


# -- the solve outside the placement lock (issue 23) ------------------------------------------

PAIR = """
name: %s
node_groups:
  - name: web
    profile: {type: server, flavor: m1.medium, image: cirros}
    count: 2
"""


class Solves:
    """`solve` as admission calls it, counted; `during` runs inside the first call (the
    guess, made without the placement lock)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, during: Callable[[], None] | None) -> None:
        self.calls = 0
        self.during = during
        monkeypatch.setattr(clusters_module, "solve", self)

    def __call__(self, *args: Any, **kw: Any) -> PlacementResult:
        self.calls += 1
        during, self.during = self.during, None
        if during is not None:
            during()
        return solve(*args, **kw)


def test_a_change_is_placed_once_and_not_under_the_placement_lock(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While one request's placement is being solved, another request takes the placement
    lock and is admitted (a solve under the lock would block it until the first committed);
    with nothing changed meanwhile, the first keeps its guess: one solve per request."""
    inv = default_inventory()
    service = ClusterService(db, lambda: inv, ManualClock(), lambda: None)
    done: list[Submitted] = []

    def rival() -> None:
        t = threading.Thread(target=lambda: done.append(service.create(ADMIN, PAIR % "rival")))
        t.start()
        t.join(60)  # a solve under the lock: the rival waits for it, and this times out
        assert done, "another admission waited for a placement being solved"

    solves = Solves(monkeypatch, rival)
    first = service.create(ADMIN, PAIR % "first")
    assert [s.cluster.name for s in done] == ["rival"] and first.cluster.name == "first"
    assert solves.calls == 2  # the first's guess (kept under the lock) and the rival's
    unlocked = Solves(monkeypatch, None)
    with db.transaction() as conn:
        cluster_repo.unlock(conn, first.cluster.id, first.action.id, 0.0)
    service.scale(ADMIN, "first", out=True, count=1, nodegroup="web")
    assert unlocked.calls == 1  # a change of an existing cluster: its guess kept too


def test_a_guess_overtaken_by_a_rival_is_placed_again_under_the_lock(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rival admitted between the guess and the lock takes three of the four places: the
    guess (two nodes) no longer fits, the request is placed again holding the lock and refused
    there, and no host holds more than its capacity (a guess kept blindly would)."""
    inv = tight()
    service = ClusterService(db, lambda: inv, ManualClock(), lambda: None)
    done: list[Submitted] = []
    three = PAIR.replace("count: 2", "count: 3")

    def rival() -> None:
        t = threading.Thread(target=lambda: done.append(service.create(ADMIN, three % "rival")))
        t.start()
        t.join(60)
        assert done

    solves = Solves(monkeypatch, rival)
    with pytest.raises(Unplaceable):
        service.create(ADMIN, PAIR % "first")
    assert [s.cluster.name for s in done] == ["rival"]
    assert solves.calls == 3  # the first's guess, the rival's, the first's again under the lock
    with db.reading() as conn:
        used = node_repo.used_capacity(conn)
    assert sum(d.vcpus for d in used.values()) == 6
    assert all(d.vcpus <= 4 for d in used.values())
