"""Counts bounded before any per-node work, on every path a count can take (issue 9, point 1):
a create, a scale-out of a group with no max, a resize by percentage, a receiver's stored
params (at creation and again when triggered), the Senlin façade's exact capacity. Each is a
4xx with the error shape and a pointer, and the memory the refusal allocates stays flat
(measured by tracemalloc's peak, not by time). On SQLite and PostgreSQL, no engine running."""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable
from typing import Any

import pytest

from shoal.api.errors import http_status
from shoal.clock import ManualClock
from shoal.service.edits import Resize
from shoal.service.errors import Invalid, ServiceError, Unplaceable
from shoal.service.receivers import ReceiverService
from shoal.service.resize import Adjustment
from shoal.store import clusters as cluster_repo
from shoal.store import receivers as receiver_repo
from shoal.store.database import Database
from tests.engine.support import ADMIN, Rig, make_rig

PEAK_BYTES = 5 * 1024 * 1024

DOC = """
name: shop
node_groups:
  - name: web
    profile: {type: server, flavor: m1.tiny, image: cirros}
    count: %d
"""


def refused(call: Callable[[], Any]) -> ServiceError:
    """The refusal `call` answers, and that making it allocated next to nothing."""
    tracemalloc.start()
    try:
        with pytest.raises(ServiceError) as caught:
            call()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < PEAK_BYTES, f"refusing took {peak} bytes"
    e = caught.value
    assert 400 <= http_status(e) < 500
    assert e.body()["error"]["details"], "a refusal names the field at fault"
    return e


def created(db: Database) -> tuple[Rig, ManualClock]:
    clock = ManualClock()
    rig = make_rig(db, clock=clock)
    sub = rig.service.create(ADMIN, DOC % 2)
    with db.transaction() as conn:  # as if the creation had finished
        cluster_repo.unlock(conn, sub.cluster.id, sub.action.id, clock.now())
    return rig, clock


@pytest.mark.parametrize("count", [10**9, 10**30, 999_999, 50_000])
def test_a_huge_count_in_a_document_is_refused_at_once(db: Database, count: int) -> None:
    rig = make_rig(db)
    e = refused(lambda: rig.service.create(ADMIN, DOC % count))
    assert isinstance(e, Invalid)
    assert e.details[0]["path"] == "/node_groups/0/count"


def test_a_count_beyond_the_whole_inventory_is_unplaceable_at_once(db: Database) -> None:
    rig = make_rig(db)  # the default inventory: six hosts
    e = refused(lambda: rig.service.create(ADMIN, DOC % 9_000))
    assert isinstance(e, Unplaceable)
    assert "whole inventory" in e.message
    assert e.details[0]["path"] == "/node_groups/0/count"


def test_scale_out_of_a_group_without_max_is_bounded(db: Database) -> None:
    rig, _ = created(db)
    e = refused(lambda: rig.service.scale(ADMIN, "shop", out=True, count=10**9, nodegroup=None))
    assert e.details[0]["path"] == "/count"


@pytest.mark.parametrize("number", [1e12, 1e308, float("inf"), 10**400])
def test_resize_by_percentage_is_bounded(db: Database, number: float) -> None:
    rig, _ = created(db)
    e = refused(
        lambda: rig.service.resize(ADMIN, "shop", Resize(Adjustment.CHANGE_IN_PERCENTAGE, number))
    )
    assert isinstance(e, Invalid)
    assert e.details[0]["path"] == "/number"


def test_exact_capacity_of_a_billion_is_bounded(db: Database) -> None:
    """What the Senlin façade's `desired_capacity: 10^9` asks of the service."""
    rig, _ = created(db)
    e = refused(
        lambda: rig.service.resize(
            ADMIN, "shop", Resize(Adjustment.EXACT_CAPACITY, 10**9, strict=False)
        )
    )
    assert isinstance(e, Invalid)


@pytest.mark.parametrize(
    ("params", "pointer"),
    [
        ({"count": 10**9}, "/params/count"),
        ({"count": 900_000}, "/params/count"),
        ({"number": 10**400}, "/params/number"),
    ],
)
def test_a_receiver_with_a_huge_count_is_refused_at_creation(
    db: Database, params: dict[str, Any], pointer: str
) -> None:
    rig, _ = created(db)
    receivers = ReceiverService(rig.service)
    body = {"name": "grow", "cluster": "shop", "action": "scale_out", "params": params}
    e = refused(lambda: receivers.create(ADMIN, body))
    assert e.details[0]["path"] == pointer
    assert receivers.list(ADMIN) == []


def test_a_stored_huge_count_is_checked_again_when_triggered(db: Database) -> None:
    """A receiver stored before the bounds existed (or under looser ones)."""
    rig, clock = created(db)
    with db.transaction() as conn:
        cluster = cluster_repo.get_cluster(conn, "shop")
        assert cluster is not None
        receiver_repo.insert_receiver(
            conn,
            id="old-hook",
            project_id=cluster.project_id,
            cluster_id=cluster.id,
            name="old",
            action="scale_out",
            nodegroup="web",
            params={"count": 10**9},
            secret="s3cret",
            now=clock.now(),
        )
    receivers = ReceiverService(rig.service)
    refused(lambda: receivers.trigger("old-hook", "s3cret"))
    with db.reading() as conn:
        cluster = cluster_repo.get_cluster(conn, "shop")
        assert cluster is not None and cluster.document["node_groups"][0]["count"] == 2
        assert cluster.lock_action_id is None
