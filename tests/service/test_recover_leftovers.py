"""`recover` handles INIT leftovers (issue 9, point 3): nodes recorded by a plan whose create
never ran (left by an older Shoal, or a crash) are recovered by making them, whatever the health
policy says, and a cluster lacking declared nodes can be recovered though no node is in ERROR."""

from __future__ import annotations

from shoal.clock import ManualClock
from shoal.model.enums import ActionStatus, NodeKind, NodeStatus
from shoal.model.nodes import Demand
from shoal.store import actions as action_repo
from shoal.store import clusters as cluster_repo
from shoal.store import nodes as node_repo
from shoal.store.database import Database
from shoal.store.records import NewNode
from tests.engine.support import ADMIN, make_rig

DOC = """
name: shop
health: {check: provider, recovery: reboot}
node_groups:
  - name: web
    profile: {type: server, flavor: m1.tiny, image: cirros}
    count: 3
"""


def node(cluster_id: str, name: str, replica: int, status: NodeStatus) -> NewNode:
    return NewNode(
        id=f"n-{name}",
        project_id="admin",
        name=name,
        kind=NodeKind.SERVER,
        status=status,
        host="az1-host1",
        zone="az1",
        profile={},
        demand=Demand(vcpus=1, ram_mb=512, disk_gb=1),
        created_at=0.0,
        updated_at=0.0,
        cluster_id=cluster_id,
        group_name="web",
        replica=replica,
        provider_id="p-1" if status is NodeStatus.ACTIVE else None,
    )


def test_recover_makes_init_leftovers_and_missing_nodes(db: Database) -> None:
    clock = ManualClock()
    rig = make_rig(db, clock=clock)
    sub = rig.service.create(ADMIN, DOC)
    cid = sub.cluster.id
    with db.transaction() as conn:
        action_repo.set_status(conn, sub.action.id, ActionStatus.FAILED, clock.now())
        cluster_repo.unlock(conn, cid, sub.action.id, clock.now())
        # web-1 made, web-2 never made (INIT), web-3 not recorded at all.
        node_repo.insert_nodes(
            conn,
            [node(cid, "web-1", 1, NodeStatus.ACTIVE), node(cid, "web-2", 2, NodeStatus.INIT)],
        )
    again = rig.service.recover(ADMIN, "shop")
    repairs = again.action.inputs["repairs"]
    assert {"node": "web-2", "how": "recreate", "why": "requested"} in repairs
    assert any(r["how"] == "create" and "1 missing" in r["node"] for r in repairs)
    assert not any(r["node"] == "web-1" for r in repairs)
